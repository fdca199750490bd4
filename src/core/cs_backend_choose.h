/* Choosing the backend and the GPU solver by measurement ("auto").
 *
 * No model of the hardware predicted the fastest choice on every network (bench/NOTES.md,
 * session 11: on nine real SWC cells × 2 048 the rule-based pick ran 2.4× slower than the best
 * GPU solver, and on a 256-cell ring the GPU lost to the CPU). So "auto" times the candidates on
 * the network itself, as FFTW_MEASURE does: each candidate is built as a throw-away instance,
 * runs a warm-up epoch and two timed epochs of `trial_steps` steps (no events), and is destroyed;
 * the fastest (minimum over the timed epochs) is then built for the run. The run's results are
 * those of that candidate named explicitly: the trial instances share no state with it.
 * On large networks (cs_backend_solver_trial_min) the GPU solvers are ranked instead by their
 * membrane step alone, timed without building instances (cs_backend_cuda_solver_trial).
 * The choice is kept in the wisdom file (cs_wisdom.h) and taken from there, with no trial, when a
 * network of the same shape runs again on the same machine. */
#ifndef CS_BACKEND_CHOOSE_H
#define CS_BACKEND_CHOOSE_H

#include "cs_backend.h"

typedef struct {
    const cs_backend_ops *ops; /* the backend chosen */
    char solver[32];           /* the GPU solver name to pass in cs_backend_params ("" on the CPU) */
    char report[1024];          /* one line: every candidate's time per step, or why none was timed */
    double trial_seconds;      /* [s] wall time the trial took (0 when nothing was timed) */
} cs_backend_choice;

/* backend: "cpu", "cuda" or "auto"; p->solver: a GPU solver name, or NULL / "auto" to measure.
 * Nothing is timed when only one candidate remains ("cpu"; "cuda" with a named solver; "auto"
 * without a GPU). A candidate that cannot be built (a solver that refuses the network, device
 * memory) is left out and named in the report; when every one fails, the first failure is
 * returned. trial_steps >= 1. */
cs_status cs_backend_choose(const cs_network_desc *net, const cs_backend_params *p, const char *backend,
                            int trial_steps, cs_backend_choice *out);

/* From how many compartments "auto", choosing among the GPU solvers only (no CPU candidate),
 * times each solver's membrane step alone instead of whole instances (cs_backend_cuda_solver_trial):
 * 2 000 000, or CABLESIM_AUTO_SOLVER_TRIAL (a number; "off": never, UINT64_MAX). A malformed
 * value: CS_ERR_INVALID, one line naming it. */
cs_status cs_backend_solver_trial_min(uint64_t *min_cv);

#endif
