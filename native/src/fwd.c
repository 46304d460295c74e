/*
 * fwd.c — the reference DUT: a delay line that runs inside the worker loop,
 * so it needs no core of its own (two busy-polling loops sharing one core
 * would ruin the latency it is there to produce). Frames are released in
 * arrival order at arrival + delay (+ jitter), with optional random loss.
 */
#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "run.h"

#define MASK (NETLOAD_FWD_SLOTS - 1)

static inline uint64_t
next_random(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * UINT64_C(0x2545F4914F6CDD1D);
}

static inline void
take_in(struct netload_run *run, struct fwd_task *f, uint64_t now)
{
	struct rte_mbuf *bufs[NETLOAD_MAX_BURST];
	uint16_t n, i;

	n = rte_eth_rx_burst(f->rx_port, f->rx_queue, bufs, run->burst);
	for (i = 0; i < n; i++) {
		uint64_t release;

		f->stats.received++;
		if (f->loss_threshold && next_random(&f->rng) < f->loss_threshold) {
			f->stats.dropped++;
			rte_pktmbuf_free(bufs[i]);
			continue;
		}
		if (unlikely(f->held == NETLOAD_FWD_SLOTS)) {
			f->stats.overflow++;
			rte_pktmbuf_free(bufs[i]);
			continue;
		}
		release = now + f->delay;
		if (f->n_jitter) {
			release += f->jitter[f->jitter_idx];
			if (++f->jitter_idx == f->n_jitter)
				f->jitter_idx = 0;
		}
		if (release < f->last_release)
			release = f->last_release;  /* a line never reorders */
		f->last_release = release;
		f->slots[(f->head + f->held) & MASK] = bufs[i];
		f->release[(f->head + f->held) & MASK] = release;
		f->held++;
	}
	if (f->held > f->stats.max_held)
		f->stats.max_held = f->held;
}

static inline void
let_out(struct netload_run *run, struct fwd_task *f, uint64_t now)
{
	struct rte_mbuf *bufs[NETLOAD_MAX_BURST];
	uint16_t n = 0, sent, i;

	while (n < run->burst && n < f->held && f->release[(f->head + n) & MASK] <= now) {
		bufs[n] = f->slots[(f->head + n) & MASK];
		n++;
	}
	if (n == 0)
		return;
	sent = rte_eth_tx_burst(f->tx_port, f->tx_queue, bufs, n);
	/* What the port refused stays at the head and goes first next time. */
	for (i = 0; i < sent; i++)
		f->slots[(f->head + i) & MASK] = NULL;
	f->head = (f->head + sent) & MASK;
	f->held -= sent;
	f->stats.forwarded += sent;
}

void
netload_fwd_step(struct netload_run *run, struct fwd_task *f)
{
	uint64_t now = rte_rdtsc();

	take_in(run, f, now);
	if (f->held)
		let_out(run, f, f->held ? rte_rdtsc() : now);
}

void
netload_fwd_release_all(struct fwd_task *f)
{
	while (f->held) {
		rte_pktmbuf_free(f->slots[f->head]);
		f->head = (f->head + 1) & MASK;
		f->held--;
	}
}
