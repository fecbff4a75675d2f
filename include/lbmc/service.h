/* Service-requirement distributions (issue #6). A customer's service requirement S has
 * mean 1; at a server of pool j it takes S / mu_j time units (or S / mu_j(q) with
 * queue-length-dependent speeds). Every distribution is parameterised so that
 * E[S] = 1; its squared coefficient of variation scv = Var[S] / E[S]^2 is given or
 * implied by the parameters.
 *
 * Text form (command line, job files' short form): "NAME[:KEY=VALUE[,KEY=VALUE...]]"
 *   exponential                       scv 1
 *   deterministic                     S = 1, scv 0
 *   erlang:k=K                        Gamma(K, 1/K), integer 1 <= K <= 1000000, scv 1/K
 *   hyperexponential:scv=C            two phases, balanced means (p1/r1 = p2/r2),
 *                                     1 <= C <= 1e12
 *   hyperexponential:p=P,r1=A,r2=B    explicit: phase 1 w.p. P at rate A, phase 2 at
 *                                     rate B; P/A + (1-P)/B must be 1 (within 1e-9)
 *   lognormal:scv=C                   sigma^2 = ln(1 + C), location -sigma^2/2, C > 0
 *   weibull:shape=K                   scale 1/Gamma(1 + 1/K), K >= 0.1
 *   lomax:shape=A                     Pareto II, scale b = A - 1, A > 1 (scv A/(A-2) if
 *                                     A > 2), sampled as b expm1(E/A), E ~ Exp(1)
 * Sampling uses GSL's generators (gsl_ran_*) driven by the caller's SPRNG stream.
 */
#ifndef LBMC_SERVICE_H
#define LBMC_SERVICE_H

#include "lbmc/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  LBMC_SERVICE_EXPONENTIAL = 0,
  LBMC_SERVICE_DETERMINISTIC,
  LBMC_SERVICE_ERLANG,
  LBMC_SERVICE_HYPEREXPONENTIAL,
  LBMC_SERVICE_LOGNORMAL,
  LBMC_SERVICE_WEIBULL,
  LBMC_SERVICE_LOMAX
} lbmc_service_kind;

/** A distribution with mean 1 (plain data: copy freely). */
typedef struct {
  lbmc_service_kind kind;
  double p[3];   /* parameters, by kind: erlang {k}; hyperexponential {p1, r1, r2};
                    lognormal {zeta, sigma}; weibull {shape, scale}; lomax {shape, scale} */
  double scv;    /* squared coefficient of variation (INFINITY if it does not exist) */
  char text[64]; /* canonical text, e.g. "lognormal:scv=4" */
} lbmc_service;

/** The exponential distribution (the default). */
void lbmc_service_exponential(lbmc_service *s);

/** Parse the text form; `where` names the value in messages ("--service",
 *  "jobs/x.yaml:9: system.service"). Errors: LBMC_ERR_ARG naming the text, the
 *  parameter and what is allowed. */
lbmc_err lbmc_service_parse(const char *where, const char *text, lbmc_service *s);

/** Build from a kind name and named parameters (names[i] = values[i], n of them), as
 *  in a job file mapping {dist: lognormal, scv: 4}. Errors: LBMC_ERR_ARG. */
lbmc_err lbmc_service_make(const char *where, const char *dist, int n, const char *const *names,
                           const double *values, lbmc_service *s);

/** Scv above which lbmc_service_warning warns that means converge slowly. */
#define LBMC_SCV_WARN 1e4

/** A warning about s, or NULL: infinite variance (lomax with shape <= 2: the mean wait
 *  of FCFS queues where customers can wait is infinite by Pollaczek-Khinchine, and every
 *  estimator's variance is infinite; the point's verdict decides per metric), or scv above
 *  LBMC_SCV_WARN (means converge very slowly). Static text. */
const char *lbmc_service_warning(const lbmc_service *s);

/** The moments of s that exist: E[S^b] is finite for b < the returned index (INFINITY:
 *  all; lomax:shape=A: A). */
double lbmc_service_tail_index(const lbmc_service *s);

/** 1 if s is the exponential distribution. */
int lbmc_service_is_exponential(const lbmc_service *s);

#ifdef __cplusplus
}
#endif
#endif
