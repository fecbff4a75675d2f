/* Private: sampling service requirements with GSL's generators (gsl_ran_*), fed by an
 * lbmc_stream through a gsl_rng adapter, so the numbers still come from SPRNG. */
#ifndef LBMC_SAMPLER_H
#define LBMC_SAMPLER_H

#include <gsl/gsl_rng.h>

#include "lbmc/service.h"
#include "stream.h"

/** A gsl_rng drawing its uniforms from `stream` (which must outlive it). */
lbmc_err lbmc_sampler_create(lbmc_stream *stream, gsl_rng **r);
void lbmc_sampler_destroy(gsl_rng **r);
/** One requirement (mean 1) from distribution s. */
double lbmc_service_sample(const lbmc_service *s, gsl_rng *r);
/** The remaining requirement of a service in progress seen at a random time in the steady
 *  state (the equilibrium residual, density G(x) / E[S] with G the survival function of
 *  s), sampled exactly: exponential: Exp(1); deterministic: uniform on (0, 1); erlang:K:
 *  Gamma(J, rate K) with J uniform on 1..K; lognormal, weibull: U S* with U uniform and S*
 *  length-biased (lognormal with location zeta + sigma^2; scale Gamma(1 + 1/k)^(1/k));
 *  lomax:shape=A: Lomax of shape A - 1, same scale; hyperexponential, ph, coxian: the
 *  phase process from its time-stationary phase alpha (-T)^-1. */
double lbmc_service_residual(const lbmc_service *s, gsl_rng *r);

#endif
