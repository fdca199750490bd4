/* Mechanisms: a small ABI (a cut-down Arbor mechanism_abi). A mechanism type describes its
 * parameters and states and provides init / current / advance (and net_receive for synapses)
 * over a structure-of-arrays view of its instances. The simulator allocates every array;
 * mechanisms never allocate.
 *
 * Sign convention (NEURON's): membrane current is outward positive. current() ADDS to the
 * per-CV accumulators i [nA] and g [µS] the instance's current times its weight and its
 * conductance dI/dV times its weight:
 *   density mechanisms compute densities (mA/cm², S/cm²) and have weight = area·1e-2
 *     (µm² · mA/cm² → nA: 1 µm² = 1e-8 cm², 1 mA = 1e6 nA);
 *   point mechanisms compute nA and µS directly and have weight = 1.
 * An electrode (iclamp) injects current inward, so it adds −amplitude. */
#ifndef CS_MECH_H
#define CS_MECH_H

/* The version of this ABI. A catalogue (a shared library of mechanisms compiled from NMODL by
 * `cablesim build-catalogue`) exports int cs_mech_catalogue_abi(void) returning the version it
 * was compiled against, and const cs_mech_catalogue *cs_mech_catalogue_get(void); a catalogue
 * of another version is refused. Bump on any change of the structures below. */
#define CS_MECH_ABI_VERSION 9 /* 9: cs_mech_gpu_ops.advance_ahead, cs_mech_view.skip_outputs; 8: cs_mech_type.linear; 7: cs_mech_gpu_ops.current_many, advance_many; 6: advance_ion_free, the view's inst_*; 5: a GPU net_receive gets a step's events grouped by instance */

typedef enum { CS_MECH_DENSITY, CS_MECH_POINT } cs_mech_kind;

/* The event services of the simulation core, for artificial cells (ARTIFICIAL_CELL): their
 * NET_RECEIVE and INITIAL blocks call these through the view's `net` (NEURON's net_send,
 * net_event, net_move). Times are absolute [ms]. A self-event comes back to net_receive_vec
 * with its flag; a spike reaches the cell's connections after their delays. */
typedef struct cs_net_ctx cs_net_ctx;

/* Where the GPU keeps the current step (the CUDA backend's step context, on the device): a
 * kernel replayed from a CUDA graph reads the time there rather than from its arguments. */
typedef struct {
    long long step0; /* the epoch's first step */
    int k;           /* the current step's index within the epoch */
} cs_mech_step_ctx;
struct cs_net_ctx {
    void (*send)(cs_net_ctx *c, int instance, double t, double flag); /* self-event at t */
    void (*event)(cs_net_ctx *c, int instance, double t);             /* a spike at t */
    void (*move)(cs_net_ctx *c, int instance, double t);  /* the pending self-event to t */
    const double *const *play;  /* VecStim: [n] spike times per instance [ms], ascending */
    const int *nplay;           /* [n] their counts */
};

/* Ions with per-CV reversal potentials, current densities and concentrations. */
enum { CS_ION_NA, CS_ION_K, CS_ION_CA, CS_NION };

typedef struct {
    const char *name;
    const char *unit;
    double default_value;
    double min, max;      /* accepted range (inclusive) */
} cs_mech_field;

typedef struct {
    int n;                    /* number of instances */
    const int *node;          /* [n] CV index into v, i, g */
    const double *weight;     /* [n] see above */
    const double *v;          /* [ncv] membrane voltage [mV] */
    double *i;                /* [ncv] accumulated membrane current [nA], outward positive */
    double *g;                /* [ncv] accumulated conductance [µS] */
    double *const *param;     /* [nparam][n] */
    double *const *state;     /* [nstate][n] */
    double t;                 /* [ms] time at which currents are evaluated (step midpoint) */
    double dt;                /* [ms] */
    double celsius;           /* [°C] */
    /* ions (NULL unless the type reads or writes that ion): per CV */
    const double *ion_e[CS_NION]; /* [ncv] reversal potential [mV] */
    double *ion_i[CS_NION];   /* [ncv] ion current density [mA/cm²] summed over the mechanisms
                                 that write it, zeroed before each step's current() */
    /* concentrations (NULL unless the type reads or writes that ion's), per CV: read, and
       written by the mechanisms that WRITE them (one such instance per CV and type) */
    double *ion_ci[CS_NION];  /* [ncv] inside [mM] */
    double *ion_co[CS_NION];  /* [ncv] outside [mM] */
    cs_net_ctx *net;          /* artificial cells: the core's event services; NULL otherwise */
    /* On the GPU, t is not maintained in the view: when step_ctx (a device address) is set, a
     * kernel's t [ms] is (step0 + k + step_j)·dt + t_offset, the host's arithmetic (0 at events,
     * dt/2 at currents, dt at the state update, as the CPU backend's t). */
    const cs_mech_step_ctx *step_ctx;
    int step_j;
    double t_offset;          /* [ms] */
    /* GPU only: where current() puts each instance's contribution instead of adding it to its
     * CV; the CUDA backend then adds them CV by CV in the CPU's order (its gather), with no
     * atomics, the same sums every run. NULL: current() adds to i, g and ion_i itself. */
    double *inst_i, *inst_g;   /* [n] weight·i [nA], weight·g [µS] */
    double *inst_ion[CS_NION]; /* [n] ion current density [mA/cm²], for the ions the type writes */
    int block;                 /* GPU: threads per block of the state update's launch; 0: the
                                  type's own (docs/gpu.md, "Stream priorities") */
    int skip_outputs;          /* 1: current() need not store the ASSIGNED variables that only it
                                  reads (Exp2Syn's i and g): no probe reads them (ABI 9) */
} cs_mech_view;

/* The GPU half of a type (catalogues built with nvcc): the same calls over a view whose arrays
 * (param and state included, as device arrays of device pointers) live on the device; stream
 * is a cudaStream_t. current() adds with atomics (instances may share a CV), or writes each
 * instance's share to the view's inst_i, inst_g and inst_ion where they are set; net_receive
 * delivers the events [range[0], range[1]) of device arrays of instance indices and weights
 * [µS] (range is a device array, so a captured CUDA graph replays it step by step). The events
 * of a range come grouped by instance, each instance's in delivery order: instances may take
 * theirs in parallel, an instance's in order.
 * A kernel that reads t computes it from the view's step_ctx (see cs_mech_view). */
typedef struct {
    void (*init)(const cs_mech_view *m, void *stream);
    void (*current)(const cs_mech_view *m, void *stream);
    void (*advance)(const cs_mech_view *m, void *stream);
    void (*net_receive)(const cs_mech_view *m, const int *range, const int *instance, const double *weight,
                        void *stream);
    /* Several of one catalogue's types at once (ABI 7): the currents (or state updates) of the n
     * views views[t], type t given by its many_id ids[t], in one launch or a few. The same as
     * current() (advance()) for each view, in any order: only for types whose calls share no
     * output (currents into the gather's slots; state updates that touch no ion). NULL where the
     * type's GPU code was compiled alone (the built-in exp2syn's). */
    void (*current_many)(const cs_mech_view *const *views, const int *ids, int n, void *stream);
    void (*advance_many)(const cs_mech_view *const *views, const int *ids, int n, void *stream);
    int many_id;
    /* A synapse type's state update with the new v (the view's step_j, t_offset dt), then each
     * instance's events of step j + 1 (hi_of[s] .. hi_of[s + 1] of instance and weight, s the
     * context's step k + j + 1; grouped and ordered as net_receive's) and its current of step
     * j + 1 (t_offset dt/2, into the view's inst_* slots): the three calls, each instance's in
     * their order, in one pass (ABI 9). NULL for a type without a GPU net_receive. */
    void (*advance_ahead)(const cs_mech_view *m, const int *hi_of, const int *instance, const double *weight,
                          void *stream);
} cs_mech_gpu_ops;

typedef struct {
    const char *name;
    cs_mech_kind kind;
    int receives_events;      /* 1 for synapses (net_receive) */
    int nparam;
    const cs_mech_field *params;
    int nstate;
    const cs_mech_field *states;
    void (*init)(const cs_mech_view *m);     /* states from v at t = 0 */
    void (*current)(const cs_mech_view *m);  /* add i, g at the start of a step */
    void (*advance)(const cs_mech_view *m);  /* integrate states over dt with the new v */
    void (*net_receive)(const cs_mech_view *m, int instance, double weight); /* weight [µS] */
    /* Linear mechanisms with a constant conductance (i = g·(v − e)) only: the conductance
     * weight·g [µS] and weight·g·e [nA] of one instance, folded once into the matrix. */
    void (*fold)(const double *param, double weight, double *g, double *ge);
    unsigned ion_read, ion_write; /* bit (1 << CS_ION_*) per ion read (e or i) / written (i) */
    const cs_mech_gpu_ops *gpu;   /* NULL: no GPU code (the built-ins' GPU code is the CUDA backend's) */
    int nstate_solved;            /* states [0, nstate_solved) are STATEs, the rest ASSIGNED variables */
    /* bit (1 << CS_ION_*) per ion whose concentration (xi or xo) the type reads / writes: NEURON's
     * ion_style follows (docs/model-format.md, "Ions"): where some type writes it the reversal
     * potential is Nernst's every step, where one only reads it, Nernst's at initialisation */
    unsigned conc_read, conc_write;
    /* Events with weight vectors and flags (src/cs_artcell.c; ARTIFICIAL_CELL types). An
     * artificial type has no CV, no v and no current: node, weight, v, i and g of its view
     * are NULL, current and advance are NULL, and it runs on the host between steps. */
    int artificial;               /* 1: ARTIFICIAL_CELL */
    int nweight;                  /* NET_RECEIVE's arguments: the length of a connection's weight
                                     vector (1 for a single weight; 0 without NET_RECEIVE) */
    /* An event at m->t [ms] with the connection's weight vector w [nweight] (which the block
     * may change: it persists per connection) and flag (0: from a connection; a self-event's
     * flag otherwise). */
    void (*net_receive_vec)(const cs_mech_view *m, int instance, double *w, double flag);
    /* NET_RECEIVE's INITIAL block, once per connection at t = 0 (NULL when it has none). */
    void (*net_init)(const cs_mech_view *m, int instance, double *w);
    /* 1: the state update (advance) reads and writes no ion variable (e, i or a concentration),
     * in its own code or in what it calls (the NMODL compiler checks); 0: it may. The CUDA
     * backend lets an ion-free update run while the next step's ions are prepared. */
    int advance_ion_free;
    /* 1: a linear synapse (the NMODL compiler proves it: nmodl/nmodl_linear.py): its state update
     * and current are linear and homogeneous in its states, NET_RECEIVE(weight) only adds
     * state-free increments, INITIAL starts the states at 0. k instances at one CV with equal
     * parameters then act exactly as one whose states are their sums, and the network builder
     * merges them (Arbor's coalesced synapses; docs/sonata-input.md, "Synapses"). */
    int linear;
} cs_mech_type;

/* What a catalogue exports (cs_mech_catalogue_get). */
typedef struct {
    int ntype;
    const cs_mech_type *const *types;
    int has_cuda;             /* types carry GPU code */
} cs_mech_catalogue;

extern const cs_mech_type cs_mech_hh, cs_mech_pas, cs_mech_expsyn, cs_mech_iclamp, cs_mech_exp2syn;
/* Artificial cells (NEURON's: mechanisms/NAME.mod and cs_vecstim.c). */
extern const cs_mech_type cs_mech_NetStim, cs_mech_IntFire1, cs_mech_IntFire2, cs_mech_IntFire4, cs_mech_VecStim;

/* Look up a mechanism by name; NULL when unknown. */
const cs_mech_type *cs_mech_find(const char *name);
/* Index of a parameter by name, -1 when unknown. */
int cs_mech_param_index(const cs_mech_type *t, const char *name);
/* Comma-separated list of known mechanism names (for error messages). */
const char *cs_mech_names(void);

#endif
