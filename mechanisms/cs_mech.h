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

typedef enum { CS_MECH_DENSITY, CS_MECH_POINT } cs_mech_kind;

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
} cs_mech_view;

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
} cs_mech_type;

extern const cs_mech_type cs_mech_hh, cs_mech_pas, cs_mech_expsyn, cs_mech_iclamp;

/* Look up a mechanism by name; NULL when unknown. */
const cs_mech_type *cs_mech_find(const char *name);
/* Index of a parameter by name, -1 when unknown. */
int cs_mech_param_index(const cs_mech_type *t, const char *name);
/* Comma-separated list of known mechanism names (for error messages). */
const char *cs_mech_names(void);

#endif
