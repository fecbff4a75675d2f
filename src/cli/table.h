/* Private: a table of cells (numbers, integers, text, or nothing) printed as an aligned
 * text table, as CSV (RFC 4180, loadable in pandas and R without cleaning) or as JSON
 * (an array of objects). lbmc info builds its views of a results file as tables (its
 * tidy rows in info_rows.c; further views, e.g. paired comparisons, likewise), so that
 * every view has the three formats. */
#ifndef LBMC_TABLE_H
#define LBMC_TABLE_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "lbmc/error.h"

typedef enum { LBMC_FORMAT_TABLE, LBMC_FORMAT_CSV, LBMC_FORMAT_JSON } lbmc_format;

/** Kinds of cell: nothing (not applicable: "-" in text, empty in CSV, null in JSON),
 *  an integer, a real (NaN: "nan" in text, "NaN" in CSV, null in JSON), a text. */
typedef enum { LBMC_CELL_NONE, LBMC_CELL_INT, LBMC_CELL_REAL, LBMC_CELL_TEXT } lbmc_cell_kind;

typedef struct {
  lbmc_cell_kind kind;
  long i;
  double x;
  char *s; /* owned by the table */
} lbmc_cell;

/** A column: its name, the significant digits of its reals in the text form (0: 6),
 *  and whether the text form leaves it out (it stays in CSV and JSON). */
typedef struct {
  char *name;
  int digits;
  int hidden;
} lbmc_column;

typedef struct {
  int ncols;
  lbmc_column *col;
  long nrows, cap;
  lbmc_cell *cell; /* nrows x ncols, row-major */
} lbmc_table;

/** A table of ncols columns named names[0..ncols) and no rows; destroy with
 *  lbmc_table_destroy. Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_table_create(int ncols, const char *const *names, lbmc_table **t);
void lbmc_table_destroy(lbmc_table **t);
/** Append a row of empty cells (LBMC_CELL_NONE). Errors: LBMC_ERR_MEMORY. */
lbmc_err lbmc_table_add_row(lbmc_table *t);
/** Set cell `col` of the last row (text copied). Errors: LBMC_ERR_MEMORY (text). */
void lbmc_table_int(lbmc_table *t, int col, long v);
void lbmc_table_real(lbmc_table *t, int col, double v);
lbmc_err lbmc_table_text(lbmc_table *t, int col, const char *s);
/** Index of the column named `name`, or -1. */
int lbmc_table_column(const lbmc_table *t, const char *name);

/** Characters of a line of the text form (columns not hidden, two blanks apart). */
size_t lbmc_table_width(const lbmc_table *t);
/** Print t in format fmt: text (a header line, then aligned rows: numbers right, text
 *  left), CSV (a header line; text quoted when it holds a comma, quote or line break;
 *  reals with the fewest of 15, 16 or 17 digits that read back exactly) or JSON (an array of
 * objects, one per row). */
void lbmc_table_print(FILE *f, const lbmc_table *t, lbmc_format fmt);
/** The rows as a JSON array of objects (column name: value; none and NaN as null);
 *  the caller owns it. */
json_t *lbmc_table_json(const lbmc_table *t);
/** Print a JSON value (indented, keys in order, reals with 17 digits) and release it. */
void lbmc_json_print(FILE *f, json_t *value);
/** Print text as lines of at most `width` characters (0: no limit), broken at blanks,
 *  the first line after `first` (which ends with its own blank), the others after
 *  `indent` blanks. */
void lbmc_print_wrapped(FILE *f, const char *first, int indent, const char *text, int width);

#endif
