/* The simulation core's state (cs_sim.c) and the parts of it kept in files of their own:
 * cs_sim_output.c writes the output file (metadata, samples, spikes, bmtk's reports). Private
 * to src/core. */
#ifndef CS_SIM_INTERNAL_H
#define CS_SIM_INTERNAL_H

#include "cs_artcell.h"
#include "cs_backend.h"
#include "cs_backend_choose.h"
#include "cs_build.h"
#include "cs_dist.h"
#include "cs_memsink.h"
#include "cs_output.h"
#include "cs_sim.h"

struct cs_sim {
    const cs_model *m;
    cs_run_options o;
    double dt, tfinal;          /* [ms] */
    int64_t nsteps;
    int epoch_steps;
    int base_stride;            /* backend samples every base_stride steps */
    int *pop_stride;            /* [npop] population p keeps every pop_stride/base_stride row */
    int threads;
    cs_network_desc net;        /* this rank's share of the cells */
    int rank, nrank;
    uint64_t *part;             /* [nrank + 1] rank r owns gids [part[r], part[r+1]) */
    int lag;                    /* 1: an epoch's spikes reach their targets after the next epoch ran
                                   (the exchange overlaps it; epochs are half the min delay) */
    int half_epoch;             /* steps in half the min delay (0: less than a step) */
    int pipelined;              /* 1: epoch k + 1 is launched before epoch k is collected (one
                                   process, a backend that allows it: the GPU never waits for the
                                   host between epochs; epochs are half the min delay) */
    cs_dist dist;
    uint64_t total_cv;          /* CVs of the whole network */
    uint64_t nsyn_own, nsyn_coalesced; /* the cells' own synapses, and those of them coalesced
                                          into an earlier one's instance (cs_network_desc) */
    cs_status werr;             /* an output failure not yet agreed on */
    cs_profile prof_min, prof_max; /* over ranks, at the end */
    const cs_backend_ops *ops;
    cs_backend_choice choice;   /* how "auto" chose the backend and the solver */
    cs_backend *be;
    cs_artcells *art;           /* this rank's artificial cells (NULL: none) */
    size_t nwconn;              /* connections to synapses that take weight vectors (net.wvec[0, nwconn)), */
    size_t *wconn;              /* ... by ascending model index; the model events' follow */
    size_t *wvec_inst;          /* [net.nwvec] (net.wvec_inst) */
    size_t *out_first;          /* [ncell_global + 1] outgoing connections of each source gid ... */
    size_t *out_conn;           /* ... to this rank's cells: connection indices sorted by source */
    cs_output *out;
    int pario;                  /* 1: every rank writes its part of one file (parallel HDF5);
                                   0: rank 0 writes it, the samples gathered to it */
    uint64_t *pcols;            /* pario: [nprobe] report columns of this rank's probes, by
                                   report (report_probe_first), ascending within each ... */
    size_t *pperm;              /* ... and the local probe of each */
    double *colbuf;             /* pario: [max rows × nprobe] an epoch's kept rows */
    cs_target_event *evbuf;
    size_t cap_ev;
    int64_t *pop_rows;          /* [npop] sample rows written */
    uint64_t nspike;
    uint64_t *pop_spikes;       /* [npop] */
    cs_profile prof;
    double wall;
    cs_spike *spk;              /* the last epoch's spikes and samples, kept while the next runs */
    size_t nspk, cap_spk;
    double *smp;
    size_t nrow, cap_smp;
    /* resumable runs (cs_sim_run_to): where the run stands between calls */
    int started;                /* the initial state and row 0 are done */
    int64_t step;               /* steps done */
    int64_t row;                /* the next base sample row */
    int64_t finalized;          /* the step at which the end of the run was last processed; -1 */
    double last_flush;          /* [s] */
    double flush_every;         /* [s] wall time between flushes: 1, or CABLESIM_FLUSH_SECONDS */
    cs_status failed;           /* a failed run: later calls repeat its message */
    char failmsg[1024];
    int keep;                   /* results kept in memory (mem) */
    cs_memsink mem;
};

/* The population of global cell gid and the cell's index in it. */
int cs__sim_gid_pop(const cs_model *m, uint64_t gid, int *index);
/* The output file's metadata, spike populations and reports (at set-up). */
/* The first population whose output name (cs_population_output_name: several SONATA node types
 * of one SONATA population share one) is population p's (cs_sim_output.c). */
int cs__sim_first_of_output(const cs_model *m, int p);
cs_status cs__sim_describe_output(cs_sim *s);
/* One epoch's samples: base row r was taken at step (row0 + r)·base_stride. Collective. */
cs_status cs__sim_write_samples(cs_sim *s, int64_t row0, size_t nrow, const double *local);
/* One epoch's spikes (any order), by population, to the file and the memory sink. */
cs_status cs__sim_write_spikes(cs_sim *s, const cs_spike *sp, size_t n);
/* The profile, the run's wall time, closing the file (complete or marked incomplete), then
 * bmtk's reports and the sort by id where the model asks for them (rank 0). */
cs_status cs__sim_finish_output(cs_sim *s, int complete);

#endif
