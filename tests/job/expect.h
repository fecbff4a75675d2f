/* The C tests of job files (and tests/run/pace_fit.c): EXPECT(cond) counts a failed
 * condition in `failures` and names it on stderr; main returns non-zero when any failed. */
#ifndef LBMC_TEST_EXPECT_H
#define LBMC_TEST_EXPECT_H

#include <stdio.h>

static int failures = 0;

#define EXPECT(cond)                                                                               \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                              \
      failures++;                                                                                  \
    }                                                                                              \
  } while (0)

#endif
