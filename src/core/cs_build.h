/* From a model to a backend-independent description of the network: cells with their
 * discretised geometry, every mechanism instance, synapses, detectors and probes. Backends
 * (CPU, CUDA) build their own state from this once, at set-up.
 *
 * A description holds one rank's share of the cells: the contiguous gids [gid0, gid0 + nshare)
 * (all of them in a single process). Cells with a morphology are numbered locally in gid order
 * (cells[], the backends' cells; local[gid - gid0] maps a gid to its index); the `cell` fields
 * below are those indices, and cs_cell_desc.gid is the global id. Artificial cells (no
 * morphology; run by the core, src/cs_artcell.c) are listed apart in art[]. */
#ifndef CS_BUILD_H
#define CS_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "cs_geometry.h"
#include "cs_model.h"

typedef struct {
    uint64_t gid;
    int pop, index;              /* population and index within it */
    const cs_geometry *geom;     /* shared between identical cells */
    const double *cm;            /* [CS_NTAG] specific capacitance by region tag [µF/cm²] (the
                                    population's, owned by the model) */
    const double *Ra;            /* [CS_NTAG] axial resistivity by region tag [Ω·cm] (the population's) */
    double v_init;               /* [mV] */
    const double (*ion_e)[CS_NTAG]; /* [CS_NION][CS_NTAG] reversal potentials by region tag [mV]
                                       (the population's, owned by the model) */
    const double (*ion_ci)[CS_NTAG]; /* [CS_NION][CS_NTAG] initial concentrations by region tag [mM] */
    const double (*ion_co)[CS_NTAG];
} cs_cell_desc;

/* One mechanism instance on one CV of one cell. */
typedef struct {
    int cell;                    /* local index into cells */
    int node;                    /* CV within the cell */
    const cs_mech_type *type;
    double weight;               /* area·1e-2 for density mechanisms, 1 for point ones */
    const double *param;         /* [CS_MAX_PARAMS] the spec's values, owned by the model (which
                                    outlives the description): shared, not copied per instance */
} cs_instance_desc;

typedef struct {
    int cell, node;
    double threshold;            /* [mV] */
} cs_detector_desc;

/* An artificial cell: an instance of its population's ARTIFICIAL_CELL type. */
typedef struct {
    uint64_t gid;
    int pop, index;              /* population and index within it */
} cs_art_desc;

typedef struct {
    int cell, node;              /* local cell index, CV */
    uint64_t col;                /* element (column) of its report's whole report */
    cs_probe_kind kind;          /* what it reads: the CV's v, a state of an instance, an ion current */
    size_t inst;                 /* DENSITY / SYNAPSE / STIMULUS: instance (index into inst) */
    int index;                   /* its state index in the type's states, or ION, CONC_I, CONC_O,
                                    EREV: CS_ION_* */
} cs_probe_desc;

/* One report: a population's probes of one variable (cs_probe_var), the voltage's first. */
typedef struct {
    int pop;
    const cs_probe_var *var;     /* owned by the model */
} cs_report_desc;

typedef struct {
    uint64_t gid0;               /* first gid of this share */
    uint64_t ncell_global;       /* cells of the whole network */
    uint64_t nshare;             /* gids of this share (cells with a morphology and artificial ones) */
    int64_t *local;              /* [nshare] index into cells (>= 0), or -1 - k for art[k] */
    size_t ncell;                /* cells with a morphology */
    cs_cell_desc *cells;
    size_t nart;
    cs_art_desc *art;            /* artificial cells, in gid order */
    int ngeom;
    cs_geometry *geoms;          /* owned */
    size_t ninst;
    cs_instance_desc *inst;      /* sorted by cell, then mechanism order of appearance */
    size_t *syn_instance;        /* [ncell × max_syn] instance index of synapse k of a local cell, or SIZE_MAX */
    int max_syn;
    size_t ndet;
    cs_detector_desc *det;       /* at most one per cell, sorted by cell */
    size_t nprobe;
    cs_probe_desc *probes;       /* grouped by report, in report element order */
    int nreport;                 /* reports: (population, variable), by population, then in the
                                    order of its probes.variables; every rank the same */
    cs_report_desc *reports;     /* [nreport] */
    size_t *report_probe_first;  /* [nreport + 1] probes of report r: [first[r], first[r+1]) */
    uint64_t *report_probe_ncol; /* [nreport] elements of report r's whole report (all ranks) */
    uint64_t total_cv;           /* CVs of this share */
    size_t *cell_inst_first;     /* [ncell + 1] instances of local cell c: [first[c], first[c+1]) */
    size_t nsyn_own;             /* cells' own synapses (cs_cell_synapse) placed */
    size_t nsyn_coalesced;       /* cells' own synapses that share an earlier one's instance (a
                                    linear type at the same CV with equal parameters; cs_model's
                                    separate_synapses turns this off) */
    /* Weight vectors of the connections (and model events) to synapses whose type takes one
     * (cs_mech_takes_vector), filled and owned by the simulation core, kept for the whole run:
     * events carry them (cs_target_event.w), and the backend runs the type's net_init on each at
     * t = 0. CPU backend only. */
    size_t nwvec;
    const size_t *wvec_inst;     /* [nwvec] the synapse instance of each */
    double *wvec;                /* [nwvec × CS_MAX_WEIGHTS] */
} cs_network_desc;

/* A synapse type whose events carry their connection's weight vector: NET_RECEIVE with several
 * arguments or an INITIAL block. */
static inline int cs_mech_takes_vector(const cs_mech_type *t) {
    return !t->artificial && t->net_receive_vec && (t->nweight > 1 || t->net_init);
}

/* The whole network (a single process). */
cs_status cs_build_network(const cs_model *m, cs_network_desc *out);
/* The share of gids [gid0, gid1). */
cs_status cs_build_network_range(const cs_model *m, uint64_t gid0, uint64_t gid1, cs_network_desc *out);

/* Cut the gids into nrank contiguous shares of about equal estimated cost (CVs plus mechanism
 * instances weighed by their states, on the CPU or, for_gpu, on the GPU; a random-tree population
 * is estimated from its first cell): rank r owns [first[r], first[r+1]). first has nrank + 1
 * entries. The same on every rank (no communication). */
cs_status cs_build_partition(const cs_model *m, int nrank, int for_gpu, uint64_t *first);

/* The cell (index within its population) of report node k of population ps. */
int cs_probe_cell(const cs_population_spec *ps, int k);
void cs_network_desc_free(cs_network_desc *d);
/* Free what only a backend's set-up reads (geometries, mechanism instances, detectors, probes:
 * about 100 B per compartment), once the backend is created; the cells (gid, population,
 * v_init; geom becomes NULL), syn_instance and every count stay. The backend must not be
 * re-created from d afterwards. */
void cs_network_desc_release_setup(cs_network_desc *d);

#endif
