# cmake -DSOURCE_DIR=... -DOUTPUT=... -DBUILD_TYPE=... -P LbmcRevision.cmake
#
# Run at every build: writes OUTPUT, a C header with the source revision
# (`git describe --always --dirty --tags` in SOURCE_DIR, "unknown" outside git or
# without git) and the build type, only when they changed, so that an unchanged
# revision recompiles nothing. Read by src/core/version.c.
set(revision "unknown")
find_program(GIT_EXECUTABLE git)
if(GIT_EXECUTABLE AND EXISTS "${SOURCE_DIR}")
  execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE_DIR}" describe --always --dirty --tags
                  OUTPUT_VARIABLE out RESULT_VARIABLE rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(rc EQUAL 0 AND NOT out STREQUAL "")
    set(revision "${out}")
  endif()
endif()
if(NOT BUILD_TYPE)
  set(BUILD_TYPE "unknown")
endif()
set(text "/* Generated at build time by cmake/LbmcRevision.cmake: do not edit. */\n"
         "#define LBMC_REVISION \"${revision}\"\n#define LBMC_BUILD_TYPE \"${BUILD_TYPE}\"\n")
string(CONCAT text ${text})
set(old "")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUTPUT}" "${text}")
endif()
