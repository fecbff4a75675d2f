/* Helpers the commands of the lbmc program share (cli.h): the --pools list, the model
 * as text (from its description, lbmc_model_describe), the table of estimates and the
 * list of policies (read from the policy registry, src/policies/registry.h). */
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "../policies/registry.h"
#include "cli.h"
#include "lbmc/check.h"
#include "lbmc/engines.h"
#include "lbmc/metrics.h"

lbmc_err lbmc_cli_parse_pools(const char *where, const char *text, int *J, double *beta, double *mu,
                              long *buffer)
{
  char buf[4096], *save = NULL, *tok;
  int j = 0;
  if (!text || strlen(text) >= sizeof buf)
    return LBMC_ERROR(LBMC_ERR_ARG, "%s: a list of pools beta:mu:buffer is required", where);
  strcpy(buf, text);
  for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    char *f[3], *p = tok, key[96], orig[256];
    int nf = 0;
    snprintf(orig, sizeof orig, "%s", tok);
    while (nf < 3 && p) {
      f[nf++] = p;
      p = strchr(p, ':');
      if (p) *p++ = '\0';
    }
    if (nf != 3 || p)
      return LBMC_ERROR(LBMC_ERR_ARG,
                        "%s: pool %d '%s' is not allowed; write beta:mu:buffer, e.g. 0.5:2:inf",
                        where, j + 1, orig);
    if (j >= LBMC_MAX_POOLS)
      return LBMC_ERROR(LBMC_ERR_ARG, "%s: more than %d pools are not allowed", where,
                        LBMC_MAX_POOLS);
    snprintf(key, sizeof key, "%s: pool %d: beta", where, j + 1);
    LBMC_CALL(lbmc_parse_real(key, f[0], &beta[j]));
    LBMC_CALL(lbmc_check_beta(key, beta[j]));
    snprintf(key, sizeof key, "%s: pool %d: mu", where, j + 1);
    LBMC_CALL(lbmc_parse_real(key, f[1], &mu[j]));
    LBMC_CALL(lbmc_check_positive(key, mu[j]));
    snprintf(key, sizeof key, "%s: pool %d: buffer", where, j + 1);
    LBMC_CALL(lbmc_parse_buffer(key, f[2], &buffer[j]));
    j++;
  }
  if (j == 0)
    return LBMC_ERROR(LBMC_ERR_ARG, "%s: at least one pool beta:mu:buffer is required", where);
  *J = j;
  return LBMC_SUCCESS;
}

void lbmc_cli_print_model(FILE *f, const lbmc_model_description *d)
{
  fprintf(f, "system: n = %lld servers, lambda = %g per server, rho = %.6g, policy %s",
          (long long)d->n, d->lambda, d->rho, d->policy);
  if (*d->sampling) fprintf(f, " (sampling %s)", d->sampling);
  fprintf(f, ", %ld router%s", d->routers, d->routers > 1 ? "s" : "");
  if (*d->stale) fprintf(f, " (stale %s)", d->stale);
  fputc('\n', f);
  for (int j = 0; j < d->J; j++) {
    const lbmc_pool_description *p = &d->pool[j];
    fprintf(f, "  pool %d: beta = %g, mu = %g, buffer = ", j + 1, p->beta, p->mu);
    if (p->buffer == LBMC_BUFFER_INF)
      fputs("inf", f);
    else
      fprintf(f, "%ld", p->buffer);
    fprintf(f, ", %lld servers, service %s", (long long)p->servers, p->service->text);
    if (p->L > 1) {
      fputs(", speeds mu_k =", f);
      for (int k = 0; k < p->L; k++) fprintf(f, "%s %g", k ? "," : "", p->mu_k[k]);
      fputs(" (speeds with 1, 2, ... customers)", f);
    }
    fputc('\n', f);
  }
}

void lbmc_cli_print_policies(FILE *f, const char *indent)
{
  char usage[64];
  for (int i = 0; i < lbmc_policy_count(); i++) {
    const lbmc_policy_type *p = lbmc_policy_get(i);
    lbmc_policy_usage(p, usage, sizeof usage);
    fprintf(f, "%s%-12s %s\n", indent, usage, p->summary);
  }
  for (int i = 0; i < lbmc_policy_count(); i++)
    for (const lbmc_policy_alias *a = lbmc_policy_get(i)->aliases; a && a->name; a++)
      fprintf(f, "%s%-12s %s\n", indent, a->name, a->summary);
}

void lbmc_cli_print_engines(FILE *f, const char *indent)
{
  for (int k = 1; k < lbmc_engine_kinds(); k++)
    fprintf(f, "%s%-12s %s\n", indent, lbmc_engine_kind_name(k), lbmc_engine_kind_summary(k));
}

lbmc_err lbmc_cli_parse_progress(const char *where, const char *text, int *mode, double *seconds)
{
  static const char *const words[] = {"auto", "always", "never"}; /* LBMC_SIM_PROGRESS_* */
  char why[512] = "";
  lbmc_error_mode was;
  *seconds = NAN;
  for (int k = 0; k < 3; k++)
    if (strcmp(text, words[k]) == 0) {
      *mode = k;
      return LBMC_SUCCESS;
    }
  *mode = LBMC_SIM_PROGRESS_ALWAYS;
  was = lbmc_error_set_mode(LBMC_ERRORS_STORE);
  if (lbmc_parse_real(where, text, seconds) == LBMC_SUCCESS && *seconds >= 0) {
    lbmc_error_set_mode(was);
    return LBMC_SUCCESS;
  }
  /* a number the reader refused says why (an underflow, a stray character) */
  if (strchr("0123456789.+-", *text) && *text && lbmc_error_last() != LBMC_SUCCESS) {
    const char *m = lbmc_error_message(), *colon = strstr(m, ": ");
    snprintf(why, sizeof why, "; as a number: %s", colon ? colon + 2 : m);
  }
  lbmc_error_set_mode(was);
  lbmc_error_clear();
  return LBMC_ERROR(LBMC_ERR_ARG, "%s: '%s' is not allowed; allowed: " LBMC_PROGRESS_ALLOWED "%s",
                    where, text, why);
}

lbmc_err lbmc_cli_unknown_option(const char *command, const char *arg, const struct option *opts)
{
  const char *names[128], *close;
  char word[64], hint[96] = "";
  int n = 0;
  snprintf(word, sizeof word, "%.*s", (int)strcspn(arg + strspn(arg, "-"), "="),
           arg + strspn(arg, "-")); /* "--polcy=x" -> "polcy" */
  for (; opts[n].name && n < 128; n++) names[n] = opts[n].name;
  close = *word ? lbmc_suggest(word, names, n) : NULL;
  if (close) snprintf(hint, sizeof hint, " (did you mean '--%s'?)", close);
  return LBMC_ERROR(LBMC_ERR_ARG, "'%s' is not an option of lbmc %s%s (see lbmc %s --help)", arg,
                    command, hint, command);
}

/* The program's one piece of global state: set by the stop signals (a signal handler can
 * reach nothing else); lbmc run's runner and lbmc sim's replica monitor poll it. */
static volatile sig_atomic_t lbmc_cli_stop = 0;

static void lbmc_cli_on_stop(int sig)
{
  (void)sig;
  lbmc_cli_stop = 1;
}

volatile sig_atomic_t *lbmc_cli_catch_stop_signals(int usr1)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = lbmc_cli_on_stop;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  if (usr1) sigaction(SIGUSR1, &sa, NULL);
  return &lbmc_cli_stop;
}
