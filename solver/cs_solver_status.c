/* Human-readable names of the solver library's status codes (solver/cs_solver.h).
 * The solver library is standalone: it has its own codes and does not use base/cs_error.h. */
#include "cs_solver.h"

const char *cs_solver_status_string(cs_solver_status s)
{
    switch (s) {
    case CS_SOLVER_OK: return "ok";
    case CS_SOLVER_ERR_INVALID: return "invalid argument";
    case CS_SOLVER_ERR_SINGULAR: return "singular system (zero pivot or non-finite result)";
    case CS_SOLVER_ERR_NOMEM: return "out of memory";
    case CS_SOLVER_ERR_DEVICE: return "GPU error";
    case CS_SOLVER_ERR_UNAVAILABLE: return "solver variant not compiled in or no GPU";
    }
    return "unknown solver status";
}
