/*
 * run.c — a run's life: tasks set up from its configuration (checked and
 * loaded by conf.c), a common TSC start deadline, the worker loop with its
 * count or duration bounds and the drain for late frames, poll, stop and free.
 * The TX step is in tx.c, the results read after every worker returned in
 * results.c.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE  /* RUSAGE_THREAD */
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_pause.h>

#include "run.h"

/* The run whose workers own the ports' queues (lent to it through port.c). */
static struct netload_run *active_run;

static void
set_active(struct netload_run *run)
{
	active_run = run;
	netload_port_lend_queues(run != NULL);
}

/* A worker's off-CPU time, its share spent waiting for the CPU, preemptions and
 * sleeps since its start, on each of its TX and RX tasks. */
static void
cpu_account(struct netload_run *run, const struct worker *w)
{
	struct netload_cpu_mark end;
	struct netload_cpu_use use;
	uint32_t i;

	netload_cpu_mark(&end, w->schedstat_fd);
	netload_cpu_since(&w->cpu_start, &end, &use);
	for (i = 0; i < w->n_tx; i++) {
		struct tx_task *t = &run->tx[w->tx[i]];

		t->off_cpu_ns = use.off_cpu_ns;
		t->wait_cpu_ns = use.wait_cpu_ns;
		t->preemptions = use.preemptions;
		t->sleeps = use.sleeps;
	}
	for (i = 0; i < w->n_rx; i++) {
		struct rx_task *r = &run->rx[w->rx[i]];

		r->off_cpu_ns = use.off_cpu_ns;
		r->wait_cpu_ns = use.wait_cpu_ns;
		r->preemptions = use.preemptions;
		r->sleeps = use.sleeps;
	}
}

static int
worker_main(void *arg)
{
	struct netload_run *run = arg;
	struct worker *w = NULL;
	uint32_t i, sending, stepped, turns = 0;
	uint64_t now;

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
		for (i = 0; i < w->n_ctl; i++)
			netload_nd_flush(w->ctl_port[i], w->ctl_queue[i]);
		rte_pause();
	}
	w->schedstat_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	netload_cpu_mark(&w->cpu_start, w->schedstat_fd);
	for (;;) {
		if (unlikely(SHARED_LOAD(&run->abort)))
			break;
		/* Intervals: the snapshots of ends passed (the packets sent and the frames
		 * polled so far were all before the end). */
		if (unlikely(run->ivl != NULL))
			netload_ivl_turn(run, w, rte_rdtsc());
		if (sending) {
			uint32_t active = 0;
			int over;

			/* A fresh clock: the RX poll of the last turn may have been long. */
			now = rte_rdtsc();
			over = SHARED_LOAD(&run->stop) || (run->end_tsc && now >= run->end_tsc);

			for (i = 0, stepped = 0; i < w->n_tx; i++) {
				struct tx_task *t = &run->tx[w->tx[i]];
				uint32_t k;

				if (t->done)
					continue;
				/* RX queues of this worker get a poll per TX burst, however many
				 * streams it sends: one turn over 10,000 streams would otherwise
				 * leave them one burst of RX per 10,000 of TX (a looped port fills
				 * and TX stalls). One stream's turn is as before: TX, then RX. */
				if (stepped++ && !over)
					for (k = 0; k < w->n_rx; k++)
						netload_rx_burst(run, &run->rx[w->rx[k]], 1);
				/* Each stream checks the end on its own clock reading, so a
				 * stall in the middle of a turn ends every stream alike. */
				if (!over && t->n_phases && run->end_tsc && rte_rdtsc() >= run->end_tsc)
					over = 1;
				if (!over) {
					netload_tx_prefetch(run, w, i);
					netload_tx_step(run, t);
				}
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
		for (i = 0; i < w->n_ctl; i++)
			netload_nd_flush(w->ctl_port[i], w->ctl_queue[i]);
		/* Reading the TSC costs ~40 cycles in a VM: the drain end is
		 * checked every 16th turn (a few us late at most). */
		if (!sending && (++turns & 15) == 0) {
			uint64_t end = __atomic_load_n(&run->drain_end_tsc, __ATOMIC_ACQUIRE);

			if (end != 0 && ((w->n_rx == 0 && w->n_fwd == 0) || rte_rdtsc() >= end))
				break;
		}
	}
	/* Histogram additions still in the queues' logs, before the results are read. */
	for (i = 0; i < w->n_rx; i++)
		netload_rx_flush(run, &run->rx[w->rx[i]]);
	if (run->ivl != NULL)
		netload_ivl_finish(run, w);
	cpu_account(run, w);
	if (w->schedstat_fd >= 0)
		close(w->schedstat_fd);
	w->schedstat_fd = -1;
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
	netload_rx_arena_free(run);
	netload_ivl_free(run);
	netload_flows_free(run);
	netload_expect_free(run);
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
		set_active(NULL);
	rte_free(run);
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
	ret = netload_run_check_conf(c);
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
		ret = netload_run_load_phases(run, t, &c->tx[i], i);
		if (ret < 0)
			goto fail;
		run->slot_of[t->stream->id] = (uint16_t)i;
		netload_stream_reset(t->stream);
		t->stream->in_run = 1;
	}
	ret = netload_expect_init(run, c);
	if (ret < 0)
		goto fail;
	ret = netload_rx_arena_init(run, c);
	if (ret < 0)
		goto fail;
	for (i = 0; i < c->n_rx; i++) {
		ret = netload_rx_task_init(run, &run->rx[i], &c->rx[i], c);
		if (ret < 0)
			goto fail;
	}
	ret = anchor_nic_clocks(run);
	if (ret < 0)
		goto fail;
	ret = netload_run_load_forwarders(run, c);
	if (ret < 0)
		goto fail;
	ret = netload_run_assign(run, n_lcores);
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
	ret = netload_ivl_init(run, c);
	if (ret < 0)
		goto fail;
	ret = netload_flows_init(run, c);
	if (ret < 0)
		goto fail;
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
	set_active(run);
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

/*
 * How long a poll sleeps between its looks at the run: 200 us, or 2 ms where the
 * polling thread may run on a CPU of one of the run's workers (an engine whose
 * main lcore shares a worker's CPU, as on a 2-CPU host). Each wake-up there
 * preempts the worker: at 200 us, 5 % of a receiving worker's time on a VM
 * (benchmarks/rx_fair.py); at 2 ms, a poll returns at most 2 ms after the end.
 */
static long
poll_nap_ns(const struct netload_run *run)
{
	cpu_set_t mine;
	uint32_t i;

	if (pthread_getaffinity_np(pthread_self(), sizeof(mine), &mine) != 0)
		return 200000;
	for (i = 0; i < run->n_workers; i++) {
		rte_cpuset_t cpus = rte_lcore_cpuset(run->workers[i].lcore);

		CPU_AND(&cpus, &cpus, &mine);
		if (CPU_COUNT(&cpus) != 0)
			return 2000000;
	}
	return 200000;
}

int
netload_run_poll(struct netload_run *run, uint32_t wait_ms, struct netload_run_status *st)
{
	struct timespec nap = { 0, 0 };
	uint64_t now, until;
	uint32_t i;
	int state;

	if (run == NULL)
		return netload_fail(NETLOAD_EINVAL, "poll: NULL run");
	if (wait_ms > 1000)
		return netload_fail(NETLOAD_EINVAL,
				"poll: wait %u ms; poll in slices of at most 1000 ms", wait_ms);
	nap.tv_nsec = poll_nap_ns(run);
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
			set_active(NULL);
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

