/* The replica store (src/sim/rep_store.h): rows come back as appended, in memory and in
 * its file, across the move from one to the other, after a rewrite and a truncation; the
 * memory it holds stays the write buffer however many rows go to its file; the threshold's
 * environment variable is checked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/rep_store.h"
#include "unit.h"

#define ROW 24 /* bytes: odd rows (3 doubles' worth) of a recognisable pattern */

/* Row r's bytes, a function of r and the byte's place (version v: rewritten rows). */
static void row_of(long r, int v, unsigned char *row)
{
  for (int b = 0; b < ROW; b++) row[b] = (unsigned char)(r * 31 + b * 7 + v * 101);
}

/* rows first .. first + count - 1 read back equal row_of(r, v(r)); v: 0, or 1 in [w0, w1). */
static int rows_equal(lbmc_rep_store *s, long first, long count, long w0, long w1)
{
  unsigned char *got = malloc((size_t)count * ROW + 1), want[ROW];
  int ok = got && lbmc_rep_store_read(s, first, count, got) == LBMC_SUCCESS;
  for (long r = 0; ok && r < count; r++) {
    row_of(first + r, first + r >= w0 && first + r < w1, want);
    ok = memcmp(got + r * ROW, want, ROW) == 0;
  }
  free(got);
  return ok;
}

/* Append N rows in pieces of 1 to 997, then read, rewrite, read parts and truncate, with
 * the threshold `limit` ("": the default); spilled: whether the rows must be in the file
 * at the end. */
static void exercise(const char *limit, long N, int spilled)
{
  lbmc_rep_store *s = NULL;
  unsigned char *rows = malloc((size_t)N * ROW), part[2 * 8];
  long at = 0, k = 1;
  if (*limit)
    setenv(LBMC_REP_STORE_BYTES_ENV, limit, 1);
  else
    unsetenv(LBMC_REP_STORE_BYTES_ENV);
  CU_ASSERT_FATAL(rows && lbmc_rep_store_create(ROW, &s) == LBMC_SUCCESS);
  for (long r = 0; r < N; r++) row_of(r, 0, rows + r * ROW);
  while (at < N) { /* pieces of growing size: rows cross the write buffer's edges */
    const long n = N - at < k ? N - at : k;
    CU_ASSERT_EQUAL_FATAL(lbmc_rep_store_append(s, rows + at * ROW, n), LBMC_SUCCESS);
    at += n, k = k * 3 % 997 + 1;
  }
  UT_CHECK(lbmc_rep_store_rows(s) == N, "%s: %ld rows, not %ld", limit, lbmc_rep_store_rows(s), N);
  UT_CHECK(lbmc_rep_store_spilled(s) == spilled, "%s: spilled %d", limit,
           lbmc_rep_store_spilled(s));
  UT_CHECK(rows_equal(s, 0, N, 0, 0), "%s: the rows read back differ", limit);
  UT_CHECK(rows_equal(s, N / 3, N / 5, 0, 0), "%s: a range read back differs", limit);
  /* a rewrite of rows N/4 .. N/2 - 1 */
  for (long r = N / 4; r < N / 2; r++) row_of(r, 1, rows + r * ROW);
  CU_ASSERT_EQUAL(lbmc_rep_store_write(s, N / 4, N / 2 - N / 4, rows + N / 4 * ROW), LBMC_SUCCESS);
  UT_CHECK(rows_equal(s, 0, N, N / 4, N / 2), "%s: the rows after a rewrite differ", limit);
  /* bytes 8 .. 15 of two rows */
  CU_ASSERT_EQUAL(lbmc_rep_store_read_part(s, N / 2 - 1, 2, 8, 8, part), LBMC_SUCCESS);
  UT_CHECK(memcmp(part, rows + (N / 2 - 1) * ROW + 8, 8) == 0 &&
               memcmp(part + 8, rows + (N / 2) * ROW + 8, 8) == 0,
           "%s: parts of rows differ", limit);
  /* truncated to N/3 rows, then the last N - N/3 appended again (version 0) */
  lbmc_rep_store_truncate(s, N / 3);
  UT_CHECK(lbmc_rep_store_rows(s) == N / 3, "%s: truncated to %ld rows", limit,
           lbmc_rep_store_rows(s));
  for (long r = N / 3; r < N; r++) row_of(r, 0, rows + r * ROW);
  CU_ASSERT_EQUAL(lbmc_rep_store_append(s, rows + N / 3 * ROW, N - N / 3), LBMC_SUCCESS);
  UT_CHECK(rows_equal(s, 0, N, N / 4, N / 3), "%s: rows after truncation differ", limit);
  /* the control: a row past the last is an error, not garbage */
  CU_ASSERT_EQUAL(lbmc_rep_store_read(s, N - 1, 2, rows), LBMC_ERR_INTERNAL);
  if (spilled) /* the memory held: the write buffer, whatever N */
    UT_CHECK(lbmc_rep_store_held(s) <= (size_t)300 << 10, "%s: %zu bytes held for %ld rows", limit,
             lbmc_rep_store_held(s), N);
  else
    UT_CHECK(lbmc_rep_store_held(s) >= (size_t)N * ROW, "%s: %zu bytes held for %ld rows", limit,
             lbmc_rep_store_held(s), N);
  lbmc_rep_store_destroy(&s);
  CU_ASSERT_PTR_NULL(s);
  unsetenv(LBMC_REP_STORE_BYTES_ENV);
  free(rows);
}

static void test_rep_store_memory(void) { exercise("", 20000, 0); }
static void test_rep_store_file(void) { exercise("0", 100000, 1); }
static void test_rep_store_crossing(void) { exercise("1000", 20000, 1); } /* 41 rows, then file */

static void test_rep_store_env(void)
{
  static const char *const bad[] = {"12x", "-1", "lots", "+5", "99999999999999999999999"};
  lbmc_rep_store *s = NULL;
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    setenv(LBMC_REP_STORE_BYTES_ENV, bad[i], 1);
    UT_CHECK(lbmc_rep_store_create(ROW, &s) == LBMC_ERR_ARG && !s, "%s=%s accepted",
             LBMC_REP_STORE_BYTES_ENV, bad[i]);
  }
  unsetenv(LBMC_REP_STORE_BYTES_ENV);
}

int ut_register_rep_store(void)
{
  static const ut_test tests[] = {{"replica store: in memory", test_rep_store_memory},
                                  {"replica store: in its file", test_rep_store_file},
                                  {"replica store: memory then file", test_rep_store_crossing},
                                  {"replica store: threshold variable", test_rep_store_env},
                                  {NULL, NULL}};
  return ut_add_suite("rep_store", tests);
}
