/* Private: the policy registry (registry.c) and the policy text. The registry is the
 * list of policy types; the text of a policy ("jsq(2)", "pull", "jiq") is parsed and
 * written back here only, from the facts of the types (src/system/policy.h). */
#ifndef LBMC_REGISTRY_H
#define LBMC_REGISTRY_H

#include <stddef.h>

#include "../system/policy.h"

/** A policy as a text names it: its type, its parameter and the alias it was named by. */
typedef struct {
  const lbmc_policy_type *type;
  long param;                     /* d or c; 0 without a parameter */
  const lbmc_policy_alias *alias; /* e.g. jiq (which fixes stale keep); NULL if none */
} lbmc_policy_spec;

/** Number of registered policy types and the i-th one (registry order). */
int lbmc_policy_count(void);
const lbmc_policy_type *lbmc_policy_get(int i);
/** Find a policy type by family name and whether a parameter was given; NULL if none. */
const lbmc_policy_type *lbmc_policy_find(const char *name, int has_param);

/** Parse a policy text: a family name or an alias, with "(p)" where the type takes a
 *  parameter, p >= 1; spaces allowed around the parts. `where` names the text in
 *  messages ("jobs/x.yaml:7: policy"). Errors: LBMC_ERR_ARG naming the text and the
 *  policies allowed. */
lbmc_err lbmc_policy_parse(const char *where, const char *text, lbmc_policy_spec *spec);
/** The canonical text of a spec into buf[len]: "jsq(2)", "pull", "jiq". */
void lbmc_policy_format(const lbmc_policy_spec *spec, char *buf, size_t len);
/** The policies that read the setting `setting` ("stale" or "sampling"; the types'
 *  uses_stale / uses_sampling), as written in lists: "pull", "jsq(d), lwl(d)", into
 *  buf[len]; returns how many. */
int lbmc_policy_list_using(const char *setting, char *buf, size_t len);
/** How a type is written in lists: "jsq(d)", "pull". */
void lbmc_policy_usage(const lbmc_policy_type *type, char *buf, size_t len);

#endif
