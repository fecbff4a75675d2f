/* The error handler (lbmc/error.h): print mode writes "lbmc: error: <message>" to stderr
 * and keeps the message; store mode keeps it and writes nothing; the mode and the last
 * error belong to the thread that raised it. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lbmc/error.h"
#include "unit.h"

/* What stderr receives while LBMC_ERROR(code, "%s %d", text, number) runs: into out[len]. */
static lbmc_err ut_raise_captured(lbmc_err code, const char *text, int number, char *out,
                                  size_t len)
{
  FILE *tmp = tmpfile();
  int saved;
  size_t got = 0;
  lbmc_err err;
  out[0] = '\0';
  if (!tmp) return LBMC_ERR_FILE;
  fflush(stderr);
  saved = dup(STDERR_FILENO);
  dup2(fileno(tmp), STDERR_FILENO);
  err = LBMC_ERROR(code, "%s %d", text, number);
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  rewind(tmp);
  got = fread(out, 1, len - 1, tmp);
  out[got] = '\0';
  fclose(tmp);
  return err;
}

static void test_error_print_mode(void)
{
  char said[256];
  const lbmc_error_mode was = lbmc_error_set_mode(LBMC_ERRORS_PRINT);
  lbmc_error_clear();
  UT_CHECK(lbmc_error_last() == LBMC_SUCCESS && strcmp(lbmc_error_message(), "") == 0,
           "after clear: code %d, message '%s'", lbmc_error_last(), lbmc_error_message());
  UT_CHECK(ut_raise_captured(LBMC_ERR_ARG, "bad value", 7, said, sizeof said) == LBMC_ERR_ARG,
           "LBMC_ERROR returns its code");
  UT_CHECK(strcmp(said, "lbmc: error: bad value 7\n") == 0, "print mode wrote '%s'", said);
  UT_CHECK(strcmp(lbmc_error_message(), "bad value 7") == 0 && lbmc_error_last() == LBMC_ERR_ARG,
           "print mode keeps the message too: '%s' (code %d)", lbmc_error_message(),
           lbmc_error_last());
  lbmc_error_set_mode(was);
}

static void test_error_store_mode(void)
{
  char said[256];
  const lbmc_error_mode was = lbmc_error_set_mode(LBMC_ERRORS_STORE);
  UT_CHECK(ut_raise_captured(LBMC_ERR_PARSE, "x.yaml:3: not YAML", 3, said, sizeof said) ==
               LBMC_ERR_PARSE,
           "LBMC_ERROR returns its code in store mode");
  UT_CHECK(said[0] == '\0', "store mode printed '%s'", said);
  UT_CHECK(strcmp(lbmc_error_message(), "x.yaml:3: not YAML 3") == 0 &&
               lbmc_error_last() == LBMC_ERR_PARSE,
           "store mode keeps '%s' (code %d)", lbmc_error_message(), lbmc_error_last());
  UT_CHECK(lbmc_error_set_mode(LBMC_ERRORS_PRINT) == LBMC_ERRORS_STORE,
           "set_mode returns the mode it replaces");
  lbmc_error_set_mode(was);
  lbmc_error_clear();
  UT_CHECK(lbmc_error_last() == LBMC_SUCCESS && lbmc_error_message()[0] == '\0',
           "clear forgets the error");
}

/* A long message is kept cut, never overflowing; printed whole in print mode. */
static void test_error_long_message(void)
{
  static char text[5000], said[6000];
  const lbmc_error_mode was = lbmc_error_set_mode(LBMC_ERRORS_PRINT);
  memset(text, 'a', sizeof text - 1);
  text[sizeof text - 1] = '\0';
  ut_raise_captured(LBMC_ERR_LIMIT, text, 1, said, sizeof said);
  UT_CHECK(strlen(said) == strlen("lbmc: error: ") + sizeof text - 1 + 2 + 1,
           "print mode wrote %zu bytes", strlen(said));
  UT_CHECK(strlen(lbmc_error_message()) == 2047, "kept %zu bytes", strlen(lbmc_error_message()));
  lbmc_error_set_mode(was);
  lbmc_error_clear();
}

static void *ut_error_thread(void *arg)
{
  int *ok = arg;
  /* a new thread starts in print mode (the default) with no error, whatever the main
   * thread did */
  ok[0] = lbmc_error_last() == LBMC_SUCCESS &&
          lbmc_error_set_mode(LBMC_ERRORS_STORE) == LBMC_ERRORS_PRINT;
  LBMC_ERROR(LBMC_ERR_FILE, "in the thread");
  ok[1] = strcmp(lbmc_error_message(), "in the thread") == 0;
  return NULL;
}

static void test_error_per_thread(void)
{
  pthread_t t;
  int ok[2] = {0, 0};
  const lbmc_error_mode was = lbmc_error_set_mode(LBMC_ERRORS_STORE);
  LBMC_ERROR(LBMC_ERR_ARG, "in the main thread");
  UT_CHECK(pthread_create(&t, NULL, ut_error_thread, ok) == 0, "pthread_create");
  pthread_join(t, NULL);
  UT_CHECK(ok[0] && ok[1], "the thread's own state: fresh %d, its message %d", ok[0], ok[1]);
  UT_CHECK(strcmp(lbmc_error_message(), "in the main thread") == 0 &&
               lbmc_error_last() == LBMC_ERR_ARG,
           "the main thread's error is its own: '%s'", lbmc_error_message());
  lbmc_error_set_mode(was);
  lbmc_error_clear();
}

int ut_register_error(void)
{
  CU_pSuite s = CU_add_suite("error", NULL, NULL);
  if (!s) return -1;
  if (!CU_add_test(s, "print mode prints and keeps", test_error_print_mode) ||
      !CU_add_test(s, "store mode keeps, prints nothing", test_error_store_mode) ||
      !CU_add_test(s, "a long message is kept cut", test_error_long_message) ||
      !CU_add_test(s, "mode and last error per thread", test_error_per_thread))
    return -1;
  return 0;
}
