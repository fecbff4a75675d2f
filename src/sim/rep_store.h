/* Private: a replica store, rows of one size appended in order and read back by range,
 * held in memory up to a byte threshold and in an unlinked temporary file beyond it, so
 * that what a process keeps of every replica of its points does not hold its memory.
 * Nothing here is collective; one owner, no threads. */
#ifndef LBMC_REP_STORE_H
#define LBMC_REP_STORE_H

#include <stddef.h>

#include "lbmc/error.h"

/** Bytes a store holds in memory before it moves its rows to a file (4 MiB: about 8000
 *  rows of a one-pool point; past it the file costs a sequential write, and a sequential
 *  read per pass, from the page cache), unless the environment variable
 *  LBMC_REP_STORE_BYTES gives another count of bytes (0: every row in the file; tests
 *  force the file that way). */
#define LBMC_REP_STORE_BYTES     ((size_t)4 << 20)
#define LBMC_REP_STORE_BYTES_ENV "LBMC_REP_STORE_BYTES"

typedef struct lbmc_rep_store_ lbmc_rep_store;

/** The threshold into *bytes: LBMC_REP_STORE_BYTES, or the environment's (a program
 *  checks it before it computes anything). Errors: LBMC_ERR_ARG (not a count of bytes,
 *  naming the variable and its value). */
lbmc_err lbmc_rep_store_threshold(size_t *bytes);

/** A store of rows of `row_bytes` (> 0) bytes, none yet. The file, when it comes, is
 *  created unlinked (O_TMPFILE, or mkstemp then unlink) in $TMPDIR or /tmp: nothing to
 *  remove after a crash, no clash between runs. Errors: LBMC_ERR_MEMORY, LBMC_ERR_ARG
 *  (LBMC_REP_STORE_BYTES not a count of bytes, naming it). */
lbmc_err lbmc_rep_store_create(size_t row_bytes, lbmc_rep_store **s);
/** Free the store and close its file (NULL: nothing); *s becomes NULL. */
void lbmc_rep_store_destroy(lbmc_rep_store **s);
/** Rows appended and not truncated away. */
long lbmc_rep_store_rows(const lbmc_rep_store *s);
/** Bytes of one row. */
size_t lbmc_rep_store_row_bytes(const lbmc_rep_store *s);
/** Bytes the store holds in memory (its rows while in memory, else its write buffer). */
size_t lbmc_rep_store_held(const lbmc_rep_store *s);
/** 1 once the rows are in the file. */
int lbmc_rep_store_spilled(const lbmc_rep_store *s);
/** Append `count` rows (count x row_bytes bytes at rows) after the last. Errors:
 *  LBMC_ERR_MEMORY, LBMC_ERR_FILE (the system error: "No space left on device"). */
lbmc_err lbmc_rep_store_append(lbmc_rep_store *s, const void *rows, long count);
/** Drop every row from `rows` on (rows <= lbmc_rep_store_rows): the next append goes
 *  there. */
void lbmc_rep_store_truncate(lbmc_rep_store *s, long rows);
/** Rows first .. first + count - 1 into out (count x row_bytes bytes). Errors:
 *  LBMC_ERR_INTERNAL (a row not in the store), LBMC_ERR_FILE. */
lbmc_err lbmc_rep_store_read(lbmc_rep_store *s, long first, long count, void *out);
/** Bytes off .. off + bytes - 1 of each of rows first .. first + count - 1 into out
 *  (count x bytes bytes). Errors: LBMC_ERR_INTERNAL, LBMC_ERR_FILE. */
lbmc_err lbmc_rep_store_read_part(lbmc_rep_store *s, long first, long count, size_t off,
                                  size_t bytes, void *out);
/** Rows first .. first + count - 1 where the store holds them in memory (not spilled,
 *  and in range): a pointer valid until the next append or truncate; else NULL (read
 *  them). */
const void *lbmc_rep_store_peek(const lbmc_rep_store *s, long first, long count);
/** Replace rows first .. first + count - 1 (already in the store) by count rows from
 *  rows. Errors: LBMC_ERR_INTERNAL, LBMC_ERR_FILE. */
lbmc_err lbmc_rep_store_write(lbmc_rep_store *s, long first, long count, const void *rows);

#endif
