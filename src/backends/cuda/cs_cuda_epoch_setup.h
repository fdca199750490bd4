/* Building the persistent epoch kernel's structure (cs_cuda.h, cs_cuda_epoch) for a network on
 * the "flat" layout (internal rows in tree order). */
#ifndef CS_CUDA_EPOCH_SETUP_H
#define CS_CUDA_EPOCH_SETUP_H

#include "cs_build.h"
#include "cs_cuda.h"

/* Fill s->epoch from the network (cells' rows at cell_first, mechanism instance k in group
 * inst_group[k] (-1: folded) at index inst_local[k]) once s's mechanisms, detectors and probes
 * are set up; refuses (CS_ERR_UNSUPPORTED, one line) what the kernel cannot run: catalogue
 * mechanisms, ions, a cell too large for a block's shared memory. */
cs_status cs_cuda_epoch_build(cs_cuda_state *s, const cs_network_desc *net, const int *cell_first,
                              const int *inst_group, const int *inst_local);
void cs_cuda_epoch_free(cs_cuda_epoch *e);
/* The same refusals from the network alone, before any set-up: `auto` tries epoch on every
 * network, and on distinct big cells its refusal came after seconds of set-up (session 20). */
cs_status cs_cuda_epoch_check(const cs_network_desc *net);

#endif
