/* lbmc run under Slurm: a step that srun started with several tasks but no MPI
 * process-management interface (srun --mpi=none, or an MPI without Slurm's PMI
 * support) gives every task an MPI world of one rank, so each task would run the
 * whole job alone and write the same files. lbmc refuses such a start before it
 * computes anything and names the remedy (docs: README.md, "Running on a Slurm
 * cluster"). Open MPI 4.1 aborts in MPI_Init in this case, Open MPI 5 starts the
 * tasks as singletons: hence a check before MPI_Init (from the environment) and one
 * after it (from the size of MPI_COMM_WORLD). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "lbmc/check.h"

extern char **environ;

/* The number of tasks of this srun step (SLURM_STEP_NUM_TASKS; in a step of an old
 * Slurm without it, SLURM_NTASKS), or 0 outside an srun step. A batch script has
 * SLURM_NTASKS but no step variables: one lbmc there is one process, rightly. */
static long lbmc_slurm_step_tasks(const char **var)
{
  const char *v;
  long n;
  *var = "SLURM_STEP_NUM_TASKS";
  v = getenv(*var);
  if (!v && getenv("SLURM_STEP_ID")) {
    *var = "SLURM_NTASKS";
    v = getenv(*var);
  }
  return v && lbmc_scan_long(v, strlen(v), &n) ? n : 0;
}

/* 1 if the environment holds a process-management interface MPI can use. */
static int lbmc_has_pmi(void)
{
  static const char *const prefixes[] = {"PMI_", "PMIX_", "OMPI_COMM_WORLD_"};
  for (char **e = environ; e && *e; e++)
    for (int i = 0; i < 3; i++)
      if (strncmp(*e, prefixes[i], strlen(prefixes[i])) == 0) return 1;
  return 0;
}

lbmc_err lbmc_cli_check_launch(int mpi_size)
{
  const char *var, *procid = getenv("SLURM_PROCID");
  long tasks = lbmc_slurm_step_tasks(&var);
  lbmc_error_mode was;
  lbmc_err err;
  if (tasks <= 1) return LBMC_SUCCESS;
  if (mpi_size < 0 ? lbmc_has_pmi() : mpi_size > 1) return LBMC_SUCCESS;
  was = lbmc_error_set_mode(LBMC_ERRORS_STORE); /* the other tasks keep the message */
  if (!procid || strcmp(procid, "0") == 0) lbmc_error_set_mode(was); /* task 0 says it once */
  err = LBMC_ERROR(LBMC_ERR_ARG,
                   "lbmc run: Slurm started this step with %ld tasks (%s=%ld) but MPI sees one "
                   "rank per task (srun --mpi=none, or no PMI support), so every task would run "
                   "the whole job alone; nothing was computed. Launch with srun --mpi=pmix (see "
                   "srun --mpi=list), or with mpirun inside the allocation",
                   tasks, var, tasks);
  lbmc_error_set_mode(was);
  return err;
}
