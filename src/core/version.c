/* What this build of lbmc is (include/lbmc/version.h): the source revision and build
 * type, generated at every build (cmake/LbmcRevision.cmake into lbmc_revision.h), for
 * lbmc --version and the root attributes of results files. */
#include "lbmc/version.h"

#include "lbmc_revision.h"

const char *lbmc_revision(void) { return LBMC_REVISION; }
const char *lbmc_build_type(void) { return LBMC_BUILD_TYPE; }
