/*
 * results.c — what a finished run measured, read back after every worker has
 * returned: TX and RX counters, histograms, timing samples, captures and the
 * delay lines' counters.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <rte_common.h>

#include "run.h"

static int
check_done(const struct netload_run *run, const char *what)
{
	if (run == NULL)
		return netload_fail(NETLOAD_EINVAL, "%s: NULL run", what);
	if (!run->reaped)
		return netload_fail(NETLOAD_ESTATE,
				"%s: the run is still active; poll until it is done", what);
	return 0;
}

static uint64_t
since_start(const struct netload_run *run, uint64_t tsc)
{
	return tsc > run->start_tsc ? netload_tsc_ns(run, tsc - run->start_tsc) : 0;
}

int
netload_run_rx_expect(const struct netload_run *run, uint32_t i, uint32_t q,
		struct netload_expect_stats *out)
{
	const struct rx_expect_state *s;
	int ret = check_done(run, "rx_expect");

	if (ret < 0)
		return ret;
	if (i >= run->n_tx || q >= run->n_rx || out == NULL)
		return netload_fail(NETLOAD_EINVAL, "rx_expect: entry %u of %u, RX entry %u of %u",
				i, run->n_tx, q, run->n_rx);
	memset(out, 0, sizeof(*out));
	if (run->n_expect == 0 || run->expect_of[i] == NETLOAD_NO_SLOT)
		return 0;
	s = &run->rx[q].expect[run->expect_of[i]];
	memcpy(out->matched, s->matched, sizeof(out->matched));
	out->unmatched = s->unmatched;
	out->n_kept = s->n_kept;
	memcpy(out->kept_len, s->kept_len, sizeof(out->kept_len));
	memcpy(out->kept_seq, s->kept_seq, sizeof(out->kept_seq));
	memcpy(out->kept, s->kept, sizeof(out->kept));
	return 0;
}

int
netload_run_tx_stats(const struct netload_run *run, uint32_t i, struct netload_tx_stats *out)
{
	const struct tx_task *t;
	int ret = check_done(run, "tx_stats");

	if (ret < 0)
		return ret;
	if (i >= run->n_tx)
		return netload_fail(NETLOAD_EINVAL, "tx_stats: entry %u of %u", i, run->n_tx);
	t = &run->tx[i];
	out->packets = SHARED_LOAD(&t->packets);
	out->bytes = t->bytes;
	out->unsent = t->unsent;
	out->alloc_failures = t->alloc_failures;
	out->first_ns = since_start(run, t->first_tsc);
	out->last_ns = since_start(run, t->last_tsc);
	out->max_lag_ns = netload_tsc_ns(run, t->max_lag);
	out->end_ns = since_start(run, t->end_tsc);
	out->end_reason = t->end_reason;
	out->lagged_bursts = t->lagged_bursts;
	out->off_cpu_ns = t->off_cpu_ns;
	out->preemptions = t->preemptions;
	out->wait_cpu_ns = t->wait_cpu_ns;
	out->sleeps = t->sleeps;
	out->refused_bursts = t->refused_bursts;
	return 0;
}

/*
 * Counts of a histogram that the stream's state holds, not its pages: bucket
 * 0's gap 0 and IPDV 0 (run.h gap_zero, ipdv_zero) and each histogram's
 * latest batch (lat_b ...).
 */
static void
pending_into(const struct rx_stream_state *st, size_t field, uint64_t *counts, uint32_t n)
{
	const struct hist_batch *b;
	uint64_t zero = 0;

	if (field == offsetof(struct rx_stream_state, lat_hist)) {
		b = &st->lat_b;
	} else if (field == offsetof(struct rx_stream_state, gap_hist)) {
		b = &st->gap_b;
		zero = st->gap_zero;
	} else if (field == offsetof(struct rx_stream_state, ipdv_pos)) {
		b = &st->pos_b;
		zero = st->ipdv_zero;
	} else {
		b = &st->neg_b;
	}
	if (n != 0)
		counts[0] += zero;
	if (b->n != 0 && b->idx < n)
		counts[b->idx] += b->n;
}

static int
merge_hist(const struct netload_run *run, uint32_t i, size_t field, uint64_t *counts,
		uint32_t n, const char *what)
{
	uint32_t k, q, limit = field == offsetof(struct rx_stream_state, lat_hist) ?
		run->lat_buckets : NETLOAD_HIST_BUCKETS;
	int ret = check_done(run, what);

	if (ret < 0)
		return ret;
	if (i >= run->n_tx || counts == NULL || n > limit)
		return netload_fail(NETLOAD_EINVAL, "%s: entry %u of %u, %u buckets",
				what, i, run->n_tx, n);
	/* Zero only what is not zero yet, and add only the values there are: a fresh
	 * (calloc'd) buffer is then written where the stream has values and nowhere
	 * else, so 10,000 streams' histograms (800 MB dense) cost memory for their
	 * values only. Reading an untouched page costs no memory. */
	for (k = 0; k < n; k++)
		if (counts[k] != 0)
			counts[k] = 0;
	for (q = 0; q < run->n_rx; q++) {
		uint64_t *const *table = *(uint64_t **const *)((const char *)&run->rx[q].streams[i] +
				field);

		netload_rx_hist_add_into(table, counts, n);
		pending_into(&run->rx[q].streams[i], field, counts, n);
	}
	return 0;
}

int
netload_run_rx_gap_hist(const struct netload_run *run, uint32_t i, uint64_t *counts, uint32_t n)
{
	return merge_hist(run, i, offsetof(struct rx_stream_state, gap_hist), counts, n,
			"rx_gap_hist");
}

int
netload_run_rx_latency_hist(const struct netload_run *run, uint32_t i, uint64_t *counts,
		uint32_t n)
{
	return merge_hist(run, i, offsetof(struct rx_stream_state, lat_hist), counts, n,
			"rx_latency_hist");
}

int
netload_run_rx_ipdv_hist(const struct netload_run *run, uint32_t i, uint64_t *positive,
		uint64_t *negative, uint32_t n)
{
	int ret = merge_hist(run, i, offsetof(struct rx_stream_state, ipdv_pos), positive, n,
			"rx_ipdv_hist");

	if (ret < 0)
		return ret;
	return merge_hist(run, i, offsetof(struct rx_stream_state, ipdv_neg), negative, n,
			"rx_ipdv_hist");
}

int
netload_run_fwd_stats(const struct netload_run *run, uint32_t i, struct netload_fwd_stats *out)
{
	int ret = check_done(run, "fwd_stats");

	if (ret < 0)
		return ret;
	if (i >= run->n_fwd)
		return netload_fail(NETLOAD_EINVAL, "fwd_stats: forwarder %u of %u", i, run->n_fwd);
	*out = run->fwd[i].stats;
	return 0;
}

int
netload_run_capture(const struct netload_run *run, uint32_t i, uint8_t *data, uint32_t snaplen,
		uint32_t *len, uint64_t *ns, uint32_t n)
{
	const struct rx_task *t;
	uint64_t first, k;
	uint32_t got = 0, copy;
	int ret = check_done(run, "capture");

	if (ret < 0)
		return ret;
	if (i >= run->n_rx)
		return netload_fail(NETLOAD_EINVAL, "capture: RX entry %u of %u", i, run->n_rx);
	t = &run->rx[i];
	if (t->capture == NULL)
		return 0;
	copy = RTE_MIN(snaplen, run->capture_snaplen);
	first = t->captured > run->capture_frames ? t->captured - run->capture_frames : 0;
	for (k = first; k < t->captured && got < n; k++, got++) {
		uint32_t slot = (uint32_t)(k % run->capture_frames);

		memcpy(data + (size_t)got * snaplen,
				t->capture + (size_t)slot * run->capture_snaplen, copy);
		len[got] = t->capture_len[slot];
		ns[got] = since_start(run, t->capture_tsc[slot]);
	}
	return (int)got;
}

int
netload_run_timing_samples(const struct netload_run *run, uint32_t i, uint64_t *tx_ns,
		uint64_t *rx_ns, uint32_t n)
{
	uint32_t q, k, got = 0;
	int ret = check_done(run, "timing_samples");

	if (ret < 0)
		return ret;
	if (i >= run->n_tx)
		return netload_fail(NETLOAD_EINVAL, "timing_samples: entry %u of %u", i, run->n_tx);
	/* Samples of one stream come from one RX queue unless the DUT spread it. */
	for (q = 0; q < run->n_rx && got < n; q++) {
		const struct rx_stream_state *st = &run->rx[q].streams[i];

		for (k = 0; k < st->n_samples && got < n; k++, got++) {
			if (st->hw_clock) {
				uint64_t start_ns = netload_ticks_ns(run->start_tsc, run->ns_mult);

				tx_ns[got] = st->sample_tx[k] - start_ns;
				rx_ns[got] = st->sample_rx[k] - start_ns;
			} else {
				tx_ns[got] = since_start(run, st->sample_tx[k]);
				rx_ns[got] = since_start(run, st->sample_rx[k]);
			}
		}
	}
	return (int)got;
}

int
netload_run_rx_stream_stats(const struct netload_run *run, uint32_t i,
		struct netload_rx_stream_stats *out)
{
	uint64_t first = UINT64_MAX, last = 0, lmin = UINT64_MAX, lmax = 0, best = 0;
	uint32_t q;
	int ret = check_done(run, "rx_stream_stats");

	if (ret < 0)
		return ret;
	if (i >= run->n_tx)
		return netload_fail(NETLOAD_EINVAL, "rx_stream_stats: entry %u of %u", i, run->n_tx);
	memset(out, 0, sizeof(*out));
	for (q = 0; q < run->n_rx; q++) {
		const struct rx_stream_state *st = &run->rx[q].streams[i];

		if (st->packets == 0)
			continue;
		out->rx_queues++;
		out->packets += st->packets;
		out->bytes += st->bytes;
		out->by_tx_end += st->by_tx_end;
		out->duplicates += st->duplicates;
		out->reordered += st->reordered;
		out->max_seq = RTE_MAX(out->max_seq, st->next);
		out->latency_sum_ns += st->lat_sum;
		out->latency_samples += st->lat_samples;
		out->hw_stamp_missing += st->hw_missing;
		out->hist_unrecorded += st->hist_unrecorded;
		out->gap_events += st->gap_events;
		if (st->last_gap_tx != 0) {
			uint64_t at = st->hw_clock ? st->last_gap_tx -
				netload_ticks_ns(run->start_tsc, run->ns_mult) :
				since_start(run, st->last_gap_tx);

			out->last_gap_tx_ns = RTE_MAX(out->last_gap_tx_ns, at);
		}
		out->ipdv_pairs += st->ipdv_pairs;
		/* One stream normally arrives on one queue: report that queue's J. */
		if (st->lat_samples > best)
			best = st->lat_samples, out->jitter_ns = (st->jitter16 + 8) >> 4;
		first = RTE_MIN(first, st->first_tsc);
		last = RTE_MAX(last, st->last_tsc);
		lmin = RTE_MIN(lmin, st->lat_min);
		lmax = RTE_MAX(lmax, st->lat_max);
	}
	if (out->packets) {
		out->first_ns = since_start(run, first);
		out->last_ns = since_start(run, last);
	}
	if (out->latency_samples) {
		out->latency_min_ns = lmin;
		out->latency_max_ns = lmax;
	}
	return 0;
}

int
netload_run_rx_queue_stats(const struct netload_run *run, uint32_t i,
		struct netload_rx_queue_stats *out)
{
	const struct rx_task *t;
	int ret = check_done(run, "rx_queue_stats");

	if (ret < 0)
		return ret;
	if (i >= run->n_rx)
		return netload_fail(NETLOAD_EINVAL, "rx_queue_stats: entry %u of %u", i, run->n_rx);
	t = &run->rx[i];
	out->packets = SHARED_LOAD(&t->packets);
	out->bytes = t->bytes;
	out->foreign = t->foreign;
	out->bursts = t->bursts;
	out->off_cpu_ns = t->off_cpu_ns;
	out->preemptions = t->preemptions;
	out->wait_cpu_ns = t->wait_cpu_ns;
	out->sleeps = t->sleeps;
	return 0;
}
