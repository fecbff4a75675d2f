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

#endif
