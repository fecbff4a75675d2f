/* The routing policies that have an occupancy form (src/engine/occ_policy.h), each
 * defined at the end of its policy's file. Adding one: its section there and one line
 * below. lwl(d) has none: it reads workloads. */
#include "../engine/occ_policy.h"
#include "../engine/policy.h"

extern const lbmc_occ_ops lbmc_occ_random;
extern const lbmc_occ_ops lbmc_occ_jsq_d;
extern const lbmc_occ_ops lbmc_occ_jsq_full;
extern const lbmc_occ_ops lbmc_occ_pull;
extern const lbmc_occ_ops lbmc_occ_balanced;

static const lbmc_occ_ops *const lbmc_occ_list[] = {
    &lbmc_occ_random, &lbmc_occ_jsq_d, &lbmc_occ_jsq_full, &lbmc_occ_pull, &lbmc_occ_balanced,
};

const lbmc_occ_ops *lbmc_occ_ops_find(const lbmc_policy_type *policy)
{
  for (size_t i = 0; i < sizeof lbmc_occ_list / sizeof lbmc_occ_list[0]; i++)
    if (lbmc_occ_list[i]->policy == policy) return lbmc_occ_list[i];
  return NULL;
}
