/* Service-requirement distributions (docs/job-files.md, "Service"). A customer's service
 * requirement S has mean 1; at a server of pool j it takes S / mu_j time units (or S / mu_j(q) with
 * queue-length-dependent speeds). Every distribution is parameterised so that
 * E[S] = 1; its squared coefficient of variation scv = Var[S] / E[S]^2 is given or
 * implied by the parameters.
 *
 * Text form (command line, job files' short form): "NAME[:KEY=VALUE[,KEY=VALUE...]]",
 * a VALUE a number or, for ph and coxian, a list [x1,x2,...] or a list of lists
 *   exponential                       scv 1
 *   deterministic                     S = 1, scv 0
 *   erlang:k=K                        Gamma(K, 1/K), integer 1 <= K <= 1000000, scv 1/K
 *   hyperexponential:scv=C            two phases, balanced means (p1/r1 = p2/r2),
 *                                     1 <= C <= 1e12
 *   hyperexponential:p=P,r1=A,r2=B    explicit: phase 1 w.p. P at rate A, phase 2 at
 *                                     rate B; P/A + (1-P)/B must be 1 (within 1e-9)
 *   ph:alpha=[a1,...,am],T=[[t11,...,t1m],...,[tm1,...,tmm]]
 *                                     phase type (alpha, T): start in phase i w.p. a_i,
 *                                     leave phase i to phase j at rate t_ij, to absorption
 *                                     (the end of the requirement) at rate
 *                                     -(t_i1 + ... + t_im); rates per unit of requirement.
 *                                     T a sub-generator (t_ij >= 0 off the diagonal,
 *                                     t_ii < 0, rows summing to <= 0), alpha a probability
 *                                     vector (sum 1 within 1e-12: no atom at zero), every
 *                                     phase leading to absorption, m <= LBMC_PH_MAX_PHASES,
 *                                     mean alpha (-T)^-1 1 = 1 within 1e-9
 *   coxian:r=[r1,...,rm],p=[p1,...,p(m-1)]
 *                                     phases in series from phase 1: phase i at rate r_i
 *                                     (> 0), then on to phase i+1 w.p. p_i (0 < p_i <= 1),
 *                                     else done; mean sum_i p1...p(i-1) / r_i = 1 (1e-9)
 *   coxian:scv=C                      two-phase Coxian with r1 = 2, p1 = 1/(2C), r2 = 1/C
 *                                     (the two-moment fit), 0.5 <= C <= 1e12
 *   lognormal:scv=C                   sigma^2 = ln(1 + C), location -sigma^2/2, C > 0
 *   weibull:shape=K                   scale 1/Gamma(1 + 1/K), K >= 0.1
 *   lomax:shape=A                     Pareto II, scale b = A - 1, A > 1 (scv A/(A-2) if
 *                                     A > 2), sampled as b expm1(E/A), E ~ Exp(1)
 * Sampling uses GSL's generators (gsl_ran_*) driven by the caller's SPRNG stream.
 *
 * Phase type. exponential (1 phase), erlang:k=K with K <= LBMC_PH_MAX_PHASES (K phases
 * in series at rate K), hyperexponential (2 phases in parallel), coxian and ph are
 * phase-type laws: lbmc_service_ph gives their (alpha, T). Erlang with more phases, and
 * the other laws, are not. */
#ifndef LBMC_SERVICE_H
#define LBMC_SERVICE_H

#include "lbmc/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most phases of a phase-type law (ph, coxian; erlang:k=K counts as phase-type up to
 *  K = LBMC_PH_MAX_PHASES). */
#define LBMC_PH_MAX_PHASES 16

/** Bytes of a law's canonical text, the terminating NUL included: the longest ph text
 *  (16 + 256 numbers) fits with 6 significant digits per number; texts are exact (17
 *  digits at most, as many as needed to read back the same double) whenever they fit,
 *  which they always do up to 10 phases. The laws of scalar parameters keep the 64
 *  bytes (63 characters) their texts always had. Results files store the texts as
 *  variable-length strings, so files written before phase-type laws read unchanged. */
#define LBMC_SERVICE_TEXT_MAX 4096

typedef enum {
  LBMC_SERVICE_EXPONENTIAL = 0,
  LBMC_SERVICE_DETERMINISTIC,
  LBMC_SERVICE_ERLANG,
  LBMC_SERVICE_HYPEREXPONENTIAL,
  LBMC_SERVICE_LOGNORMAL,
  LBMC_SERVICE_WEIBULL,
  LBMC_SERVICE_LOMAX,
  LBMC_SERVICE_PH,    /* ph:alpha=...,T=... */
  LBMC_SERVICE_COXIAN /* coxian:...: a phase-type law with its own short text */
} lbmc_service_kind;

/** A distribution with mean 1 (plain data: copy freely; about 6.6 KB). */
typedef struct {
  lbmc_service_kind kind;
  double p[3]; /* parameters, by kind: erlang {k}; hyperexponential {p1, r1, r2};
                  lognormal {zeta, sigma}; weibull {shape, scale}; lomax {shape, scale};
                  coxian:scv=C {C}; none for ph and explicit coxian (alpha, T below) */
  double scv;  /* squared coefficient of variation (INFINITY if it does not exist) */
  /* The phase-type representation (lbmc_service_ph), filled by the parser: phases m
   * (0: not phase-type), alpha (m), T (m x m, row-major, row stride m), exit rates
   * -T 1 (m; row sums within 1e-12 |t_ii| of 0 read as 0), and the mean remaining
   * requirement from each phase, (-T)^-1 1 (m). Not read for the other laws. */
  int phases;
  double alpha[LBMC_PH_MAX_PHASES];
  double T[LBMC_PH_MAX_PHASES * LBMC_PH_MAX_PHASES];
  double exit[LBMC_PH_MAX_PHASES];
  double residual[LBMC_PH_MAX_PHASES];
  /* Sampling shortcuts: the start phase and each phase's next phase when certain (m:
   * absorption), -1 when drawn at random. */
  int start;
  int next[LBMC_PH_MAX_PHASES];
  char text[LBMC_SERVICE_TEXT_MAX]; /* canonical text, e.g. "lognormal:scv=4" */
} lbmc_service;

/** The exponential distribution (the default). */
void lbmc_service_exponential(lbmc_service *s);

/** Parse the text form (at most 65535 characters); `where` names the value in
 *  messages ("--service", "jobs/x.yaml:9: system.service"). Errors: LBMC_ERR_ARG
 *  naming the text, the parameter and what is allowed (for ph and coxian: the entry,
 *  row or phase at fault, and the computed mean when it is not 1). */
lbmc_err lbmc_service_parse(const char *where, const char *text, lbmc_service *s);

/** Build from a kind name and named parameters (names[i] = values[i], n of them), as
 *  in a job file mapping {dist: lognormal, scv: 4}. Errors: LBMC_ERR_ARG. */
lbmc_err lbmc_service_make(const char *where, const char *dist, int n, const char *const *names,
                           const double *values, lbmc_service *s);

/** Scv above which lbmc_service_warning warns that means converge slowly. */
#define LBMC_SCV_WARN 1e4

/** A warning about s, or NULL: infinite variance (lomax with shape <= 2: the mean wait
 *  of FCFS queues is infinite by Pollaczek-Khinchine, so its estimates cannot
 *  converge), or scv above LBMC_SCV_WARN (means converge very slowly). Static text. */
const char *lbmc_service_warning(const lbmc_service *s);

/** 1 if s is the exponential distribution. */
int lbmc_service_is_exponential(const lbmc_service *s);

/** 1 if a and b are the same law (kind, parameters and phase-type representation;
 *  the texts are not compared). */
int lbmc_service_equal(const lbmc_service *a, const lbmc_service *b);

/** The phase-type representation of s: returns its number of phases m (1 for the
 *  exponential, K for erlang:k=K up to LBMC_PH_MAX_PHASES, 2 for hyperexponential, m
 *  for ph and coxian), or 0 if s is not phase-type (deterministic, lognormal, weibull,
 *  lomax, erlang with K > LBMC_PH_MAX_PHASES). With m > 0, *alpha (if alpha is not
 *  NULL) points to the m start probabilities and *T (if T is not NULL) to the m x m
 *  sub-generator, row-major with row stride m, both inside s (valid while s is),
 *  rates per unit of requirement: the requirement is the absorption time of the
 *  Markov chain started from alpha, with mean alpha (-T)^-1 1 = 1. */
int lbmc_service_ph(const lbmc_service *s, const double **alpha, const double **T);

/** For a phase-type s (lbmc_service_ph(s) = m > 0): the m exit rates t = -T 1 (per
 *  unit of requirement; 0 for a phase that cannot end the requirement), and the m mean
 *  remaining requirements h = (-T)^-1 1 from each phase (so alpha h = 1). NULL if s is
 *  not phase-type. Pointers into s. */
const double *lbmc_service_ph_exit(const lbmc_service *s);
const double *lbmc_service_ph_residual(const lbmc_service *s);

#ifdef __cplusplus
}
#endif
#endif
