/* From a model to a backend-independent description of the network: cells with their
 * discretised geometry, every mechanism instance, synapses, detectors and probes. Backends
 * (CPU, CUDA) build their own state from this once, at set-up. */
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
    double cm;                   /* [µF/cm²] */
    double Ra;                   /* [Ω·cm] */
    double v_init;               /* [mV] */
} cs_cell_desc;

/* One mechanism instance on one CV of one cell. */
typedef struct {
    int cell;                    /* index into cells (== gid) */
    int node;                    /* CV within the cell */
    const cs_mech_type *type;
    double weight;               /* area·1e-2 for density mechanisms, 1 for point ones */
    double param[CS_MAX_PARAMS];
} cs_instance_desc;

typedef struct {
    int cell, node;
    double threshold;            /* [mV] */
} cs_detector_desc;

typedef struct {
    int cell, node;
} cs_probe_desc;

typedef struct {
    size_t ncell;
    cs_cell_desc *cells;
    int ngeom;
    cs_geometry *geoms;          /* owned */
    size_t ninst;
    cs_instance_desc *inst;      /* sorted by cell, then mechanism order of appearance */
    size_t *syn_instance;        /* [ncell × max_syn] instance index of synapse k of a cell, or SIZE_MAX */
    int max_syn;
    size_t ndet;
    cs_detector_desc *det;       /* at most one per cell, sorted by cell */
    size_t nprobe;
    cs_probe_desc *probes;       /* grouped by population, in report element order */
    size_t *pop_probe_first;     /* [npop + 1] probes of population p: [first[p], first[p+1]) */
    uint64_t total_cv;
} cs_network_desc;

cs_status cs_build_network(const cs_model *m, cs_network_desc *out);
void cs_network_desc_free(cs_network_desc *d);

#endif
