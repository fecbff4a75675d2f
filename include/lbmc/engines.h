/* The registry of engines (src/engine/engines.c): the engines of LBMC_ENGINE_LIST
 * (lbmc/run_options.h) by kind, with the facts their tables declare, for the command
 * line, job files, cost estimates and the results file. Kind 0 is auto. Nothing here is
 * collective; the strings are static. */
#ifndef LBMC_ENGINES_H
#define LBMC_ENGINES_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Kinds: auto (0) and one per registered engine, 1 .. lbmc_engine_kinds() - 1. */
int lbmc_engine_kinds(void);
/** The --engine name of a kind ("auto", "occupancy", ...); NULL out of range. */
const char *lbmc_engine_kind_name(int kind);
/** The kind named `name` ("auto" is 0), or -1 if there is none. */
int lbmc_engine_kind_find(const char *name);
/** One line on the engine of a kind (NULL for auto and out of range). */
const char *lbmc_engine_kind_summary(int kind);
/** Nominal events per CPU second of the engine named `name` (its table's `speed`), for
 *  cost estimates; 0 if no engine has that name. */
double lbmc_engine_speed(const char *name);
/** The engine names, sep-separated, with `last` before the last one (", " and " or "
 *  give "occupancy, servers or general"); auto first if with_auto. Into buf[len],
 *  which is returned. */
const char *lbmc_engine_names(char *buf, size_t len, int with_auto, const char *sep,
                              const char *last);

#ifdef __cplusplus
}
#endif
#endif
