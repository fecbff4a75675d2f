/* lbmc-unit-tests [SUITE...]: registers every suite, runs them (or only the suites named),
 * exits non-zero on any failure. The units are called as a library is: the error
 * handler keeps the messages of the errors the tests provoke (store mode) instead of
 * printing them, unless LBMC_TRACE is set (then they are printed with their tracebacks). */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbmc/error.h"
#include "unit.h"

int main(int argc, char **argv)
{
  int (*const suites[])(void) = {
      ut_register_model,        ut_register_streams,       ut_register_ziggurat,
      ut_register_stats,        ut_register_policy_simple, ut_register_policy_balanced,
      ut_register_policy_pull,  ut_register_engine,        ut_register_replica,
      ut_register_service,      ut_register_estimators,    ut_register_dhist,
      ut_register_occupancy,    ut_register_occ_ph,        ut_register_point,
      ut_register_error,        ut_register_tally,         ut_register_ladder,
      ut_register_residual,     ut_register_mf_expansion,  ut_register_rep_store,
      ut_register_accumulators,
  };
  unsigned failures;
  if (!getenv("LBMC_TRACE")) lbmc_error_set_mode(LBMC_ERRORS_STORE);
  if (CU_initialize_registry() != CUE_SUCCESS) return 2;
  for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++)
    if (suites[i]() != 0) {
      fprintf(stderr, "cannot register suite %zu: %s\n", i, CU_get_error_msg());
      CU_cleanup_registry();
      return 2;
    }
  for (CU_pSuite s = CU_get_registry()->pSuite; argc > 1 && s; s = s->pNext) {
    int named = 0;
    for (int a = 1; a < argc; a++) named |= strcmp(s->pName, argv[a]) == 0;
    CU_set_suite_active(s, named);
  }
  CU_set_fail_on_inactive(CU_FALSE); /* the suites not named are not failures */
  CU_basic_set_mode(CU_BRM_VERBOSE);
  CU_basic_run_tests();
  failures = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
  if (CU_get_error() != CUE_SUCCESS) failures++;
  CU_cleanup_registry();
  return failures ? 1 : 0;
}
