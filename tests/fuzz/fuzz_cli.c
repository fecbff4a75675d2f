/* Fuzz target: the --pools and --service parsers of lbmc sim on arbitrary text. The
 * input is "POOLS\nSERVICE" (the first line is the --pools value, the rest the
 * --service value, split at ';' into one distribution per pool as lbmc sim does);
 * both are parsed, then a model is set up from them. The first line is also read as
 * a number and as a shard by lbmc/check.h, whose results must hold together (an
 * integer is a real of the same value; no accepted real overflows or underflows;
 * accepted pools and shards are in range; an accepted phase-type law is a probability
 * vector and a sub-generator with mean 1, and reads back from its canonical text). A clean error is
 * fine; a crash, a broken invariant (trap), a sanitizer finding or a leak is a bug. Built with
 * libFuzzer by tests/fuzz/run.sh, and with tests/fuzz/replay.c as a plain program that the test
 * suite runs on the saved inputs of tests/fuzz/inputs/cli/. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "lbmc/check.h"
#include "lbmc/model.h"
#include "lbmc/service.h"

#define FUZZ_REQUIRE(cond)                                                                         \
  do {                                                                                             \
    if (!(cond)) __builtin_trap();                                                                 \
  } while (0)

/* The number readers of lbmc/check.h on one text: consistent verdicts and values. */
static void fuzz_numbers(const char *text)
{
  double r = 0;
  long l = 0, i = 0, k = 0;
  int real_ok = lbmc_parse_real("x", text, &r) == LBMC_SUCCESS;
  int long_ok = lbmc_parse_long("x", text, &l) == LBMC_SUCCESS;
  if (real_ok) FUZZ_REQUIRE(isfinite(r) && (r == 0 || fabs(r) >= DBL_MIN));
  if (long_ok) FUZZ_REQUIRE(real_ok && (double)l == r);
  if (lbmc_parse_shard("x", text, &i, &k) == LBMC_SUCCESS) FUZZ_REQUIRE(1 <= i && i <= k);
}

/* Accepted pools are in range. */
static void fuzz_check_pools(int J, const double *beta, const double *mu, const long *buffer)
{
  FUZZ_REQUIRE(J >= 1 && J <= LBMC_MAX_POOLS);
  for (int j = 0; j < J; j++)
    FUZZ_REQUIRE(beta[j] > 0 && beta[j] <= 1 && isfinite(mu[j]) && mu[j] > 0 &&
                 (buffer[j] >= 1 || buffer[j] == LBMC_BUFFER_INF));
}

/* An accepted phase-type law holds together: alpha a distribution, T a sub-generator
 * with exit rates -T 1, mean remaining requirements h > 0 with alpha h = 1; a law of at
 * most 10 phases (its canonical text always exact) reads back from its text as the same
 * law. */
static void fuzz_check_service(const lbmc_service *s)
{
  const double *alpha, *T, *exit, *h;
  const int m = lbmc_service_ph(s, &alpha, &T);
  double sum = 0, mean = 0;
  lbmc_service again;
  FUZZ_REQUIRE(m >= 0 && m <= LBMC_PH_MAX_PHASES && strlen(s->text) < sizeof s->text);
  FUZZ_REQUIRE(isfinite(s->scv) || s->kind == LBMC_SERVICE_LOMAX);
  if (m == 0) return;
  exit = lbmc_service_ph_exit(s);
  h = lbmc_service_ph_residual(s);
  for (int i = 0; i < m; i++) {
    double row = 0;
    FUZZ_REQUIRE(alpha[i] >= 0 && T[i * m + i] < 0 && exit[i] >= 0 && isfinite(h[i]) && h[i] > 0);
    for (int k = 0; k < m; k++) {
      FUZZ_REQUIRE(k == i || T[i * m + k] >= 0);
      row += T[i * m + k];
    }
    FUZZ_REQUIRE(row <= 1e-12 * -T[i * m + i]);
    sum += alpha[i];
    mean += alpha[i] * h[i];
  }
  FUZZ_REQUIRE(fabs(sum - 1) <= 1e-12 && fabs(mean - 1) <= 1e-9);
  if ((s->kind == LBMC_SERVICE_PH || s->kind == LBMC_SERVICE_COXIAN) && m <= 10)
    FUZZ_REQUIRE(lbmc_service_parse("--service", s->text, &again) == LBMC_SUCCESS &&
                 lbmc_service_equal(s, &again) && strcmp(s->text, again.text) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Each ';'-separated distribution of text for pools 0..J-1 (or one for all). */
static void fuzz_services(char *text, int J, lbmc_model *m)
{
  char *save = NULL;
  int j = 0;
  lbmc_service svc;
  if (!strchr(text, ';')) {
    if (lbmc_service_parse("--service", text, &svc) == LBMC_SUCCESS) {
      fuzz_check_service(&svc);
      if (m) (void)lbmc_model_set_service(m, -1, &svc);
    }
    return;
  }
  for (char *tok = strtok_r(text, ";", &save); tok; tok = strtok_r(NULL, ";", &save), j++)
    if (lbmc_service_parse("--service: pool", tok, &svc) == LBMC_SUCCESS) {
      fuzz_check_service(&svc);
      if (m && j < J) (void)lbmc_model_set_service(m, j, &svc);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *text = malloc(size + 1), *service;
  double beta[LBMC_MAX_POOLS], mu[LBMC_MAX_POOLS];
  long buffer[LBMC_MAX_POOLS];
  int J = 0;
  lbmc_model *m = NULL;
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  service = strchr(text, '\n');
  if (service) *service++ = '\0';
  fuzz_numbers(text);
  if (lbmc_cli_parse_pools("--pools", text, &J, beta, mu, buffer) == LBMC_SUCCESS) {
    fuzz_check_pools(J, beta, mu, buffer);
    if (lbmc_model_create(&m) == LBMC_SUCCESS) {
      lbmc_model_set_n(m, 100);
      lbmc_model_set_lambda(m, 0.5);
      if (lbmc_model_set_pools(m, J, beta, mu, buffer) != LBMC_SUCCESS) lbmc_model_destroy(&m);
    }
  }
  if (service) fuzz_services(service, J, m);
  if (m) (void)lbmc_model_setup(m);
  lbmc_model_destroy(&m);
  free(text);
  return 0;
}
