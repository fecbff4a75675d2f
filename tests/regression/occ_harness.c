/* Replicas of the occupancy tests through the replica driver (occ_harness.h). */
#include "occ_harness.h"

#include <string.h>

void oh_conf_default(oh_conf *c)
{
  memset(c, 0, sizeof *c);
  c->engine = LBMC_ENGINE_OCCUPANCY;
  c->warmup = 100;
  c->time = 1000;
  c->K = 10;
  c->replicas = 20;
  c->seed = 1;
  c->init = LBMC_INIT_EMPTY;
  c->confidence = 0.95;
  c->runaway_fraction = 0.02;
}

int oh_simulate(const lbmc_model *m, const oh_conf *c, th_result *res, char *note, size_t len)
{
  lbmc_run_options o;
  lbmc_run_options_default(&o);
  o.warmup = c->warmup;
  o.time = c->time;
  o.tail_k = c->K;
  o.confidence = c->confidence;
  o.max_customers = (long long)c->cap;
  o.runaway_fraction = c->runaway_fraction;
  o.engine = (int)c->engine;
  o.init = (int)c->init;
  return th_simulate_noted(m, &o, c->point, c->replicas, c->seed, res, note, len);
}
