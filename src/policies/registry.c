/* The list of routing policies, and the policy text: parsing (names, aliases,
 * parameters) and the canonical form, both from the policy types' own facts.
 * Adding a policy: one file in this directory defining a const lbmc_policy_type, and
 * one line in LBMC_POLICY_LIST below (docs/architecture.md). */
#include "registry.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbmc/check.h"

/* A test build registers one more policy (tests/policy/): -DLBMC_TEST_POLICY=its
 * type's name. */
#ifdef LBMC_TEST_POLICY
#define LBMC_POLICY_LIST_TEST(X) X(LBMC_TEST_POLICY)
#else
#define LBMC_POLICY_LIST_TEST(X)
#endif

/* The registry: one line per policy, in the order of --help and of messages. */
#define LBMC_POLICY_LIST(X)                                                                        \
  X(lbmc_policy_random)                                                                            \
  X(lbmc_policy_jsq_d)                                                                             \
  X(lbmc_policy_jsq_full)                                                                          \
  X(lbmc_policy_pull)                                                                              \
  X(lbmc_policy_balanced)                                                                          \
  X(lbmc_policy_lwl)                                                                               \
  LBMC_POLICY_LIST_TEST(X)

#define LBMC_X_DECLARE(type) extern const lbmc_policy_type type;
LBMC_POLICY_LIST(LBMC_X_DECLARE)
#undef LBMC_X_DECLARE

static const lbmc_policy_type *const lbmc_policies[] = {
#define LBMC_X_ENTRY(type) &type,
    LBMC_POLICY_LIST(LBMC_X_ENTRY)
#undef LBMC_X_ENTRY
};

int lbmc_policy_count(void) { return (int)(sizeof lbmc_policies / sizeof lbmc_policies[0]); }

const lbmc_policy_type *lbmc_policy_get(int i)
{
  return (i >= 0 && i < lbmc_policy_count()) ? lbmc_policies[i] : NULL;
}

static int lbmc_policy_takes(const lbmc_policy_type *t, int has_param)
{
  return (t->param == LBMC_PARAM_REQUIRED) == (has_param != 0);
}

const lbmc_policy_type *lbmc_policy_find(const char *name, int has_param)
{
  for (int i = 0; i < lbmc_policy_count(); i++)
    if (strcmp(lbmc_policies[i]->name, name) == 0 && lbmc_policy_takes(lbmc_policies[i], has_param))
      return lbmc_policies[i];
  return NULL;
}

/* The alias `name` of a type taking a parameter as has_param says; NULL if none. */
static const lbmc_policy_alias *lbmc_policy_find_alias(const char *name, int has_param,
                                                       const lbmc_policy_type **type)
{
  for (int i = 0; i < lbmc_policy_count(); i++) {
    const lbmc_policy_alias *a = lbmc_policies[i]->aliases;
    for (; a && a->name; a++)
      if (strcmp(a->name, name) == 0 && lbmc_policy_takes(lbmc_policies[i], has_param)) {
        *type = lbmc_policies[i];
        return a;
      }
  }
  return NULL;
}

void lbmc_policy_usage(const lbmc_policy_type *t, char *buf, size_t len)
{
  if (t->param)
    snprintf(buf, len, "%s(%s)", t->name, t->param_name);
  else
    snprintf(buf, len, "%s", t->name);
}

void lbmc_policy_format(const lbmc_policy_spec *spec, char *buf, size_t len)
{
  if (spec->type->param)
    snprintf(buf, len, "%s(%ld)", spec->type->name, spec->param);
  else
    snprintf(buf, len, "%s", spec->alias ? spec->alias->name : spec->type->name);
}

int lbmc_policy_list_using(const char *setting, char *buf, size_t len)
{
  int count = 0;
  char usage[64];
  if (len) buf[0] = '\0';
  for (int i = 0; i < lbmc_policy_count(); i++) {
    const lbmc_policy_type *t = lbmc_policies[i];
    int uses = strcmp(setting, "stale") == 0 ? t->uses_stale : t->uses_sampling;
    size_t used = strlen(buf);
    if (!uses) continue;
    lbmc_policy_usage(t, usage, sizeof usage);
    snprintf(buf + used, len - used, "%s%s", count++ ? ", " : "", usage);
  }
  return count;
}

/* "allowed: random, jsq(d), ..., jiq": every type, then every alias. */
static lbmc_err lbmc_policy_list_error(const char *where, const char *text, const char *why)
{
  char list[1024] = "", usage[64], hint[96] = "";
  const char *names[64], *close;
  int n = 0;
  for (int i = 0; i < lbmc_policy_count() && n < 64; i++) {
    names[n++] = lbmc_policies[i]->name;
    for (const lbmc_policy_alias *a = lbmc_policies[i]->aliases; a && a->name && n < 64; a++)
      names[n++] = a->name;
  }
  const char *start = text + strspn(text, " \t");
  char name[32];
  snprintf(name, sizeof name, "%.*s", (int)strcspn(start, "( \t"), start); /* "jsk(2)": jsk */
  close = lbmc_suggest(name, names, n);
  if (close && strcmp(close, name) != 0) { /* a typo of a name; the parameter kept */
    const char *paren = strchr(text, '(');
    snprintf(hint, sizeof hint, "; did you mean '%s%s'?", close, paren ? paren : "");
  }
  for (int i = 0; i < lbmc_policy_count(); i++) {
    size_t len = strlen(list);
    lbmc_policy_usage(lbmc_policies[i], usage, sizeof usage);
    snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", usage);
  }
  for (int i = 0; i < lbmc_policy_count(); i++)
    for (const lbmc_policy_alias *a = lbmc_policies[i]->aliases; a && a->name; a++) {
      size_t len = strlen(list);
      snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", a->name);
    }
  return LBMC_ERROR(LBMC_ERR_ARG, "%s: '%s' is not allowed (%s%s); allowed: %s", where, text, why,
                    hint, list);
}

/* Split "name(p)" (spaces allowed around the parts) into name[size] and the parameter
 * (*has_param, *param). */
static lbmc_err lbmc_policy_split(const char *where, const char *text, char *name, size_t size,
                                  int *has_param, long *param)
{
  size_t len = 0;
  const char *p = text ? text : "";
  *has_param = 0;
  *param = 0;
  while (isspace((unsigned char)*p)) p++;
  while ((isalnum((unsigned char)*p) || *p == '_') && len + 1 < size) name[len++] = *p++;
  name[len] = '\0';
  while (isspace((unsigned char)*p)) p++;
  if (*p == '(') {
    const char *end = strchr(p + 1, ')');
    char pwhere[256];
    if (!end || end == p + 1) return lbmc_policy_list_error(where, text, "bad parameter");
    snprintf(pwhere, sizeof pwhere, "%s: '%.*s%s': the parameter", where, 60, text,
             strlen(text) > 60 ? "..." : ""); /* its value is quoted next, cut if long */
    LBMC_CALL(lbmc_parse_long_allowed(pwhere, p + 1, (size_t)(end - (p + 1)),
                                      "an integer from 1 to n (the number of servers)", param));
    *has_param = 1;
    p = end + 1;
    while (isspace((unsigned char)*p)) p++;
  }
  if (*p) return lbmc_policy_list_error(where, text, "unexpected text after the name");
  return LBMC_SUCCESS;
}

lbmc_err lbmc_policy_parse(const char *where, const char *text, lbmc_policy_spec *spec)
{
  char name[32];
  int has_param;
  LBMC_CALL(lbmc_policy_split(where, text, name, sizeof name, &has_param, &spec->param));
  spec->alias = lbmc_policy_find_alias(name, has_param, &spec->type);
  if (!spec->alias) {
    spec->type = lbmc_policy_find(name, has_param);
    if (!spec->type) {
      const lbmc_policy_type *other = lbmc_policy_find(name, !has_param);
      return lbmc_policy_list_error(
          where, text,
          other ? (has_param ? "this policy takes no parameter" : "a parameter is required")
                : "unknown policy");
    }
  }
  if (has_param && spec->param < 1)
    return LBMC_ERROR(LBMC_ERR_ARG, "%s: '%s': %s = %ld is not allowed; it must be >= 1", where,
                      text, spec->type->param_name, spec->param);
  return LBMC_SUCCESS;
}
