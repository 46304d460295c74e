/*
 * rx_account.c — the accounting pass of an RX queue (rx.c classifies, this
 * counts): per stream, the frames and bytes, sequence tracking (loss, gaps,
 * duplicates, reordering), latency with RFC 3550 jitter and RFC 5481 IPDV,
 * inter-arrival gaps and timing samples, and the paged histograms they feed
 * (the queue's log of additions, pages from the run's arena). rx.c calls it
 * once per burst (netload_rx_account); everything per frame is inlined here.
 */
#include <string.h>

#include <rte_cycles.h>

#include "run.h"

#define WINDOW_MASK (NETLOAD_SEQ_WINDOW - 1)

static inline int
test_and_set(uint64_t *bits, uint64_t seq)
{
	uint64_t i = seq & WINDOW_MASK, mask = UINT64_C(1) << (i & 63);
	int was = (bits[i >> 6] & mask) != 0;

	bits[i >> 6] |= mask;
	return was;
}

static inline void
clear_bit(uint64_t *bits, uint64_t seq)
{
	uint64_t i = seq & WINDOW_MASK;

	bits[i >> 6] &= ~(UINT64_C(1) << (i & 63));
}

/* Extend a 32-bit wire sequence number to 64 bits near the expected one. */
static inline uint64_t
extend_seq(uint64_t next, uint32_t seq32)
{
	uint64_t s = (next & ~UINT64_C(0xffffffff)) | seq32;

	if (s > next + (UINT64_C(1) << 31) && s >= (UINT64_C(1) << 32))
		s -= UINT64_C(1) << 32;
	else if (s + (UINT64_C(1) << 31) < next)
		s += UINT64_C(1) << 32;
	return s;
}

static inline void
track(struct rx_stream_state *st, uint32_t seq32, uint64_t tx_stamp)
{
	uint64_t seq, k;

	if (likely(seq32 == (uint32_t)st->next)) {
		/* In order, the common case: mark it seen and move on. */
		k = st->next & WINDOW_MASK;
		st->seen[k >> 6] |= UINT64_C(1) << (k & 63);
		st->next++;
		return;
	}
	seq = extend_seq(st->next, seq32);

	if (seq >= st->next) {
		/* A gap: frames before this one are missing (lost, or late).
		 * Its TX time dates the loss, for recovery measurements. */
		st->gap_events++;
		if (tx_stamp != 0)
			st->last_gap_tx = tx_stamp;
		/* Forget what the window held for the numbers skipped over. */
		if (seq - st->next >= NETLOAD_SEQ_WINDOW)
			memset(st->seen, 0, NETLOAD_SEQ_WINDOW / 8);
		else
			for (k = st->next; k < seq; k++)
				clear_bit(st->seen, k);
		clear_bit(st->seen, seq);
		test_and_set(st->seen, seq);
		st->next = seq + 1;
		return;
	}
	if (st->next - seq <= NETLOAD_SEQ_WINDOW) {
		if (test_and_set(st->seen, seq))
			st->duplicates++;
		else
			st->reordered++;
		return;
	}
	/* Older than the window: late for sure, a duplicate maybe. */
	st->reordered++;
}

/* A page of a histogram, taken from the run's arena on first use (rare: a
 * stream's values fill a few pages); NULL when the arena has run out. */
static __rte_noinline uint64_t *
hist_page(struct netload_run *run, uint64_t **table, uint32_t page)
{
	uint64_t k = __atomic_fetch_add(&run->hist_used, 1, __ATOMIC_RELAXED);

	if (k >= run->hist_pages)
		return NULL;
	table[page] = run->hist_arena + k * NETLOAD_HIST_PAGE;
	return table[page];
}

/*
 * The queue's log of histogram additions, applied in batches: with thousands of
 * streams each addition's page table entry and bucket are cache misses, and
 * the log overlaps them where adding in place would wait for each in turn: an
 * entry's page-table entry is prefetched as it is logged, and the apply
 * prefetches every bucket of the batch before it adds to any. Applied when full and
 * when the worker ends the run, before the run's results can be read.
 */
__rte_noinline void
netload_rx_hlog_apply(struct netload_run *run, struct rx_task *t)
{
	struct rx_hist_add *e = t->hlog;
	uint64_t *pages[NETLOAD_RX_HLOG];
	uint32_t i, n = t->hlog_n;

	for (i = 0; i < n; i++) {
		pages[i] = e[i].table[e[i].idx >> NETLOAD_HIST_PAGE_SHIFT];
		if (likely(pages[i] != NULL))
			rte_prefetch0(&pages[i][e[i].idx & (NETLOAD_HIST_PAGE - 1)]);
	}
	for (i = 0; i < n; i++) {
		uint32_t page = e[i].idx >> NETLOAD_HIST_PAGE_SHIFT;
		uint64_t *p = pages[i];

		/* A page first used in this batch: an earlier entry may have taken it. */
		if (unlikely(p == NULL) && (p = e[i].table[page]) == NULL &&
				(p = hist_page(run, e[i].table, page)) == NULL) {
			e[i].st->hist_unrecorded += e[i].n;
			continue;
		}
		p[e[i].idx & (NETLOAD_HIST_PAGE - 1)] += e[i].n;
	}
	t->hlog_n = 0;
}

/* Add n to bucket idx of a paged histogram (through the queue's log). */
static inline void
hist_add_n(struct netload_run *run, struct rx_task *t, struct rx_stream_state *st,
		uint64_t **table, uint32_t idx, uint64_t n)
{
	struct rx_hist_add *e;

	if (t->hlog_n != 0) {
		e = &t->hlog[t->hlog_n - 1];
		if (e->table == table && e->idx == idx) {
			e->n += n;
			return;
		}
		if (unlikely(t->hlog_n == NETLOAD_RX_HLOG))
			netload_rx_hlog_apply(run, t);
	}
	/* Its page-table entry, for the apply: by then it has arrived. */
	rte_prefetch0(&table[idx >> NETLOAD_HIST_PAGE_SHIFT]);
	e = &t->hlog[t->hlog_n++];
	e->table = table;
	e->st = st;
	e->idx = idx;
	e->n = n;
}

/*
 * A frame's arrival on the NIC clock of its port, in ns on the run's
 * timeline; 0 when the NIC gave the frame no timestamp.
 */
static inline uint64_t
hw_arrival_ns(uint16_t port_id, const struct rte_mbuf *m)
{
	if (!(m->ol_flags & netload_rx_ts_flag))
		return 0;
	return netload_nic_ns(port_id, *RTE_MBUF_DYNFIELD(m, netload_rx_ts_offset,
			const rte_mbuf_timestamp_t *));
}

/*
 * A histogram's additions are batched: runs of equal buckets become one
 * addition (a burst's latencies mostly share a bucket, and so do a stream's
 * bursts). The batch lives in the stream's state (run.h lat_b ...).
 */
static inline void
batch_flush(struct netload_run *run, struct rx_task *t, struct rx_stream_state *st,
		uint64_t **table, struct hist_batch *b)
{
	if (b->n != 0)
		hist_add_n(run, t, st, table, b->idx, b->n);
	b->n = 0;
}

static inline void
batch_add(struct netload_run *run, struct rx_task *t, struct rx_stream_state *st,
		uint64_t **table, struct hist_batch *b, uint32_t idx)
{
	if (likely(b->idx == idx && b->n != 0 && b->n != UINT32_MAX)) {
		b->n++;
		return;
	}
	batch_flush(run, t, st, table, b);
	b->idx = idx;
	b->n = 1;
}

/*
 * A stream's latency state, copied into locals for a run of its frames so that
 * the per-frame chain stays in registers (histogram stores could alias it).
 */
struct lat_acc {
	uint64_t min, max, sum, samples, jitter16, prev_transit, prev_seq, ipdv_pairs, ipdv_zero;
	struct hist_batch lat, pos, neg;
};

static inline void
lat_load(struct lat_acc *a, const struct rx_stream_state *st)
{
	a->min = st->lat_min;
	a->max = st->lat_max;
	a->sum = st->lat_sum;
	a->samples = st->lat_samples;
	a->jitter16 = st->jitter16;
	a->prev_transit = st->prev_transit;
	a->prev_seq = st->prev_seq;
	a->ipdv_pairs = st->ipdv_pairs;
	a->ipdv_zero = st->ipdv_zero;
	a->lat = st->lat_b;
	a->pos = st->pos_b;
	a->neg = st->neg_b;
}

static inline void
lat_store(struct rx_stream_state *st, const struct lat_acc *a)
{
	st->lat_min = a->min;
	st->lat_max = a->max;
	st->lat_sum = a->sum;
	st->lat_samples = a->samples;
	st->jitter16 = a->jitter16;
	st->prev_transit = a->prev_transit;
	st->prev_seq = a->prev_seq;
	st->ipdv_pairs = a->ipdv_pairs;
	st->ipdv_zero = a->ipdv_zero;
	st->lat_b = a->lat;
	st->pos_b = a->pos;
	st->neg_b = a->neg;
}

/*
 * One timestamped arrival: latency (min/max/sum and its histogram bucket),
 * RFC 3550 interarrival jitter over arrival order, and RFC 5481 IPDV between
 * consecutive sequence numbers.
 */
static inline void
latency(struct netload_run *run, struct rx_task *t, struct rx_stream_state *st,
		struct lat_acc *a, uint32_t seq, uint64_t ns)
{
	a->min = RTE_MIN(a->min, ns);
	a->max = RTE_MAX(a->max, ns);
	a->sum += ns;
	a->samples++;
	batch_add(run, t, st, st->lat_hist, &a->lat,
			netload_hist_index_bits(ns, run->lat_bits, run->lat_buckets));
	if (a->prev_transit != 0) {
		uint64_t d = ns > a->prev_transit ? ns - a->prev_transit : a->prev_transit - ns;

		/* J += (|D| - J) / 16, with J kept scaled by 16 (RFC 3550 A.8). */
		a->jitter16 += d - ((a->jitter16 + 8) >> 4);
		if (seq == (uint32_t)(a->prev_seq + 1)) {
			if (d == 0)
				a->ipdv_zero++;
			else if (ns > a->prev_transit)
				batch_add(run, t, st, st->ipdv_pos, &a->pos, netload_hist_index_inline(d));
			else
				batch_add(run, t, st, st->ipdv_neg, &a->neg, netload_hist_index_inline(d));
			a->ipdv_pairs++;
		}
	}
	a->prev_transit = ns ? ns : 1;
	a->prev_seq = seq;
}

/*
 * The next frame of a stream whose TX stamp equals the one latency() just took
 * (frames of one TX burst carry one stamp, and arrive in one RX burst at one
 * time): the same latency again, so the same updates with nothing recomputed.
 * min and max stay, the latency bucket is the batch's own, the transit
 * difference is 0 (jitter decays by its own sixteenth), and a consecutive pair
 * adds IPDV 0 (to ipdv_zero). Only for a latency above 0 (prev_transit holds 1
 * for a 0).
 */
static inline void
latency_again(struct lat_acc *a, uint32_t seq, uint64_t ns)
{
	a->sum += ns;
	a->samples++;
	a->lat.n++;
	a->jitter16 -= (a->jitter16 + 8) >> 4;
	if (seq == (uint32_t)(a->prev_seq + 1)) {
		a->ipdv_zero++;
		a->ipdv_pairs++;
	}
	a->prev_seq = seq;
}

/* Inter-arrival gap histogram: frames of one burst share its time (gap 0). */
static inline void
gap(struct netload_run *run, struct rx_task *t, struct rx_stream_state *st, uint64_t now,
		uint64_t frames)
{
	if (unlikely(st->first_tsc == 0)) {
		st->first_tsc = now;
	} else {
		uint64_t g = now - st->last_tsc;

		if (g == 0)
			st->gap_zero++;
		else
			batch_add(run, t, st, st->gap_hist, &st->gap_b,
					netload_hist_index_inline(netload_ticks_ns(g, run->ns_mult)));
	}
	if (unlikely(st->ivl_first_tsc == 0))
		st->ivl_first_tsc = now;
	st->gap_zero += frames - 1;
	st->last_tsc = now;
}

static inline void
sample(const struct netload_run *run, struct rx_stream_state *st, uint64_t tx, uint64_t rx)
{
	if (st->n_samples < run->timing_samples) {
		st->sample_tx[st->n_samples] = tx;
		st->sample_rx[st->n_samples++] = rx;
	}
}

/*
 * One frame of a stream in the slow timing modes: latency on NIC clocks (the
 * NIC's RX timestamp minus the TX port's clock reading, both on the run's
 * timeline), or timing samples (each frame reads its own TSC: pattern checks
 * want each arrival). Gaps and first/last arrival stay on the TSC.
 */
static void
arrival_timed(struct netload_run *run, struct rx_task *t, struct rx_stream_state *st,
		struct rte_mbuf *m, const struct rx_frame *f, uint64_t by_end)
{
	struct lat_acc a;
	int stamped = f->tx_tsc != 0;
	uint64_t lat_ns = 0, now = rte_rdtsc();

	if (st->hw_clock) {
		uint64_t rx_ns = hw_arrival_ns(t->port_id, m);

		if (stamped && rx_ns == 0) {
			st->hw_missing++;
			stamped = 0;
		} else if (stamped) {
			sample(run, st, f->tx_tsc, rx_ns);
			lat_ns = rx_ns > f->tx_tsc ? rx_ns - f->tx_tsc : 0;
		}
	} else {
		sample(run, st, f->tx_tsc, now);
		if (stamped)
			lat_ns = netload_ticks_ns(now > f->tx_tsc ? now - f->tx_tsc : 0,
					run->ns_mult);
	}
	st->packets++;
	st->by_tx_end += by_end;
	st->bytes += f->bytes;
	gap(run, t, st, now, 1);
	if (stamped) {
		lat_load(&a, st);
		latency(run, t, st, &a, f->seq, lat_ns);
		lat_store(st, &a);
	}
	track(st, f->seq, f->tx_tsc);
}

/* Mark k sequence numbers from `first` seen in the window (k <= NETLOAD_MAX_BURST). */
static inline void
seen_range(uint64_t *bits, uint64_t first, uint32_t k)
{
	while (k != 0) {
		uint64_t i = first & WINDOW_MASK;
		uint32_t bit = (uint32_t)(i & 63), take = RTE_MIN(k, 64 - bit);
		uint64_t mask = take == 64 ? UINT64_MAX : ((UINT64_C(1) << take) - 1) << bit;

		bits[i >> 6] |= mask;
		first += take;
		k -= take;
	}
}

/*
 * latency_again() for m more frames of a run, in one step: their sequence
 * numbers follow the last one's (a->prev_seq), one by one, so each makes a
 * consecutive pair of IPDV 0, and the jitter decays by its sixteenth m times:
 * J -= (J + 8) >> 4, which is K -= K >> 4 for K = J + 8, two instructions a
 * frame (it stays once K is under 16). The caller made sure that the batch's
 * count does not pass UINT32_MAX.
 */
static inline void
latency_again_n(struct lat_acc *a, uint32_t m, uint64_t ns)
{
	uint64_t k = a->jitter16 + 8;
	uint32_t i = m;

	a->sum += ns * m;
	a->samples += m;
	a->lat.n += m;
	for (; i >= 4; i -= 4) {
		k -= k >> 4;
		k -= k >> 4;
		k -= k >> 4;
		k -= k >> 4;
	}
	for (; i != 0; i--)
		k -= k >> 4;
	a->jitter16 = k - 8;
	a->ipdv_zero += m;
	a->ipdv_pairs += m;
	a->prev_seq = (uint32_t)(a->prev_seq + m);
}

/*
 * The latency of one stamped frame (TX stamp tx, sequence number seq) that
 * arrived at `now`: the one its predecessor took again where it has the same
 * stamp (latency_again: frames of one TX burst), else worked out (latency).
 * *last_tx and *last_ns: the stamp and latency last worked out.
 */
static inline void
latency_frame(struct netload_run *run, struct rx_task *t, struct rx_stream_state *st,
		struct lat_acc *a, uint64_t tx, uint32_t seq, uint64_t now, uint64_t *last_tx,
		uint64_t *last_ns)
{
	/* (At a full batch, latency() flushes it.) */
	if (tx == *last_tx && a->prev_transit == *last_ns && a->lat.n != UINT32_MAX) {
		latency_again(a, seq, *last_ns);
		return;
	}
	*last_tx = tx;
	*last_ns = netload_ticks_ns(now > tx ? now - tx : 0, run->ns_mult);
	latency(run, t, st, a, seq, *last_ns);
}

/*
 * The runs f[0..r) of one stream, consecutive in a burst that arrived at `now`
 * (run.h struct rx_frame): their frames counted, their gaps (the first one's to
 * the stream's previous burst, then 0), their latencies on the TSC, and their
 * sequence numbers, in one step when they continue the stream in order (the
 * common case). A run's frames after its first share its stamp and follow its
 * sequence numbers: each takes the latency its predecessor took
 * (latency_again), all in one step (latency_again_n), which counts what they
 * would count one by one.
 */
static inline void
arrivals(struct netload_run *run, struct rx_task *t, struct rx_stream_state *st,
		const struct rx_frame *f, uint32_t r, uint64_t by_end, uint64_t now)
{
	const uint32_t next = (uint32_t)st->next;
	struct lat_acc a;
	uint64_t bytes = 0, last_tx = 0, last_ns = 0;
	uint32_t i, j, k = 0, in_order = 1;

	lat_load(&a, st);
	for (i = 0; i < r; i++) {
		uint64_t tx = f[i].tx_tsc;
		uint32_t more = f[i].n - 1u;

		bytes += f[i].bytes;
		in_order &= f[i].seq == next + k;
		k += f[i].n;
		if (unlikely(tx == 0))
			continue;
		latency_frame(run, t, st, &a, tx, f[i].seq, now, &last_tx, &last_ns);
		if (more == 0)
			continue;
		/* The run's next frames: latency_again each, while the latency is above 0
		 * (else each is worked out: prev_transit holds 1 for a 0) and the batch's
		 * count stays below UINT32_MAX. */
		if (likely(a.prev_transit == last_ns && a.lat.n <= UINT32_MAX - more)) {
			latency_again_n(&a, more, last_ns);
			continue;
		}
		for (j = 1; j <= more; j++)
			latency_frame(run, t, st, &a, tx, f[i].seq + j, now, &last_tx, &last_ns);
	}
	lat_store(st, &a);
	st->packets += k;
	st->bytes += bytes;
	st->by_tx_end += by_end * k;
	gap(run, t, st, now, k);
	if (likely(in_order)) {
		seen_range(st->seen, st->next, k);
		st->next += k;
		return;
	}
	for (i = 0; i < r; i++)
		for (j = 0; j < f[i].n; j++)
			track(st, f[i].seq + j, f[i].tx_tsc);
}

/*
 * The accounting pass of one burst's classified runs of frames f[0..n) (bufs:
 * the burst's mbufs, for the timed modes only, whose runs are single frames),
 * stream by stream, the consecutive runs of one stream at a time.
 */
void
netload_rx_account(struct netload_run *run, struct rx_task *t, struct rte_mbuf **bufs,
		const struct rx_frame *f, uint16_t n, uint64_t now, uint64_t by_end)
{
	uint16_t i, j, k = 0;

	for (i = 0; i < n; i = j) {
		uint16_t slot = f[i].slot, first = k;
		struct rx_stream_state *st;

		k += f[i].n;
		for (j = i + 1; j < n && f[j].slot == slot; j++)
			k += f[j].n;
		if (slot == NETLOAD_NO_SLOT)
			continue;
		st = &t->streams[slot];
		if (unlikely(bufs != NULL && (st->hw_clock || run->timing_samples != 0))) {
			uint16_t x;

			RTE_ASSERT(k - first == j - i);  /* no runs in the timed modes */
			for (x = 0; x < j - i; x++)
				arrival_timed(run, t, st, bufs[first + x], &f[i + x], by_end);
		} else {
			arrivals(run, t, st, &f[i], j - i, by_end, now);
		}
	}
}

/*
 * Counts of one of a stream's paged histograms on one queue added into
 * counts[0..n): pages never taken hold zeros.
 */
void
netload_rx_hist_add_into(uint64_t *const *table, uint64_t *counts, uint32_t n)
{
	uint32_t page, k;

	for (page = 0; page < NETLOAD_HIST_PAGES(n); page++) {
		const uint64_t *p = table[page];
		uint32_t base = page << NETLOAD_HIST_PAGE_SHIFT;
		uint32_t end = base + NETLOAD_HIST_PAGE < n ? base + NETLOAD_HIST_PAGE : n;

		if (p == NULL)
			continue;
		for (k = base; k < end; k++)
			if (p[k - base] != 0)  /* untouched buckets of counts stay unwritten */
				counts[k] += p[k - base];
	}
}
