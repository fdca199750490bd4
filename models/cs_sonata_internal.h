/* Private to the SONATA reader (models/cs_sonata_*.c): the tables it reads and the state it
 * shares between its files. */
#ifndef CS_SONATA_INTERNAL_H
#define CS_SONATA_INTERNAL_H

#include <cjson/cJSON.h>
#include <hdf5.h>

#include "cs_sonata.h"

/* A SONATA CSV type file: space-separated, a header row, values quoted with ' or " or bare. */
typedef struct {
    char path[CS_PATH_MAX];
    int ncol, nrow;
    char **head;  /* [ncol] */
    char **cell;  /* [nrow × ncol] row-major; "NULL" / "" when absent */
} cs__csv;

cs_status cs__csv_read(const char *path, cs__csv *t);
cs_status cs__csv_parse(const char *text, size_t len, const char *path, cs__csv *t);
void cs__csv_free(cs__csv *t);
int cs__csv_col(const cs__csv *t, const char *name);            /* -1 when absent */
const char *cs__csv_get(const cs__csv *t, int row, const char *col); /* NULL when absent or "NULL" */
int cs__csv_row_of(const cs__csv *t, const char *idcol, long long id); /* -1 when absent */

/* HDF5 datasets read whole, with one-line errors naming the file and dataset. */
int cs__h5_exists(hid_t loc, const char *name);
cs_status cs__h5_read_i64(hid_t loc, const char *file, const char *name, int64_t **v, size_t *n);
cs_status cs__h5_read_f64(hid_t loc, const char *file, const char *name, double **v, size_t *n);
/* A string attribute of a dataset or group ("" when absent). */
void cs__h5_attr_string(hid_t obj, const char *attr, char *buf, size_t n);
hid_t cs__h5_open_file(const char *path); /* errors silenced; < 0 when it is no HDF5 file */

/* One SONATA node population. Cells of a non-virtual one are the cablesim populations
 * [pop0, pop1) (one per run of consecutive nodes of one node type), gids gid0 + node_id. */
typedef struct {
    char name[CS_NAME_MAX];
    char file[CS_PATH_MAX];
    size_t n;
    int64_t *type_id;     /* [n] node_type_id */
    int64_t *group_id;    /* [n] */
    int64_t *group_index; /* [n] */
    int *type_row;        /* [n] row of its type in types */
    cs__csv *types;       /* owned by the circuit */
    int is_virtual;
    int pop0, pop1;
    uint64_t gid0;
    double **spikes;      /* virtual: [n] spike times [ms] of each node (input spike files) */
    size_t *nspike;       /* [n] */
    size_t *capspike;
    double *tuning;       /* [n] tuning_angle (gaussianLL), NaN when none */
    uint32_t *rmask;      /* [n] the reports recording each node (bit r: c->rep[r]); NULL: none */
} cs__npop;

/* A membrane report of the config (cs_sonata_reports.c), in config order. */
enum { CS__MAX_REPORTS = 16 };
struct cs__report {
    char name[CS_NAME_MAX];
    char file[CS_NAME_MAX];  /* its file in output_dir, without ".h5": file_name, else the name */
    double t_start, t_end, dt; /* [ms] start_time, end_time (< 0: tstop), dt (0: the run's) */
    unsigned sections;    /* mask of region tags */
    int nvar;
    const cJSON *var;     /* variable_name: a string, or an array of nvar strings (in c->root) */
};

typedef struct {
    char path[CS_PATH_MAX];       /* the simulation config */
    char dir[CS_PATH_MAX];        /* its folder */
    cJSON *root;                  /* the merged, manifest-resolved config */
    int npop;
    cs__npop *pops;
    int ncsv;
    cs__csv *csv;                 /* every type file */
    double spike_threshold;       /* [mV] */
    double dL;                    /* [µm] */
    double v_init;                /* [mV] */
    char morph_dir[CS_PATH_MAX], biophys_dir[CS_PATH_MAX], syn_dir[CS_PATH_MAX], point_dir[CS_PATH_MAX];
    struct cs__shape {            /* [m->npop] each cablesim population's cell as NEURON builds it */
        cs_morph morph;
        int nsec;
        int *sec;                 /* [nsec] branch of each SONATA section id */
    } *shape;
    int nshape;
    /* synapses collected from the edges before they are sorted by cell (cs_sonata_edges.c) */
    size_t nsyn, capsyn;
    struct cs__syn { int pop; cs_cell_synapse s; size_t order; } *syn;
    size_t *conn_syn;             /* [m->nconn] index into syn of each connection */
    size_t *event_syn;            /* [m->nevent] */
    size_t capconn, capevent;
    int nrep;
    struct cs__report rep[CS__MAX_REPORTS];
    /* bmtk's random placement: the candidate segments of a (shape, target sections, distance
     * range), built once and shared by every edge of that kind (cs_sonata_edges.c) */
    struct cs__placement {
        int shape;
        unsigned mask;
        double dmin, dmax;      /* [µm] */
        size_t ncand;
        struct cs__cand { cs_location at; double cum; } *cand; /* cum: running sum of overlaps [µm] */
    } *placement;
    int nplacement, capplacement;
} cs__circuit;

/* A path from the config: absolute, or relative to the config's folder. */
/* A JSON object from a file (configs, components); one line naming the file and line otherwise. */
cs_status cs__read_json(const char *path, cJSON **root);
/* Free a circuit's tables (not the model). */
void cs__circuit_free(cs__circuit *c);
/* dir/p, or p when absolute; "" when too long (so that opening it fails with its message). */
void cs__path(const char *dir, const char *p, char *out, size_t n);
void cs__resolve(const cs__circuit *c, const char *p, char *out, size_t n);
/* A population by name, -1 when none. */
int cs__npop_find(const cs__circuit *c, const char *name);
/* Node ids of a node set (docs/sonata-input.md): *pop the population, ids owned by the caller. */
cs_status cs__node_set(const cs__circuit *c, const char *where, const cJSON *set, int *pop, int64_t **ids,
                       size_t *n);

cs_status cs__read_nodes(cs__circuit *c, cs_model *m);          /* cs_sonata_nodes.c */
cs_status cs__read_inputs(cs__circuit *c, cs_model *m);         /* cs_sonata_inputs.c: spikes, clamps */
cs_status cs__read_edges(cs__circuit *c, cs_model *m);          /* cs_sonata_edges.c */
/* cs_sonata_reports.c: the reports and the nodes each records (before the populations are made,
 * so that the cells of a population are all in the same reports), their rows checked against the
 * run's dt and tstop [ms] (read_run's, defaults included); then their probes. */
cs_status cs__report_cells(cs__circuit *c, double dt, double tstop);
cs_status cs__read_reports(cs__circuit *c, cs_model *m, cs_sonata_run *run);
/* The cells of ps among the node ids ids[n] (of ps's SONATA population): their number, and
 * their indices in ps into out when out is not NULL. */
int cs__cells_of(const cs_population_spec *ps, const int64_t *ids, size_t n, int *out);
/* The biophysics of a node type (dynamics_params, model_processing) onto population ps. */
cs_status cs__biophysics(const cs__circuit *c, cs_model *m, const char *where, const char *processing,
                         const char *dyn_path, const char *swc_path, cs_population_spec *ps); /* cs_sonata_dynamics.c */
/* A mechanism by name: the built-ins, then the model's catalogues; NULL when none. */
const cs_mech_type *cs__mech(const cs_model *m, const char *name);

#endif
