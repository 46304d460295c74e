/*
 * run.c — a run's life: its configuration checked and loaded, TX and RX tasks
 * spread over the worker lcores, a common TSC start deadline, count or duration
 * bounds, the worker loop, a drain for late frames, poll, stop and free. The TX
 * step is in tx.c, the results read back after every worker returned in
 * results.c.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE  /* RUSAGE_THREAD */
#endif
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_pause.h>

#include "run.h"

static struct netload_run *active_run;

/* What the kernel says about the calling thread: its CPU time and the times
 * it was preempted; with the wall clock, the time it spent off its CPU. */
struct cpu_mark {
	uint64_t wall_ns;
	uint64_t cpu_ns;
	uint64_t preemptions;
};

static void
cpu_mark(struct cpu_mark *m)
{
	struct timespec ts;
	struct rusage ru;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	m->wall_ns = (uint64_t)ts.tv_sec * NETLOAD_NS_PER_S + (uint64_t)ts.tv_nsec;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	m->cpu_ns = (uint64_t)ts.tv_sec * NETLOAD_NS_PER_S + (uint64_t)ts.tv_nsec;
	m->preemptions = getrusage(RUSAGE_THREAD, &ru) == 0 ? (uint64_t)ru.ru_nivcsw : 0;
}

/* A worker's off-CPU time and preemptions since `start`, on each of its TX and RX tasks. */
static void
cpu_account(struct netload_run *run, const struct worker *w, const struct cpu_mark *start)
{
	struct cpu_mark end;
	uint64_t wall, cpu;
	uint32_t i;

	cpu_mark(&end);
	wall = end.wall_ns - start->wall_ns;
	cpu = end.cpu_ns - start->cpu_ns;
	for (i = 0; i < w->n_tx; i++) {
		struct tx_task *t = &run->tx[w->tx[i]];

		t->off_cpu_ns = wall > cpu ? wall - cpu : 0;
		t->preemptions = end.preemptions - start->preemptions;
	}
	for (i = 0; i < w->n_rx; i++) {
		struct rx_task *r = &run->rx[w->rx[i]];

		r->off_cpu_ns = wall > cpu ? wall - cpu : 0;
		r->preemptions = end.preemptions - start->preemptions;
	}
}

static int
worker_main(void *arg)
{
	struct netload_run *run = arg;
	struct worker *w = NULL;
	uint32_t i, sending, turns = 0;
	uint64_t now;
	struct cpu_mark mark;

	for (i = 0; i < run->n_workers; i++)
		if (run->workers[i].lcore == rte_lcore_id())
			w = &run->workers[i];
	if (w == NULL)
		return -EINVAL;
	sending = w->n_tx > 0;
	/* Frames that arrive before the deadline belong to no run: drop them. */
	while ((now = rte_rdtsc()) < run->start_tsc) {
		for (i = 0; i < w->n_rx; i++)
			netload_rx_burst(run, &run->rx[w->rx[i]], 0);
		rte_pause();
	}
	cpu_mark(&mark);
	for (;;) {
		if (unlikely(SHARED_LOAD(&run->abort)))
			break;
		if (sending) {
			uint32_t active = 0;
			int over;

			/* A fresh clock: the RX poll of the last turn may have been long. */
			now = rte_rdtsc();
			over = SHARED_LOAD(&run->stop) || (run->end_tsc && now >= run->end_tsc);

			for (i = 0; i < w->n_tx; i++) {
				struct tx_task *t = &run->tx[w->tx[i]];

				if (t->done)
					continue;
				/* Each stream checks the end on its own clock reading, so a
				 * stall in the middle of a turn ends every stream alike. */
				if (!over && t->n_phases && run->end_tsc && rte_rdtsc() >= run->end_tsc)
					over = 1;
				if (!over)
					netload_tx_step(run, t);
				if (over || t->done)
					netload_tx_finish(t, netload_tx_end_reason(run, t, over));
				else
					active++;
			}
			if (active == 0) {
				sending = 0;
				if (__atomic_sub_fetch(&run->tx_running, 1, __ATOMIC_ACQ_REL) == 0) {
					uint64_t end = rte_rdtsc();

					/* Earlier than the scheduled end: counts, phases or a stop. */
					uint64_t scheduled = SHARED_LOAD(&run->tx_end_tsc);

					if (scheduled == 0 || end < scheduled)
						SHARED_STORE(&run->tx_end_tsc, end);
					__atomic_store_n(&run->drain_end_tsc, end + run->drain_tsc,
							__ATOMIC_RELEASE);
				}
			}
		}
		for (i = 0; i < w->n_fwd; i++)
			netload_fwd_step(run, &run->fwd[w->fwd[i]]);
		for (i = 0; i < w->n_rx; i++)
			netload_rx_burst(run, &run->rx[w->rx[i]], 1);
		/* Reading the TSC costs ~40 cycles in a VM: the drain end is
		 * checked every 16th turn (a few us late at most). */
		if (!sending && (++turns & 15) == 0) {
			uint64_t end = __atomic_load_n(&run->drain_end_tsc, __ATOMIC_ACQUIRE);

			if (end != 0 && ((w->n_rx == 0 && w->n_fwd == 0) || rte_rdtsc() >= end))
				break;
		}
	}
	cpu_account(run, w, &mark);
	__atomic_add_fetch(&run->finished, 1, __ATOMIC_RELEASE);
	return 0;
}

void
netload_run_free(struct netload_run *run)
{
	uint32_t i, j;

	if (run == NULL)
		return;
	if (!run->reaped && run->n_workers) {
		/* Still running: ask every worker to stop, then wait for it. */
		SHARED_STORE(&run->stop, 1);
		SHARED_STORE(&run->abort, 1);
		for (i = 0; i < run->n_workers; i++)
			rte_eal_wait_lcore(run->workers[i].lcore);
	}
	for (i = 0; run->tx != NULL && i < run->n_tx; i++) {
		netload_tx_finish(&run->tx[i], NETLOAD_TX_END_NONE);
		if (run->tx[i].stream)
			run->tx[i].stream->in_run = 0;
		for (j = 0; j < run->tx[i].n_phases; j++)
			rte_free(run->tx[i].phases[j].gaps_fp);
		rte_free(run->tx[i].phases);
	}
	for (i = 0; run->rx != NULL && i < run->n_rx; i++)
		netload_rx_task_free(run, &run->rx[i]);
	for (i = 0; i < run->n_fwd; i++) {
		if (run->fwd[i].slots != NULL)
			netload_fwd_release_all(&run->fwd[i]);
		rte_free(run->fwd[i].slots);
		rte_free(run->fwd[i].release);
		rte_free(run->fwd[i].jitter);
	}
	rte_free(run->fwd);
	for (i = 0; i < run->n_workers; i++) {
		rte_free(run->workers[i].tx);
		rte_free(run->workers[i].rx);
		rte_free(run->workers[i].fwd);
	}
	rte_free(run->workers);
	rte_free(run->tx);
	rte_free(run->rx);
	if (active_run == run)
		active_run = NULL;
	rte_free(run);
}

/* Delay lines: FIFOs, jitter in cycles, the loss threshold on a 64-bit random. */
static int
load_forwarders(struct netload_run *run, const struct netload_run_conf *c)
{
	uint32_t i, k;

	if (c->n_fwd == 0)
		return 0;
	if (c->fwd == NULL)
		return netload_fail(NETLOAD_EINVAL, "run: %u forwarders but no table", c->n_fwd);
	run->fwd = rte_zmalloc("netload_fwd", sizeof(*run->fwd) * c->n_fwd, RTE_CACHE_LINE_SIZE);
	if (run->fwd == NULL)
		return netload_fail(NETLOAD_ENOMEM, "run: forwarders");
	run->n_fwd = c->n_fwd;
	for (i = 0; i < c->n_fwd; i++) {
		const struct netload_fwd_conf *fc = &c->fwd[i];
		struct fwd_task *f = &run->fwd[i];

		if (!netload_port_is_open(fc->rx_port) || !netload_port_is_open(fc->tx_port))
			return netload_fail(NETLOAD_ENODEV, "run: forwarder %u: port %u or %u is not open",
					i, fc->rx_port, fc->tx_port);
		for (k = 0; k < c->n_rx; k++)
			if (c->rx[k].port_id == fc->rx_port && c->rx[k].queue == fc->rx_queue)
				return netload_fail(NETLOAD_EINVAL,
						"run: port %u queue %u is both an RX queue and forwarder "
						"%u's input; a queue has one reader", fc->rx_port,
						fc->rx_queue, i);
		if (fc->loss_ppm > 1000000)
			return netload_fail(NETLOAD_EINVAL,
					"run: forwarder %u: loss %u ppm; give 0 to 1000000", i,
					fc->loss_ppm);
		if (fc->n_jitter > NETLOAD_MAX_GAPS || (fc->n_jitter && fc->jitter_ps == NULL))
			return netload_fail(NETLOAD_EINVAL, "run: forwarder %u: %u jitter entries",
					i, fc->n_jitter);
		f->rx_port = fc->rx_port;
		f->rx_queue = fc->rx_queue;
		f->tx_port = fc->tx_port;
		f->tx_queue = fc->tx_queue;
		if (fc->delay_ns > NETLOAD_MAX_RUN_NS)
			return netload_fail(NETLOAD_EINVAL, "run: forwarder %u: delay %" PRIu64
					" ns; at most %d s", i, fc->delay_ns, NETLOAD_MAX_RUN_S);
		netload_scale(fc->delay_ns, run->hz, NETLOAD_NS_PER_S, &f->delay);
		f->loss_threshold = fc->loss_ppm == 1000000 ? UINT64_MAX :
			(uint64_t)((double)fc->loss_ppm / 1e6 * 18446744073709551616.0);
		f->rng = fc->seed ? fc->seed : rte_rdtsc() | 1;
		f->slots = rte_zmalloc("netload_fwd_slots",
				sizeof(*f->slots) * NETLOAD_FWD_SLOTS, RTE_CACHE_LINE_SIZE);
		f->release = rte_malloc("netload_fwd_release",
				sizeof(*f->release) * NETLOAD_FWD_SLOTS, RTE_CACHE_LINE_SIZE);
		if (f->slots == NULL || f->release == NULL)
			return netload_fail(NETLOAD_ENOMEM, "run: forwarder %u line", i);
		if (fc->n_jitter) {
			f->jitter = rte_malloc("netload_fwd_jitter", sizeof(uint64_t) * fc->n_jitter, 0);
			if (f->jitter == NULL)
				return netload_fail(NETLOAD_ENOMEM, "run: forwarder %u jitter", i);
			for (k = 0; k < fc->n_jitter; k++)
				if (fc->jitter_ps[k] > NETLOAD_MAX_RUN_NS * 1000 || netload_scale(
						fc->jitter_ps[k], run->hz, NETLOAD_NS_PER_S * 1000,
						&f->jitter[k]) < 0)
					return netload_fail(NETLOAD_EINVAL, "run: forwarder %u: jitter "
							"entry %u is %" PRIu64 " ps; at most %d s", i, k,
							fc->jitter_ps[k], NETLOAD_MAX_RUN_S);
			f->n_jitter = fc->n_jitter;
		}
	}
	return 0;
}

/*
 * Gap tables in picoseconds -> TSC cycles << NETLOAD_FP_SHIFT, phase ends
 * relative to the start. Each gap's rounding remainder is carried into the
 * next, so a table's deadlines add up to its period within one fixed-point
 * unit, and the mean rate does not drift over a 24 h run.
 */
static int
load_phases(struct netload_run *run, struct tx_task *t, const struct netload_tx_conf *c,
		uint32_t index)
{
	const uint64_t fp_hz = run->hz << NETLOAD_FP_SHIFT;
	const uint64_t ps_per_s = NETLOAD_NS_PER_S * 1000;
	uint64_t end_ns = 0, end_fp, sum;
	uint32_t p, k;

	if (c->n_phases == 0)
		return 0;
	if (c->n_phases > NETLOAD_MAX_PHASES || c->phases == NULL)
		return netload_fail(NETLOAD_EINVAL, "run: TX entry %u has %u phases; give 1 to %d",
				index, c->n_phases, NETLOAD_MAX_PHASES);
	t->phases = rte_zmalloc("netload_phases", sizeof(*t->phases) * c->n_phases, 0);
	if (t->phases == NULL)
		return netload_fail(NETLOAD_ENOMEM, "run: phases of TX entry %u", index);
	t->n_phases = c->n_phases;
	for (p = 0; p < c->n_phases; p++) {
		const struct netload_phase_conf *pc = &c->phases[p];
		struct tx_phase *ph = &t->phases[p];

		if (pc->n_gaps > NETLOAD_MAX_GAPS || (pc->n_gaps && pc->gaps_ps == NULL))
			return netload_fail(NETLOAD_EINVAL,
					"run: TX entry %u phase %u has %u gaps; at most %d",
					index, p, pc->n_gaps, NETLOAD_MAX_GAPS);
		if (pc->duration_ns == 0 && p + 1 < c->n_phases)
			return netload_fail(NETLOAD_EINVAL,
					"run: TX entry %u phase %u has no duration, but phases follow it",
					index, p);
		if (pc->duration_ns) {
			end_ns += pc->duration_ns;
			if (pc->duration_ns > NETLOAD_MAX_RUN_NS || end_ns > NETLOAD_MAX_RUN_NS ||
					netload_scale(end_ns, fp_hz, NETLOAD_NS_PER_S, &end_fp) < 0)
				return netload_fail(NETLOAD_EINVAL, "run: TX entry %u: its phases "
						"up to phase %u last more than %d s (24 h); give shorter "
						"phases", index, p, NETLOAD_MAX_RUN_S);
			ph->end_fp = end_fp;
		}
		ph->n_gaps = pc->n_gaps;
		if (pc->n_gaps == 0)
			continue;
		ph->gaps_fp = rte_malloc("netload_gaps", sizeof(uint64_t) * pc->n_gaps, 0);
		if (ph->gaps_fp == NULL)
			return netload_fail(NETLOAD_ENOMEM, "run: gap table of %u entries", pc->n_gaps);
		{
			unsigned __int128 carry = 0, x;

			sum = 0;
			for (k = 0; k < pc->n_gaps; k++) {
				if (pc->gaps_ps[k] == 0 || pc->gaps_ps[k] > NETLOAD_MAX_RUN_NS * 1000)
					return netload_fail(NETLOAD_EINVAL,
							"run: TX entry %u phase %u gap %u is %" PRIu64
							" ps; give 1 ps to %d s (a phase without gaps "
							"sends at the maximum rate)", index, p, k,
							pc->gaps_ps[k], NETLOAD_MAX_RUN_S);
				x = (unsigned __int128)pc->gaps_ps[k] * fp_hz + carry;
				ph->gaps_fp[k] = (uint64_t)(x / ps_per_s);
				carry = x % ps_per_s;
				if (ph->gaps_fp[k] == 0)
					ph->gaps_fp[k] = 1;
				sum += ph->gaps_fp[k];
			}
			ph->mean_gap_fp = sum / pc->n_gaps;
		}
	}
	return 0;
}

static int
check_run_conf(const struct netload_run_conf *c)
{
	uint32_t i, j;

	if (c->n_tx == 0 && c->n_rx == 0 && c->n_fwd == 0)
		return netload_fail(NETLOAD_EINVAL, "run: no TX stream, RX queue or forwarder");
	if (c->duration_ns > NETLOAD_MAX_RUN_NS || c->drain_ns > NETLOAD_MAX_RUN_NS ||
			c->start_delay_ns > NETLOAD_MAX_RUN_NS)
		return netload_fail(NETLOAD_EINVAL, "run: duration %" PRIu64 " ns, drain %" PRIu64
				" ns, start delay %" PRIu64 " ns; each at most %d s (24 h)",
				c->duration_ns, c->drain_ns, c->start_delay_ns, NETLOAD_MAX_RUN_S);
	if (c->burst > NETLOAD_MAX_BURST)
		return netload_fail(NETLOAD_EINVAL, "run: burst %u; at most %d",
				c->burst, NETLOAD_MAX_BURST);
	if (c->n_tx > NETLOAD_MAX_STREAMS)
		return netload_fail(NETLOAD_EINVAL, "run: %u TX entries; at most %d",
				c->n_tx, NETLOAD_MAX_STREAMS);
	if (c->duration_ns == 0)
		for (i = 0; i < c->n_tx; i++)
			if (c->tx[i].count == 0 && !c->tx[i].expect_only &&
					(c->tx[i].n_phases == 0 || c->tx[i].phases == NULL ||
					 c->tx[i].phases[c->tx[i].n_phases - 1].duration_ns == 0))
				return netload_fail(NETLOAD_EINVAL,
						"run: TX entry %u has no count and the run no "
						"duration; give one of them", i);
	for (i = 0; i < c->n_tx; i++) {
		const struct netload_stream *s = c->tx[i].stream;

		if (s == NULL || netload_stream_by_id(s->id) != s)
			return netload_fail(NETLOAD_EINVAL, "run: TX entry %u has no live stream", i);
		if (!netload_port_is_open(s->port_id))
			return netload_fail(NETLOAD_ENODEV, "run: TX entry %u: port %u is closed",
					i, s->port_id);
		for (j = 0; j < i; j++)
			if (c->tx[j].stream == s)
				return netload_fail(NETLOAD_EINVAL,
						"run: stream %u is listed twice (entries %u and %u)",
						s->id, j, i);
	}
	for (i = 0; i < c->n_rx; i++) {
		if (!netload_port_is_open(c->rx[i].port_id))
			return netload_fail(NETLOAD_ENODEV, "run: RX entry %u: port %u is not open",
					i, c->rx[i].port_id);
		for (j = 0; j < i; j++)
			if (c->rx[j].port_id == c->rx[i].port_id &&
					c->rx[j].queue == c->rx[i].queue)
				return netload_fail(NETLOAD_EINVAL,
						"run: RX port %u queue %u is listed twice",
						c->rx[i].port_id, c->rx[i].queue);
	}
	return 0;
}

/* Queue-owning tasks go to workers round-robin; a TX queue stays on one worker. */
static int
assign(struct netload_run *run, unsigned int n_lcores)
{
	uint32_t i, j, n_tasks = 0, k = 0;
	uint32_t *tx_worker;
	unsigned int lcore;

	tx_worker = calloc(run->n_tx ? run->n_tx : 1, sizeof(*tx_worker));
	if (tx_worker == NULL)
		return netload_fail(NETLOAD_ENOMEM, "run: worker table");
	for (i = 0; i < run->n_tx; i++) {
		if (run->tx[i].done)
			continue;
		for (j = 0; j < i; j++)
			if (!run->tx[j].done && run->tx[j].port_id == run->tx[i].port_id &&
					run->tx[j].queue == run->tx[i].queue)
				break;
		tx_worker[i] = j < i ? tx_worker[j] : n_tasks++;
	}
	n_tasks += run->n_rx + run->n_fwd;
	run->n_workers = RTE_MIN(n_lcores, n_tasks);
	run->workers = rte_zmalloc("netload_workers", sizeof(struct worker) * run->n_workers,
			RTE_CACHE_LINE_SIZE);
	if (run->workers == NULL) {
		free(tx_worker);
		return netload_fail(NETLOAD_ENOMEM, "run: workers");
	}
	i = 0;
	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (i == run->n_workers)
			break;
		run->workers[i].lcore = lcore;
		run->workers[i].tx = rte_zmalloc(NULL, sizeof(uint32_t) * (run->n_tx + 1), 0);
		run->workers[i].rx = rte_zmalloc(NULL, sizeof(uint32_t) * (run->n_rx + 1), 0);
		run->workers[i].fwd = rte_zmalloc(NULL, sizeof(uint32_t) * (run->n_fwd + 1), 0);
		if (run->workers[i].tx == NULL || run->workers[i].rx == NULL ||
				run->workers[i].fwd == NULL) {
			free(tx_worker);
			return netload_fail(NETLOAD_ENOMEM, "run: worker task lists");
		}
		i++;
	}
	for (i = 0; i < run->n_tx; i++) {
		struct worker *w = &run->workers[tx_worker[i] % run->n_workers];

		if (run->tx[i].done)
			continue;
		w->tx[w->n_tx++] = i;
		k = tx_worker[i] + 1 > k ? tx_worker[i] + 1 : k;
	}
	for (i = 0; i < run->n_rx; i++) {
		struct worker *w = &run->workers[(k + i) % run->n_workers];

		w->rx[w->n_rx++] = i;
	}
	for (i = 0; i < run->n_fwd; i++) {
		struct worker *w = &run->workers[(k + run->n_rx + i) % run->n_workers];

		w->fwd[w->n_fwd++] = i;
	}
	for (i = 0; i < run->n_workers; i++)
		if (run->workers[i].n_tx)
			__atomic_add_fetch(&run->tx_running, 1, __ATOMIC_RELAXED);
	free(tx_worker);
	return 0;
}

/*
 * Streams timed on NIC clocks: every port they leave and every RX port of
 * the run needs hardware timestamps; each of those clocks is anchored to
 * the TSC now, so their times compare.
 */
static int
anchor_nic_clocks(struct netload_run *run)
{
	uint8_t anchored[RTE_MAX_ETHPORTS] = { 0 };
	uint32_t i, any = 0;
	int ret;

	for (i = 0; i < run->n_tx; i++) {
		uint16_t p = run->tx[i].port_id;

		if (!run->tx[i].hw_clock)
			continue;
		any = 1;
		if (!netload_nic_clocks[p].enabled)
			return netload_fail(NETLOAD_ENOTSUP, "run: stream %u asks for hardware "
					"timestamps, but its TX port %u was opened without them; "
					"open the port with hw_timestamps or use the TSC clock",
					run->tx[i].stream->id, p);
	}
	if (!any)
		return 0;
	for (i = 0; i < run->n_rx; i++) {
		uint16_t p = run->rx[i].port_id;

		if (!netload_nic_clocks[p].enabled)
			return netload_fail(NETLOAD_ENOTSUP, "run: a stream asks for hardware "
					"timestamps, but RX port %u was opened without them; open "
					"it with hw_timestamps or use the TSC clock", p);
	}
	for (i = 0; i < run->n_tx + run->n_rx; i++) {
		uint16_t p = i < run->n_tx ? run->tx[i].port_id : run->rx[i - run->n_tx].port_id;

		if (anchored[p] || !netload_nic_clocks[p].enabled)
			continue;
		ret = netload_port_clock_anchor(p, run->hz, run->ns_mult);
		if (ret < 0)
			return ret;
		anchored[p] = 1;
	}
	return 0;
}

int
netload_run_start(const struct netload_run_conf *c, struct netload_run **out)
{
	struct netload_run *run;
	unsigned int n_lcores = rte_lcore_count() - 1;
	uint32_t i, j;
	int ret;

	if (c == NULL || out == NULL)
		return netload_fail(NETLOAD_EINVAL, "run: NULL configuration");
	if (active_run != NULL)
		return netload_fail(NETLOAD_EBUSY, "a run is already active; stop and free it first");
	if (n_lcores == 0)
		return netload_fail(NETLOAD_ENOLCORE,
				"no worker lcore: start the EAL with at least two lcores");
	ret = check_run_conf(c);
	if (ret < 0)
		return ret;
	for (i = 0; i < c->n_tx; i++)
		if (c->tx[i].stream->in_run)
			return netload_fail(NETLOAD_EBUSY, "run: stream %u is in another run",
					c->tx[i].stream->id);
	run = rte_zmalloc("netload_run", sizeof(*run), RTE_CACHE_LINE_SIZE);
	if (run == NULL)
		return netload_fail(NETLOAD_ENOMEM, "run: out of memory");
	run->reaped = 1;
	memset(run->slot_of, 0xff, sizeof(run->slot_of));
	run->hz = rte_get_tsc_hz();
	run->ns_mult = netload_ns_mult(run->hz);
	run->timing_samples = c->timing_samples;
	if (c->capture_frames > 1u << 20 || c->capture_snaplen > 16384) {
		ret = netload_fail(NETLOAD_EINVAL, "run: capture of %u frames x %u bytes; give at "
				"most 1048576 frames of at most 16384 bytes", c->capture_frames,
				c->capture_snaplen);
		rte_free(run);
		return ret;
	}
	run->capture_frames = c->capture_frames;
	run->capture_snaplen = c->capture_snaplen ? c->capture_snaplen : 128;
	run->lat_bits = c->latency_sub_bits ? c->latency_sub_bits : NETLOAD_LATENCY_SUB_BITS;
	run->lat_buckets = netload_hist_buckets(run->lat_bits);
	if (run->lat_buckets == 0) {
		ret = netload_fail(NETLOAD_EINVAL,
				"run: latency histogram with %u sub-bucket bits; give %d to %d",
				run->lat_bits, NETLOAD_HIST_MIN_SUB_BITS, NETLOAD_HIST_MAX_SUB_BITS);
		goto fail;
	}
	run->burst = c->burst ? c->burst : NETLOAD_DEFAULT_BURST;
	run->n_tx = c->n_tx;
	run->n_rx = c->n_rx;
	run->tx = rte_zmalloc("netload_tx", sizeof(struct tx_task) * (c->n_tx + 1),
			RTE_CACHE_LINE_SIZE);
	run->rx = rte_zmalloc("netload_rx", sizeof(struct rx_task) * (c->n_rx + 1),
			RTE_CACHE_LINE_SIZE);
	if (run->tx == NULL || run->rx == NULL) {
		ret = netload_fail(NETLOAD_ENOMEM, "run: task tables");
		goto fail;
	}
	for (i = 0; i < c->n_tx; i++) {
		struct tx_task *t = &run->tx[i];

		t->stream = c->tx[i].stream;
		t->port_id = t->stream->port_id;
		t->queue = c->tx[i].queue;
		t->count = c->tx[i].count;
		t->done = c->tx[i].expect_only != 0;
		t->hw_clock = c->tx[i].hw_clock != 0;
		t->cost_window = UINT64_MAX;
		ret = load_phases(run, t, &c->tx[i], i);
		if (ret < 0)
			goto fail;
		run->slot_of[t->stream->id] = (uint16_t)i;
		netload_stream_reset(t->stream);
		t->stream->in_run = 1;
	}
	for (i = 0; i < c->n_rx; i++) {
		ret = netload_rx_task_init(run, &run->rx[i], &c->rx[i], c);
		if (ret < 0)
			goto fail;
	}
	ret = anchor_nic_clocks(run);
	if (ret < 0)
		goto fail;
	ret = load_forwarders(run, c);
	if (ret < 0)
		goto fail;
	ret = assign(run, n_lcores);
	if (ret < 0)
		goto fail;
	/* check_run_conf bounded these to 24 h, which no TSC below 200 GHz overflows */
	netload_scale(c->drain_ns, run->hz, NETLOAD_NS_PER_S, &run->drain_tsc);
	netload_scale(c->start_delay_ns, run->hz, NETLOAD_NS_PER_S, &run->start_tsc);
	run->start_tsc += rte_rdtsc();
	if (c->duration_ns) {
		netload_scale(c->duration_ns, run->hz, NETLOAD_NS_PER_S, &run->end_tsc);
		run->end_tsc += run->start_tsc;
	}
	SHARED_STORE(&run->tx_end_tsc, run->end_tsc);
	if (SHARED_LOAD(&run->tx_running) == 0)
		SHARED_STORE(&run->drain_end_tsc, run->end_tsc ? run->end_tsc :
			run->start_tsc + run->drain_tsc);
	for (i = 0; i < run->n_workers; i++) {
		ret = rte_eal_remote_launch(worker_main, run, run->workers[i].lcore);
		if (ret != 0) {
			SHARED_STORE(&run->stop, 1);
			SHARED_STORE(&run->abort, 1);
			for (j = 0; j < i; j++)
				rte_eal_wait_lcore(run->workers[j].lcore);
			ret = netload_fail(NETLOAD_ENOLCORE, "run: lcore %u is busy",
					run->workers[i].lcore);
			goto fail;
		}
	}
	run->reaped = 0;
	active_run = run;
	*out = run;
	return 0;
fail:
	netload_run_free(run);
	return ret;
}

static int
run_state(struct netload_run *run, uint64_t now)
{
	if (__atomic_load_n(&run->finished, __ATOMIC_ACQUIRE) == run->n_workers)
		return NETLOAD_RUN_DONE;
	if (now < run->start_tsc)
		return NETLOAD_RUN_WAITING;
	if (__atomic_load_n(&run->tx_running, __ATOMIC_ACQUIRE) > 0)
		return NETLOAD_RUN_SENDING;
	return NETLOAD_RUN_DRAINING;
}

int
netload_run_poll(struct netload_run *run, uint32_t wait_ms, struct netload_run_status *st)
{
	struct timespec nap = { 0, 200000 };
	uint64_t now, until;
	uint32_t i;
	int state;

	if (run == NULL)
		return netload_fail(NETLOAD_EINVAL, "poll: NULL run");
	if (wait_ms > 1000)
		return netload_fail(NETLOAD_EINVAL,
				"poll: wait %u ms; poll in slices of at most 1000 ms", wait_ms);
	now = rte_rdtsc();
	until = now + (uint64_t)wait_ms * run->hz / 1000;
	while ((state = run_state(run, now)) != NETLOAD_RUN_DONE && now < until) {
		nanosleep(&nap, NULL);
		now = rte_rdtsc();
	}
	if (state == NETLOAD_RUN_DONE && !run->reaped) {
		for (i = 0; i < run->n_workers; i++)
			rte_eal_wait_lcore(run->workers[i].lcore);
		run->reaped = 1;
		if (active_run == run)
			active_run = NULL;
	}
	if (st != NULL) {
		memset(st, 0, sizeof(*st));
		st->state = state;
		st->elapsed_ns = now > run->start_tsc ? netload_tsc_ns(run, now - run->start_tsc) : 0;
		for (i = 0; i < run->n_tx; i++)
			st->tx_packets += SHARED_LOAD(&run->tx[i].packets);
		for (i = 0; i < run->n_rx; i++)
			st->rx_packets += SHARED_LOAD(&run->rx[i].packets);
		st->end_ns = run->end_tsc ? netload_tsc_ns(run, run->end_tsc - run->start_tsc) : 0;
	}
	return state;
}

int
netload_run_stop(struct netload_run *run)
{
	if (run == NULL)
		return netload_fail(NETLOAD_EINVAL, "stop: NULL run");
	SHARED_STORE(&run->stop, 1);
	return 0;
}

