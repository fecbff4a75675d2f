# lbmc_add_test(NAME <name> COMMAND <cmd> [args...] [RANKS <n>] [LABELS <labels...>]
#               [WORKING_DIRECTORY <dir>] [ENVIRONMENT <VAR=value...>] [TIMEOUT <seconds>])
#
# The one way tests are registered. RANKS n runs the command under mpirun with n
# ranks (--oversubscribe, so 4 ranks run on a 2-core machine); running as root is
# allowed through the environment Open MPI asks for. TIMEOUT is a hang guard for
# ctest, not a performance limit (tests never assert on wall-clock time).
function(lbmc_add_test)
  cmake_parse_arguments(T "" "NAME;RANKS;WORKING_DIRECTORY;TIMEOUT" "COMMAND;LABELS;ENVIRONMENT" ${ARGN})
  if(NOT T_NAME OR NOT T_COMMAND)
    message(FATAL_ERROR "lbmc_add_test: NAME and COMMAND are required")
  endif()
  set(cmd ${T_COMMAND})
  if(T_RANKS)
    set(cmd ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${T_RANKS} --oversubscribe ${cmd})
    list(APPEND T_LABELS mpi)
  endif()
  if(NOT T_WORKING_DIRECTORY)
    set(T_WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  endif()
  add_test(NAME ${T_NAME} COMMAND ${cmd} WORKING_DIRECTORY ${T_WORKING_DIRECTORY})
  set(env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
          LBMC=$<TARGET_FILE:lbmc> LBMC_SOURCE_DIR=${PROJECT_SOURCE_DIR} ${T_ENVIRONMENT})
  if(LBMC_SANITIZE) # a sanitized build (-DLBMC_SANITIZE): every finding fails the test
    # Leaks are checked in the tests without MPI ranks, with full stacks so that the
    # suppressions of tests/sanitize/lsan.supp (library leaks) can match; under MPI
    # (label mpi) Open MPI's own start-up allocations would take minutes to sort out,
    # so only memory errors and undefined behaviour are checked there.
    if("mpi" IN_LIST T_LABELS)
      set(asan detect_leaks=0)
    else()
      set(asan detect_leaks=1:fast_unwind_on_malloc=0)
    endif()
    list(APPEND env "ASAN_OPTIONS=${asan}:check_initialization_order=1:strict_string_checks=1"
         "LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/sanitize/lsan.supp:print_suppressions=0"
         "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
  endif()
  set_tests_properties(${T_NAME} PROPERTIES ENVIRONMENT "${env}")
  if(T_LABELS)
    set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}")
  endif()
  if(T_TIMEOUT)
    set_tests_properties(${T_NAME} PROPERTIES TIMEOUT ${T_TIMEOUT})
  else()
    set_tests_properties(${T_NAME} PROPERTIES TIMEOUT 1800)
  endif()
endfunction()
