#include "cs_profile.h"

const char *const cs_phase_names[CS_PHASE_COUNT] = {
#define CS__PH(name, text) text,
    CS_PHASE_LIST(CS__PH)
#undef CS__PH
};

void cs_profile_shares(const cs_profile *p, double share[CS_PHASE_COUNT]) {
    double total = 0;
    for (int k = 0; k < CS_PHASE_COUNT; ++k) total += p->seconds[k];
    for (int k = 0; k < CS_PHASE_COUNT; ++k) share[k] = total > 0 ? p->seconds[k] / total : 0;
}

void cs_profile_print(const cs_profile *p, double wall_seconds, int threads, const char *backend, FILE *f) {
    double share[CS_PHASE_COUNT], step = 0;
    cs_profile_shares(p, share);
    for (int k = 0; k < CS_PHASE_STEP_COUNT; ++k) step += p->seconds[k];
    fprintf(f, "\nprofile (%d thread%s; seconds are summed over threads)\n", threads, threads == 1 ? "" : "s");
    if (backend) fprintf(f, "  %s\n", backend);
    fprintf(f, "  %-22s %12s %8s %10s\n", "phase", "seconds", "share", "of a step");
    for (int k = 0; k < CS_PHASE_COUNT; ++k) {
        if (k < CS_PHASE_STEP_COUNT)
            fprintf(f, "  %-22s %12.4f %7.1f%% %9.1f%%\n", cs_phase_names[k], p->seconds[k],
                    100 * share[k], step > 0 ? 100 * p->seconds[k] / step : 0);
        else
            fprintf(f, "  %-22s %12.4f %7.1f%% %10s\n", cs_phase_names[k], p->seconds[k], 100 * share[k], "-");
    }
    fprintf(f, "  solver share of a step: %.1f%%   wall time of the run: %.3f s\n",
            step > 0 ? 100 * p->seconds[CS_PHASE_SOLVE] / step : 0, wall_seconds);
}
