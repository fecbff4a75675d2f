/* The list of routing policies. Adding a policy: one file in this directory defining
 * a const lbmc_policy_type, and one line below. */
#include <string.h>

#include "../system/policy.h"

extern const lbmc_policy_type lbmc_policy_random;
extern const lbmc_policy_type lbmc_policy_jsq_d;
extern const lbmc_policy_type lbmc_policy_jsq_full;
extern const lbmc_policy_type lbmc_policy_pull;
extern const lbmc_policy_type lbmc_policy_balanced;
extern const lbmc_policy_type lbmc_policy_lwl;

static const lbmc_policy_type *const lbmc_policies[] = {
    &lbmc_policy_random, &lbmc_policy_jsq_d,    &lbmc_policy_jsq_full,
    &lbmc_policy_pull,   &lbmc_policy_balanced, &lbmc_policy_lwl,
};

int lbmc_policy_count(void) { return (int)(sizeof lbmc_policies / sizeof lbmc_policies[0]); }

const lbmc_policy_type *lbmc_policy_get(int i)
{
  return (i >= 0 && i < lbmc_policy_count()) ? lbmc_policies[i] : NULL;
}

const lbmc_policy_type *lbmc_policy_find(const char *name, int has_param)
{
  for (int i = 0; i < lbmc_policy_count(); i++)
    if (strcmp(lbmc_policies[i]->name, name) == 0 &&
        (lbmc_policies[i]->param == LBMC_PARAM_REQUIRED) == (has_param != 0))
      return lbmc_policies[i];
  return NULL;
}
