/*
 * interval.c — a run counted in intervals as well as whole (a run with
 * interval_ns: the Y.1564 service performance test's 1-s intervals in one run,
 * traffic never stopping between them). At each interval's end every RX queue
 * copies each stream's cumulative counters and latency histogram into a ring
 * slot (rx.c netload_rx_snapshot: at its first burst after the end, or between
 * polls), and every worker its TX tasks' packet counts; the host reads the
 * slots while the run goes on and takes differences. A frame is counted in the
 * interval its RX poll's clock falls in, exactly once: its queue's snapshot
 * comes before any frame polled after the end is accounted. The last interval
 * is the run's end state, drain included.
 */
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include "run.h"

/* Ring memory beyond which a run is refused (every slot's histograms are dense). */
#define IVL_MAX_BYTES (UINT64_C(1) << 30)
#define IVL_MIN_NS UINT64_C(10000000)

int
netload_ivl_init(struct netload_run *run, const struct netload_run_conf *c)
{
	struct run_intervals *iv;
	uint64_t n, cells, bytes;
	uint32_t i;

	if (c->interval_ns == 0)
		return 0;
	if (c->duration_ns == 0 || c->interval_ns < IVL_MIN_NS || c->interval_ns > c->duration_ns)
		return netload_fail(NETLOAD_EINVAL, "run: interval_ns %" PRIu64 " needs a "
				"duration_ns (%" PRIu64 ") at least as long, and at least 10 ms",
				c->interval_ns, c->duration_ns);
	n = (c->duration_ns - 1) / c->interval_ns;  /* ends strictly inside the run */
	cells = (uint64_t)NETLOAD_IVL_RING * run->n_rx * run->n_tx;
	bytes = cells * (sizeof(struct ivl_rx) + sizeof(uint64_t) * run->lat_buckets);
	if (bytes > IVL_MAX_BYTES)
		return netload_fail(NETLOAD_EINVAL, "run: intervals of %u streams on %u RX "
				"queues take %" PRIu64 " MB of snapshots, more than %" PRIu64
				"; run fewer streams or a lower latency_sub_bits",
				run->n_tx, run->n_rx, bytes >> 20, IVL_MAX_BYTES >> 20);
	iv = calloc(1, sizeof(*iv));
	if (iv == NULL)
		return netload_fail(NETLOAD_ENOMEM, "run: interval state");
	run->ivl = iv;
	iv->interval_ns = c->interval_ns;
	iv->n_snaps = (uint32_t)n;
	iv->rx_seq = calloc((size_t)NETLOAD_IVL_RING * (run->n_rx + 1), sizeof(uint64_t));
	iv->rx = calloc(cells + 1, sizeof(struct ivl_rx));
	iv->hist = calloc(cells * run->lat_buckets + 1, sizeof(uint64_t));
	iv->tx_seq = calloc((size_t)NETLOAD_IVL_RING * (run->n_tx + 1), sizeof(uint64_t));
	iv->tx = calloc((size_t)NETLOAD_IVL_RING * (run->n_tx + 1), sizeof(struct ivl_tx));
	iv->tx_sent = calloc(run->n_tx + 1, 1);
	if (iv->rx_seq == NULL || iv->rx == NULL || iv->hist == NULL || iv->tx_seq == NULL ||
			iv->tx == NULL || iv->tx_sent == NULL)
		return netload_fail(NETLOAD_ENOMEM, "run: interval snapshots (%" PRIu64 " MB)",
				bytes >> 20);
	for (i = 0; i < run->n_rx; i++)
		run->rx[i].snap_tsc = netload_ivl_end_tsc(run, 0);
	for (i = 0; i < run->n_workers; i++) {
		struct worker *w = &run->workers[i];
		uint32_t x;

		w->tx_snap_tsc = w->n_tx ? netload_ivl_end_tsc(run, 0) : UINT64_MAX;
		for (x = 0; x < w->n_tx; x++)
			iv->tx_sent[w->tx[x]] = 1;
	}
	return 0;
}

void
netload_ivl_free(struct netload_run *run)
{
	struct run_intervals *iv = run->ivl;

	if (iv == NULL)
		return;
	free(iv->rx_seq);
	free(iv->rx);
	free(iv->hist);
	free(iv->tx_seq);
	free(iv->tx);
	free(iv->tx_sent);
	free(iv);
	run->ivl = NULL;
}

/* The TX snapshots of worker w due by `now`: the packets its tasks sent before,
 * their worst lag since the last one (then reset: the worker alone writes it),
 * and the worker's CPU marks (one mark for every end passed at once). */
static void
tx_snapshot(struct netload_run *run, struct worker *w, uint64_t now)
{
	struct run_intervals *iv = run->ivl;
	struct netload_cpu_mark mark;
	struct netload_cpu_use use;
	uint32_t i;

	netload_cpu_mark(&mark, w->schedstat_fd);
	netload_cpu_since(&w->cpu_start, &mark, &use);
	while (now >= w->tx_snap_tsc) {
		uint32_t j = w->tx_snaps, slot = j % NETLOAD_IVL_RING;
		int free_slot = j - SHARED_LOAD(&iv->read) < NETLOAD_IVL_RING;

		for (i = 0; i < w->n_tx; i++) {
			uint32_t x = w->tx[i];
			struct tx_task *t = &run->tx[x];
			size_t cell = (size_t)slot * run->n_tx + x;

			if (free_slot) {
				iv->tx[cell] = (struct ivl_tx){
					.packets = SHARED_LOAD(&t->packets),
					.max_lag = t->ivl_max_lag,
					.lagged_bursts = t->lagged_bursts,
					.refused_bursts = t->refused_bursts,
					.cpu = use,
				};
				SHARED_STORE(&iv->tx_seq[cell], (uint64_t)j + 1);
			}
			t->ivl_max_lag = 0;
		}
		SHARED_STORE(&w->tx_snaps, j + 1);
		w->tx_snap_tsc = netload_ivl_end_tsc(run, j + 1);
	}
}

/* A worker's turn in a run with intervals: the snapshots due by `now`. */
void
netload_ivl_turn(struct netload_run *run, struct worker *w, uint64_t now)
{
	uint32_t i;

	if (now >= w->tx_snap_tsc)
		tx_snapshot(run, w, now);
	for (i = 0; i < w->n_rx; i++) {
		struct rx_task *t = &run->rx[w->rx[i]];

		if (now >= t->snap_tsc)
			netload_rx_snapshot(run, t, now);
	}
}

/* A worker's return: the interval ends it did not reach (TX ended early, the run
 * was stopped) get its final counts, so the host can read every interval. */
void
netload_ivl_finish(struct netload_run *run, struct worker *w)
{
	netload_ivl_turn(run, w, UINT64_MAX - 1);
}

static uint32_t
ready(const struct netload_run *run)
{
	uint32_t i, n = run->ivl->n_snaps;

	for (i = 0; i < run->n_rx; i++)
		n = RTE_MIN(n, SHARED_LOAD(&run->rx[i].snaps));
	for (i = 0; i < run->n_workers; i++)
		if (run->workers[i].n_tx)
			n = RTE_MIN(n, SHARED_LOAD(&run->workers[i].tx_snaps));
	return n;
}

int
netload_run_intervals(struct netload_run *run, uint32_t read)
{
	uint32_t n;

	if (run == NULL)
		return netload_fail(NETLOAD_EINVAL, "run_intervals: NULL run");
	if (run->ivl == NULL)
		return 0;
	n = ready(run);
	if (read > n + 1)
		return netload_fail(NETLOAD_EINVAL, "run_intervals: read %u, only %u ready",
				read, n);
	if (read > SHARED_LOAD(&run->ivl->read))
		SHARED_STORE(&run->ivl->read, read);
	return (int)(n + (run->reaped && n == run->ivl->n_snaps));
}

static uint64_t
rx_ns(const struct netload_run *run, uint64_t tsc)
{
	return tsc > run->start_tsc ? netload_tsc_ns(run, tsc - run->start_tsc) : 0;
}

/* One queue's cell (slot's copy, or the live state for the last interval) into out. */
static void
add_rx(const struct netload_run *run, const struct ivl_rx *c, const uint64_t *h,
		struct netload_interval_stats *out, uint64_t *counts, uint32_t n)
{
	uint32_t k;

	out->rx_packets += c->packets;
	out->rx_bytes += c->bytes;
	out->duplicates += c->duplicates;
	out->reordered += c->reordered;
	out->latency_sum_ns += c->lat_sum;
	out->latency_samples += c->lat_samples;
	out->hist_unrecorded += c->hist_unrecorded;
	if (c->first_tsc != 0) {
		uint64_t first = rx_ns(run, c->first_tsc), last = rx_ns(run, c->last_tsc);

		if (out->first_rx_ns == 0 || first < out->first_rx_ns)
			out->first_rx_ns = first;
		out->last_rx_ns = RTE_MAX(out->last_rx_ns, last);
	}
	if (h != NULL)
		for (k = 0; k < n; k++)
			counts[k] += h[k];
}

static void
add_tx(const struct netload_run *run, const struct ivl_tx *c,
		struct netload_interval_stats *out)
{
	out->tx_packets = c->packets;
	out->tx_max_lag_ns = netload_tsc_ns(run, c->max_lag);
	out->tx_lagged_bursts = c->lagged_bursts;
	out->tx_refused_bursts = c->refused_bursts;
	out->tx_off_cpu_ns = c->cpu.off_cpu_ns;
	out->tx_wait_cpu_ns = c->cpu.wait_cpu_ns;
	out->tx_preemptions = c->cpu.preemptions;
	out->tx_sleeps = c->cpu.sleeps;
}

/* The last interval: the TX task's end state (its worker's CPU use over the run,
 * results.c's netload_tx_stats, and its lag since the last snapshot). */
static void
live_tx(const struct netload_run *run, uint32_t i, struct netload_interval_stats *out)
{
	const struct tx_task *t = &run->tx[i];
	struct ivl_tx c = {
		.packets = t->packets, .max_lag = t->ivl_max_lag,
		.lagged_bursts = t->lagged_bursts, .refused_bursts = t->refused_bursts,
		.cpu = { .off_cpu_ns = t->off_cpu_ns, .wait_cpu_ns = t->wait_cpu_ns,
			 .preemptions = t->preemptions, .sleeps = t->sleeps },
	};

	add_tx(run, &c, out);
}

static void
live_rx(const struct netload_run *run, uint32_t q, uint32_t i,
		struct netload_interval_stats *out, uint64_t *counts, uint32_t n)
{
	const struct rx_stream_state *st = &run->rx[q].streams[i];
	struct ivl_rx c = {
		.packets = st->packets, .bytes = st->bytes, .duplicates = st->duplicates,
		.reordered = st->reordered, .lat_sum = st->lat_sum,
		.lat_samples = st->lat_samples, .hist_unrecorded = st->hist_unrecorded,
		.first_tsc = st->ivl_first_tsc, .last_tsc = st->ivl_first_tsc ? st->last_tsc : 0,
	};

	add_rx(run, &c, NULL, out, counts, n);
	netload_rx_hist_add_into(st->lat_hist, counts, n);
	if (st->lat_b.n != 0 && st->lat_b.idx < n)
		counts[st->lat_b.idx] += st->lat_b.n;
}

int
netload_run_interval(const struct netload_run *run, uint32_t k, uint32_t i,
		struct netload_interval_stats *out, uint64_t *counts, uint32_t n)
{
	const struct run_intervals *iv;
	uint32_t q, slot;
	int lost = 0;

	if (run == NULL || run->ivl == NULL || out == NULL || counts == NULL)
		return netload_fail(NETLOAD_EINVAL, "run_interval: not a run with intervals");
	iv = run->ivl;
	if (i >= run->n_tx || n != run->lat_buckets)
		return netload_fail(NETLOAD_EINVAL, "run_interval: entry %u of %u, %u buckets of %u",
				i, run->n_tx, n, run->lat_buckets);
	memset(out, 0, sizeof(*out));
	memset(counts, 0, sizeof(*counts) * n);
	if (k == iv->n_snaps) {
		if (!run->reaped)
			return netload_fail(NETLOAD_ESTATE, "run_interval: the last interval is "
					"read once the run is done");
		live_tx(run, i, out);
		for (q = 0; q < run->n_rx; q++)
			live_rx(run, q, i, out, counts, n);
		return 0;
	}
	if (k >= ready(run) || k < SHARED_LOAD(&iv->read))
		return netload_fail(NETLOAD_EINVAL, "run_interval: interval %u is not readable "
				"(read %u, %u ready)", k, SHARED_LOAD(&iv->read), ready(run));
	slot = k % NETLOAD_IVL_RING;
	if (iv->tx_sent[i] &&
			SHARED_LOAD(&iv->tx_seq[(size_t)slot * run->n_tx + i]) != (uint64_t)k + 1)
		lost = 1;
	if (iv->tx_sent[i])
		add_tx(run, &iv->tx[(size_t)slot * run->n_tx + i], out);
	for (q = 0; q < run->n_rx; q++) {
		size_t cell = ((size_t)slot * run->n_rx + q) * run->n_tx + i;

		if (SHARED_LOAD(&iv->rx_seq[(size_t)slot * run->n_rx + q]) != (uint64_t)k + 1) {
			lost = 1;
			continue;
		}
		add_rx(run, &iv->rx[cell], iv->hist + cell * run->lat_buckets, out, counts, n);
	}
	return lost;
}
