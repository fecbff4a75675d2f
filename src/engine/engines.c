/* The registry of engines (lbmc/engines.h): the tables of LBMC_ENGINE_LIST
 * (lbmc/run_options.h) in the order `auto` tries them, and what the other layers read
 * from them. A test build registers one more engine (tests/engine/):
 * -DLBMC_TEST_ENGINE=the suffix of its table's name (lbmc_engine_<suffix>). */
#include "engines.h"

#include <stdio.h>
#include <string.h>

#include "lbmc/engines.h"

/* The table of an engine: lbmc_engine_<name> (two steps, so that name may be a macro). */
#define LBMC_ENGINE_TABLE_(name) lbmc_engine_##name
#define LBMC_ENGINE_TABLE(name)  LBMC_ENGINE_TABLE_(name)

#define LBMC_X_DECLARE(KIND, name) extern const lbmc_engine_type LBMC_ENGINE_TABLE(name);
LBMC_ENGINE_LIST(LBMC_X_DECLARE)
#ifdef LBMC_TEST_ENGINE
LBMC_X_DECLARE(TEST, LBMC_TEST_ENGINE)
#endif
#undef LBMC_X_DECLARE

/* The tables by kind - 1. */
#define LBMC_X_ENTRY(KIND, name) &LBMC_ENGINE_TABLE(name),
static const lbmc_engine_type *const lbmc_engine_tables[] = {
    LBMC_ENGINE_LIST(LBMC_X_ENTRY)
#ifdef LBMC_TEST_ENGINE
        LBMC_X_ENTRY(TEST, LBMC_TEST_ENGINE)
#endif
};
#undef LBMC_X_ENTRY

int lbmc_engine_kinds(void)
{
  return 1 + (int)(sizeof lbmc_engine_tables / sizeof lbmc_engine_tables[0]);
}

const lbmc_engine_type *lbmc_engine_type_of(int kind)
{
  return kind >= 1 && kind < lbmc_engine_kinds() ? lbmc_engine_tables[kind - 1] : NULL;
}

const char *lbmc_engine_kind_name(int kind)
{
  return kind == LBMC_ENGINE_AUTO
             ? "auto"
             : (lbmc_engine_type_of(kind) ? lbmc_engine_type_of(kind)->name : NULL);
}

int lbmc_engine_kind_find(const char *name)
{
  for (int k = 0; k < lbmc_engine_kinds(); k++)
    if (strcmp(lbmc_engine_kind_name(k), name) == 0) return k;
  return -1;
}

const char *lbmc_engine_kind_summary(int kind)
{
  const lbmc_engine_type *t = lbmc_engine_type_of(kind);
  return t ? t->summary : NULL;
}

double lbmc_engine_speed(const char *name)
{
  int k = lbmc_engine_kind_find(name);
  return k > 0 ? lbmc_engine_type_of(k)->speed : 0;
}

const char *lbmc_engine_names(char *buf, size_t len, int with_auto, const char *sep,
                              const char *last)
{
  size_t used = 0;
  const int first = with_auto ? 0 : 1, n = lbmc_engine_kinds();
  if (len) buf[0] = '\0';
  for (int k = first; k < n && used < len; k++) {
    const char *s = k == first ? "" : (k + 1 == n ? last : sep);
    int w = snprintf(buf + used, len - used, "%s%s", s, lbmc_engine_kind_name(k));
    used += w > 0 ? (size_t)w : 0;
  }
  return buf;
}
