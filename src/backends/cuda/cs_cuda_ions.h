/* Ions on the CUDA backend, host side: the per-CV reversal potentials, current densities and
 * concentrations in the solver's internal layout, NEURON's ion style of each CV (cs_ion.h), the
 * reversal potentials at initialisation (computed here, beside the mechanisms' initial states
 * that the backend computes on the host), and their upload. k_ions_step (cs_cuda_kernels.cu)
 * updates e from the concentrations on the device at every step. */
#ifndef CS_CUDA_IONS_H
#define CS_CUDA_IONS_H

#include "cs_build.h"
#include "cs_cuda.h"

typedef struct {
    double *e[CS_NION], *i[CS_NION], *ci[CS_NION], *co[CS_NION]; /* [n_int] host copies [mV], [mA/cm²], [mM] */
    int *rows[CS_NION];   /* Nernst's rows: the first nadvance (style WRITE) at every step, all at init */
    int nrows[CS_NION], nadvance[CS_NION];
    int *used[CS_NION];   /* the rows where some instance uses the ion: only there can its current
                             density be non-zero, so only there is it zeroed at each step */
    int nused[CS_NION];
    double celsius;       /* [°C] */
} cs_cuda_ions;

/* Host arrays for the ions some instance uses, from the cells' regions (row r of local cell c is
 * internal row row_map[cell_first[c] + r]), and e = Nernst where concentrations are read. */
cs_status cs_cuda_ions_build(const cs_network_desc *net, const int *cell_first, const int *row_map, size_t n_int,
                             double celsius, cs_cuda_ions *h);
/* After the init of a mechanism of type t on the host: e again where t writes a concentration. */
void cs_cuda_ions_wrote(cs_cuda_ions *h, const cs_mech_type *t);
/* Allocate (first call) and upload s's ion arrays and Nernst rows. */
cs_status cs_cuda_ions_upload(const cs_cuda_ions *h, cs_cuda_state *s);
void cs_cuda_ions_free(cs_cuda_ions *h);

#endif
