/* From a model to a backend-independent description of the network: cells with their
 * discretised geometry, every mechanism instance, synapses, detectors and probes. Backends
 * (CPU, CUDA) build their own state from this once, at set-up.
 *
 * A description holds one rank's share of the cells: the contiguous gids [gid0, gid0 + ncell)
 * (all of them in a single process). Cells are numbered locally (local index = gid - gid0); the
 * `cell` fields below are local indices, and cs_cell_desc.gid is the global id. */
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
    size_t ncell;
    cs_cell_desc *cells;
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
} cs_network_desc;

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
