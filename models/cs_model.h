/* The model: what a JSON model file (docs/model-format.md) describes, parsed and validated.
 * Morphologies are kept as specifications; the simulation builds cells from them. */
#ifndef CS_MODEL_H
#define CS_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "cs_catalogue.h"
#include "cs_error.h"
#include "cs_geometry.h"
#include "cs_mech.h"
#include "cs_morph.h"

#define CS_MAX_PARAMS 32   /* parameters of one mechanism */
#define CS_MAX_STATES 64   /* states (STATE and ASSIGNED variables) of one mechanism */
#define CS_NTAG 32         /* region tags (bits of a region mask) */
#define CS_NAME_MAX 64
#define CS_PATH_MAX 4096
#define CS_MAX_WEIGHTS 8   /* a connection's weight vector (NET_RECEIVE's arguments) */

typedef struct {
    int branch;
    double pos; /* relative position along the branch, [0, 1] */
} cs_location;

typedef enum {
    CS_MORPH_SWC, CS_MORPH_SOMA, CS_MORPH_CABLE, CS_MORPH_BALL_AND_STICK, CS_MORPH_RANDOM_TREE,
    CS_MORPH_BRANCHES
} cs_morph_kind;

typedef struct {
    int parent;     /* parent branch, -1 for the root */
    double parent_pos; /* where on the parent it attaches, [0, 1]: NEURON's connect(parent(x)); 1 = distal end */
    double length;  /* [µm] */
    double radius;  /* [µm] */
    int tag;        /* CS_TAG_* */
    int ncv;        /* 0: policy */
} cs_branch_spec;

typedef struct {
    cs_morph_kind kind;
    char swc_path[CS_PATH_MAX];
    cs_swc_options swc;
    cs_axon_stub axon_stub;                      /* SWC only: Allen's axon replacement (cs_allen.h) */
    double radius, length;                       /* soma / cable [µm] */
    double soma_radius, dend_length, dend_radius; /* ball and stick [µm] */
    int ncv;                                     /* cable / ball-and-stick dendrite CVs, 0 = policy */
    cs_random_tree_params tree;
    int nbranch;
    cs_branch_spec *branches;                    /* explicit branches */
} cs_morph_spec;

/* Region masks: bit (1 << tag). */
#define CS_REGION_ALL 0xffffffffu

typedef struct {
    const cs_mech_type *type;
    unsigned region_mask;
    double param[CS_MAX_PARAMS];
} cs_density_spec;

typedef struct {
    char name[CS_NAME_MAX];
    const cs_mech_type *type;   /* a point mechanism */
    cs_location loc;
    double param[CS_MAX_PARAMS];
    int ncells;                 /* stimuli: the cells it applies to; -1 = all */
    int *cells;
    int per_cell;               /* synapses: a prototype of cell synapses (cs_cell_synapse), placed
                                   on no cell by itself */
} cs_point_spec;

/* A synapse of one cell at its own place (SONATA edges: each edge has its own synapses).
 * Connections and events name it as synapse nsyn + j: the j-th of its cell's own synapses. */
typedef struct {
    int cell;                   /* index within the population; the list is sorted by cell */
    int proto;                  /* the population's syn[] entry giving its type and parameters */
    cs_location loc;
} cs_cell_synapse;

/* What a probe records (docs/model-format.md, "probes.variables"). */
typedef enum {
    CS_PROBE_V,        /* the membrane voltage [mV] */
    CS_PROBE_DENSITY,  /* "mech.state": a state of a density mechanism at the location's CV */
    CS_PROBE_SYNAPSE,  /* "name.state": a state of the population's synapse `name` */
    CS_PROBE_STIMULUS, /* "name.state": a state of the population's stimulus `name` */
    CS_PROBE_ION,      /* "ina", "ik", "ica": the CV's ion current density [mA/cm²] */
    CS_PROBE_CONC_I,   /* "nai", "ki", "cai": the CV's inside concentration [mM] */
    CS_PROBE_CONC_O,   /* "nao", "ko", "cao": the CV's outside concentration [mM] */
    CS_PROBE_EREV,     /* "ena", "ek", "eca": the CV's reversal potential [mV] */
    CS_PROBE_IMEM      /* "i_membrane": the CV's total membrane current [nA] (capacitive + ionic,
                          electrodes excluded: NEURON's i_membrane_) */
} cs_probe_kind;

typedef struct {
    char name[CS_NAME_MAX];     /* as written: "v", "hh.m", "syn.g", "ina" */
    cs_probe_kind kind;
    const cs_mech_type *type;   /* DENSITY, SYNAPSE, STIMULUS: the mechanism */
    int target;                 /* SYNAPSE / STIMULUS: index into syn / stim */
    int index;                  /* state index in type->states, or CS_ION_* */
    const char *unit;           /* "mV", the state's unit, "mA/cm2" (static or the type's) */
} cs_probe_var;

typedef struct {
    int ncells;                 /* -1 = all */
    int *cells;
    int nloc;
    cs_location *locs;
    double interval;            /* [ms] */
    int nvar;                   /* variables recorded (["v"] when "variables" is absent) */
    cs_probe_var *vars;
    int *loc_section;           /* [nloc] or NULL: each location's SONATA section id (the
                                   element_ids of a report in bmtk's layout) */
} cs_probe_spec;

/* The columns of one SONATA report taken from one population's probes (docs/sonata-input.md,
 * "Reports"): variable `var` of every probed cell, at the locations loc[nloc] of each (indices
 * into probes.locs, ascending). The run copies them to model.report_dir/<file>.h5. */
typedef struct {
    char file[CS_NAME_MAX];     /* the report file's name, without ".h5" */
    int pop;                    /* index into cs_model.pops */
    int var;                    /* index into its probes.vars */
    int nloc;
    int *loc;                   /* [nloc] (owned) */
    double t_start, t_end, dt;  /* [ms] bmtk's start_time, end_time (< 0: tstop) and dt (0: every
                                   sample) of the report's rows */
} cs_report_part;

typedef struct {
    char name[CS_NAME_MAX];
    int count;
    uint64_t first_gid;
    cs_morph_spec morph;
    cs_cv_policy policy;
    double cm;       /* [µF/cm²] (the JSON's single value, or 1 when given per region) */
    double cm_tag[CS_NTAG]; /* [µF/cm²] specific capacitance by region tag */
    double Ra;       /* [Ω·cm] (the JSON's single value, or 100 when given per region) */
    double Ra_tag[CS_NTAG]; /* [Ω·cm] axial resistivity by region tag */
    double v_init;   /* [mV] */
    int ndensity;
    cs_density_spec *density;
    int nsyn;
    cs_point_spec *syn;
    int nstim;
    cs_point_spec *stim;
    int has_detector;
    cs_location detector;
    double threshold; /* [mV] */
    int has_probes;
    cs_probe_spec probes;
    double ion_e[CS_NION][CS_NTAG]; /* [mV] reversal potential of each ion by region tag */
    size_t ncellsyn;                /* cells' own synapses, sorted by cell */
    cs_cell_synapse *cellsyn;
    char output_name[CS_NAME_MAX];  /* "" or the population its spikes are written under (a SONATA
                                       population split by node type into several) */
    uint64_t output_id0;            /* node id of the first cell under output_name */
    double ion_ci[CS_NION][CS_NTAG]; /* [mM] initial inside concentration by region tag */
    double ion_co[CS_NION][CS_NTAG]; /* [mM] initial outside concentration by region tag */
    /* Artificial cells ("artificial" in the model, docs/model-format.md): when non-NULL, every
     * cell of the population is an instance of this ARTIFICIAL_CELL type (NetStim, IntFire1, a
     * catalogue's), with these parameters, and has no morphology, mechanisms, synapses, stimuli,
     * detector or probes; it receives events through connections (no "synapse") and its spikes
     * reach its connections (src/cs_artcell.c). A SONATA front end fills these two fields. */
    const cs_mech_type *artificial;
    double artificial_param[CS_MAX_PARAMS];
    double **play;    /* VecStim: [count] spike times of each cell [ms], ascending, >= 0 (owned) */
    int *nplay;       /* [count] their numbers; NULL for other types */
} cs_population_spec;

typedef struct {
    uint64_t source, target; /* gids */
    int synapse;             /* index into the target population's synapses (0 for an artificial cell) */
    int nweight;             /* 1, or the length of the model's weight list (cs_model_conn_weights) */
    double weight;           /* [µS] (an artificial cell's: in its NET_RECEIVE's unit); the first of a list */
    double delay;            /* [ms] */
} cs_connection;

/* The weight vector of a connection given as a list ("weight": [w0, w1, ...]). */
typedef struct {
    size_t conn;                 /* index into cs_model.conns */
    double w[CS_MAX_WEIGHTS];    /* missing entries are 0 */
} cs_conn_weights;

typedef struct {
    uint64_t target;
    int synapse;
    double time;   /* [ms] */
    double weight; /* [µS] */
} cs_event;

typedef struct {
    char path[CS_PATH_MAX];  /* the model file, or "<default model>" */
    double tfinal, dt;       /* [ms] */
    double celsius;          /* [°C] */
    uint64_t seed;
    char backend[16];
    int threads;
    int report_bits;         /* 32 (float32 reports, default) or 64 */
    int npop;
    cs_population_spec *pops;
    uint64_t ncells;
    size_t nconn;
    cs_connection *conns;
    size_t nevent;
    cs_event *events;
    size_t nxweight;
    cs_conn_weights *xweights;   /* connections with weight lists, by ascending conn */
    cs_catalogue_set catalogues; /* "catalogues": mechanisms compiled from NMODL */
    char report_dir[CS_PATH_MAX]; /* SONATA: where bmtk's report files go (output_dir); "" none */
    int nreport_part;             /* SONATA reports: their columns, grouped by file in file order */
    cs_report_part *report_parts;
    int spikes_by_id;             /* SONATA spikes_sort_order "id": the file's spikes sorted by node id
                                     after the run (else by time) */
    int separate_synapses;        /* 1: every synapse of a cell its own instance; 0 (the default):
                                     a cell's own synapses of a linear type at one CV with equal
                                     parameters share one (cs_mech_type.linear) */
} cs_model;

/* Default reversal potentials [mV] (NEURON's at its default concentrations): na 50, k -77,
 * ca 132.4579 (12.5·ln(2/5e-5), as NEURON's ca_ion initialises eca). */
#define CS_ION_DEFAULT_E {50.0, -77.0, 132.4579}

/* Size limits, checked while parsing so an absurd "count" or "indegree" is a one-line error
 * rather than an allocation that exhausts memory: ~10 kB per cell and 32 bytes per
 * connection put these near 100 GB and 3 GB. */
#define CS_MODEL_MAX_CELLS 10000000        /* cells in all populations together */
#define CS_MODEL_MAX_CONNECTIONS 100000000 /* connections after expanding ring/random rules */

/* NEURON's default reversal potentials and concentrations in every region of ps. */
void cs_population_ion_defaults(cs_population_spec *ps);

/* The population ps's cells are known by in the output, the summary and the API: a SONATA
 * population's name for each of the groups it is split into (by node type and by the reports
 * that record its nodes; their cell k is node output_id0 + k there), else ps's own name. */
const char *cs_population_output_name(const cs_population_spec *ps);

/* Parse a model from JSON text; `name` names it in messages, `base_dir` resolves SWC paths. */
cs_status cs_model_parse(const char *json, const char *name, const char *base_dir, cs_model *out);
/* Read and parse a model file. */
cs_status cs_model_load_file(const char *path, cs_model *out);
/* The embedded default model (models/default.json). */
cs_status cs_model_load_default(cs_model *out);
void cs_model_free(cs_model *m);

/* A morphology of explicit cylindrical branches, each attached at its parent's distal end. */
cs_status cs_morph_from_branches(const cs_branch_spec *b, int n, cs_morph *out);

/* The weights [CS_MAX_WEIGHTS] of connection k given as a list, or NULL (its single weight). */
const double *cs_model_conn_weights(const cs_model *m, size_t k);

/* VecStim spike times from text: lines "CELL TIME" (cell index in [0, count), time [ms] >= 0),
 * '#' comments and blank lines skipped, each cell's times ascending. name names the file in
 * messages (NAME:LINE: ...). times[c] (malloc'd, may be NULL when n[c] = 0). */
cs_status cs_spike_times_parse(const char *text, const char *name, int count, double **times, int *n);

/* Synapse syn of cell `cell` of ps: one of the population's synapses, or (syn >= nsyn) the
 * prototype of the cell's own synapse syn - nsyn (cs_cell_synapse); NULL when there is none. */
const cs_point_spec *cs_population_synapse(const cs_population_spec *ps, int cell, int syn);

/* Population and index within it of a global cell id. */
int cs_model_population_of(const cs_model *m, uint64_t gid);

#endif
