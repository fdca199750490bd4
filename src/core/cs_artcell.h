/* Artificial cells (NEURON's ARTIFICIAL_CELL: NetStim, VecStim, IntFire1/2/4, a catalogue's):
 * cells without a cable, driven by events alone, run by the simulation core on the host
 * whichever backend runs the cells with a morphology.
 *
 * Each artificial cell of this rank's share keeps its states and a queue of its events: those
 * from connections (with the connection's weight vector, which NET_RECEIVE may change and which
 * persists) and its own self-events (net_send, with a flag; net_move moves the pending one).
 * After each epoch the core delivers, in time order, every event due by the epoch's end plus
 * dt/2 (NEURON's fixed-step rule: an event due by t + dt/2 is delivered at the step that ends
 * at t); NET_RECEIVE sees t = the event's exact time, and a spike (net_event) takes that time.
 * Within an epoch no artificial cell can affect another cell (every delay is at least the
 * epoch), so delivering them after it gives what delivering them step by step would. Their
 * spikes join the epoch's spikes in the ordinary exchange (serial or MPI).
 *
 * Why on the host, also beside the CUDA backend: an artificial cell does no work per step, only
 * per event (a handful of operations at an exact time, often sending itself another event: a
 * sequential, data-dependent chain per cell), and the events it needs are already on the host,
 * where the exchange gathers every epoch's spikes. On the device it would need a priority queue
 * per cell and a kernel per epoch for little arithmetic; on the host it costs nothing per step,
 * leaves the GPU's kernels (and their CUDA graphs) as they are, and runs the same code whatever
 * the backend, so CPU and GPU runs give the same artificial spikes bit for bit. */
#ifndef CS_ARTCELL_H
#define CS_ARTCELL_H

#include <stddef.h>

#include "cs_backend.h"
#include "cs_build.h"
#include "cs_model.h"

typedef struct cs_artcells cs_artcells;

/* The artificial cells of net's share (none: *out is NULL), and the weight vectors of the
 * model's connections to them. */
cs_status cs_artcells_create(const cs_model *m, const cs_network_desc *net, double celsius, double dt,
                             cs_artcells **out);
/* t = 0: every cell's INITIAL block, and NET_RECEIVE's INITIAL for each connection to it. */
cs_status cs_artcells_init(cs_artcells *a);
/* An event for artificial cell art (index into net->art) at t [ms] through connection conn of
 * the model, or, for conn == SIZE_MAX, a model event of this weight. */
cs_status cs_artcells_event(cs_artcells *a, size_t art, double t, size_t conn, double weight);
/* Deliver every event due by `until` [ms], in order (time, then connection events before
 * self-events, then connection index or sending order); the spikes they fire (gids) are
 * appended to *spk (grown with realloc; *n spikes, *cap room). */
cs_status cs_artcells_run(cs_artcells *a, double until, cs_spike **spk, size_t *n, size_t *cap);
void cs_artcells_destroy(cs_artcells *a);

#endif
