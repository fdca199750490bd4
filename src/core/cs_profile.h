/* Per-phase time accounting for the profile table and the output file. */
#ifndef CS_PROFILE_H
#define CS_PROFILE_H

#include <stdio.h>
#include <time.h>

/* The phases of a step (the first CS_PHASE_STEP_COUNT), then per-epoch phases. */
#define CS_PHASE_LIST(X)                          \
    X(CS_PHASE_EVENTS, "event delivery")          \
    X(CS_PHASE_CURRENT, "mechanism currents")     \
    X(CS_PHASE_ASSEMBLE, "assembly")              \
    X(CS_PHASE_SOLVE, "solve")                    \
    X(CS_PHASE_UPDATE, "state update")            \
    X(CS_PHASE_DETECT, "threshold detection")     \
    X(CS_PHASE_SAMPLE, "sampling")                \
    X(CS_PHASE_EXCHANGE, "spike exchange")        \
    X(CS_PHASE_OUTPUT, "output")

typedef enum {
#define CS__PH(name, text) name,
    CS_PHASE_LIST(CS__PH)
#undef CS__PH
    CS_PHASE_COUNT
} cs_phase;

#define CS_PHASE_STEP_COUNT (CS_PHASE_SAMPLE + 1) /* phases done inside every step */

extern const char *const cs_phase_names[CS_PHASE_COUNT];

typedef struct {
    double seconds[CS_PHASE_COUNT]; /* [s] summed over threads */
} cs_profile;

/* Monotonic clock [s]. */
static inline double cs_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Share of each phase in the total of all phases [0, 1]. */
void cs_profile_shares(const cs_profile *p, double share[CS_PHASE_COUNT]);
/* The profile table: phase, seconds, share; then the solver's share of a step. */
/* `backend` names the backend and the solver it chose (may be NULL). */
void cs_profile_print(const cs_profile *p, double wall_seconds, int threads, const char *backend, FILE *f);

#endif
