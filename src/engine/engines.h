/* Private: the registry of engines (engines.c) as the dispatcher reads it: the table of
 * each kind (include/lbmc/engines.h has the public facts). */
#ifndef LBMC_ENGINE_ENGINES_H
#define LBMC_ENGINE_ENGINES_H

#include "engine_type.h"

/** The table of kind (1 .. lbmc_engine_kinds() - 1), NULL for auto or out of range. */
const lbmc_engine_type *lbmc_engine_type_of(int kind);

#endif
