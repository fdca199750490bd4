/* The gather of the catalogue mechanisms' currents on the CUDA backend, host side. Each instance
 * of a catalogue group writes its share (weight·i [nA], weight·g [µS], and the ion current
 * densities [mA/cm²] of the ions its type writes) to its own slot (cs_mech_view.inst_*); then one
 * kernel (k_gather, cs_cuda_kernels.cu) adds the slots of each CV to i, g and ion_i in the CPU
 * backend's order: group by group, instance by instance. So the sums are the same every run (the
 * atomics they replace added in any order), and the groups' current kernels, which no longer
 * write a shared array, may run at the same time. */
#ifndef CS_CUDA_GATHER_H
#define CS_CUDA_GATHER_H

#include "cs_build.h"
#include "cs_cuda.h"

/* The slots and the per-CV lists of the catalogue groups of s (their instances' rows from the
 * network: instance k of the network is instance inst_local[k] of group inst_group[k], on
 * internal row row_map[cell_first[cell] + node]). Sets s->gather.on when some catalogue group has
 * instances. */
cs_status cs_cuda_gather_build(cs_cuda_state *s, const cs_network_desc *net, const int *inst_group,
                               const int *inst_local, const int *cell_first, const int *row_map);
void cs_cuda_gather_free(cs_cuda_state *s);

#endif
