/* The rule for rare events (estimators.h, docs/model.md "Rare events"): an interval that
 * rests on fewer than LBMC_FEW_EVENTS_MIN entries into its event's set is withheld. */
#include <math.h>

#include "estimators.h"

void lbmc_few_events(double events, lbmc_interval *iv)
{
  if (isnan(events) || events >= LBMC_FEW_EVENTS_MIN) return;
  if (isnan(iv->lower) && isnan(iv->upper)) return; /* no interval to withhold */
  if (iv->flags & (LBMC_IV_EMPTY | LBMC_IV_NONE_OBSERVED | LBMC_IV_ALL_OBSERVED)) return;
  iv->lower = iv->upper = iv->half_width = iv->std_err = NAN;
  iv->flags |= LBMC_IV_FEW_EVENTS;
}
