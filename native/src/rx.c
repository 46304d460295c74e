/*
 * rx.c — the receive side: classify each frame on its signature trailer and
 * keep per-stream counts, sequence tracking and latency.
 */
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>

#include "run.h"

#define WINDOW_MASK (NETLOAD_SEQ_WINDOW - 1)

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>

/*
 * Sanitizer builds only (scripts/sanitize.sh). Frames live in DPDK's memory,
 * which ASan knows nothing of: while a burst is classified, each segment's
 * buffer outside the frame's bytes is poisoned, so that a read before a
 * frame's start or past its end aborts instead of reading stale bytes.
 */
static void
asan_fence(struct rte_mbuf **bufs, uint16_t n, int poison)
{
	struct rte_mbuf *seg;
	uint16_t i;

	for (i = 0; i < n; i++) {
		for (seg = bufs[i]; seg != NULL; seg = seg->next) {
			char *buf = seg->buf_addr;
			char *end = buf + seg->data_off + seg->data_len;

			if (poison) {
				ASAN_POISON_MEMORY_REGION(buf, seg->data_off);
				ASAN_POISON_MEMORY_REGION(end, buf + seg->buf_len - end);
			} else {
				ASAN_UNPOISON_MEMORY_REGION(buf, seg->buf_len);
			}
		}
	}
}
#else
#define asan_fence(bufs, n, poison) do { } while (0)
#endif

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

static inline void
hist_add(uint64_t *hist, uint64_t ns)
{
	hist[netload_hist_index_inline(ns)]++;
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
 * One timestamped arrival: latency (histogram, min/max/sum), RFC 3550
 * interarrival jitter over arrival order, and RFC 5481 IPDV between
 * consecutive sequence numbers.
 */
static inline void
latency(const struct netload_run *run, struct rx_stream_state *st,
		const netload_sig_t *sig, uint64_t ns)
{

	if (ns < st->lat_min)
		st->lat_min = ns;
	if (ns > st->lat_max)
		st->lat_max = ns;
	st->lat_sum += ns;
	st->lat_samples++;
	st->lat_hist[netload_hist_index_bits(ns, run->lat_bits, run->lat_buckets)]++;
	if (st->prev_transit != 0) {
		uint64_t d = ns > st->prev_transit ? ns - st->prev_transit :
			st->prev_transit - ns;

		/* J += (|D| - J) / 16, with J kept scaled by 16 (RFC 3550 A.8). */
		st->jitter16 += d - ((st->jitter16 + 8) >> 4);
		if (sig->seq == (uint32_t)(st->prev_seq + 1)) {
			hist_add(ns >= st->prev_transit ? st->ipdv_pos : st->ipdv_neg, d);
			st->ipdv_pairs++;
		}
	}
	st->prev_transit = ns ? ns : 1;
	st->prev_seq = sig->seq;
}

static inline const netload_sig_t *
trailer(struct rte_mbuf *m, struct netload_signature *copy)
{
	uint32_t len = m->pkt_len;

	if (unlikely(len < NETLOAD_SIGNATURE_BYTES + 14))
		return NULL;
	return rte_pktmbuf_read(m, len - NETLOAD_SIGNATURE_BYTES,
			NETLOAD_SIGNATURE_BYTES, copy);
}

/* Inter-arrival gap histogram: frames of one burst share its time (gap 0). */
static inline void
gap(const struct netload_run *run, struct rx_stream_state *st, uint64_t now)
{
	if (unlikely(st->first_tsc == 0)) {
		st->first_tsc = now;
	} else {
		uint64_t g = now - st->last_tsc;

		st->gap_hist[g == 0 ? 0 :
			netload_hist_index_inline(netload_ticks_ns(g, run->ns_mult))]++;
	}
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
 * One frame of a stream of this run arrived: the one path every signed frame takes.
 * `now` is the burst's TSC. Latency is on the TSC, or for a stream timed on NIC
 * clocks the NIC's RX timestamp minus the TX port's clock reading (both on the run's
 * timeline). Gaps and first/last arrival stay on the TSC for every stream. With
 * timing samples, each frame reads its own TSC (pattern checks want each arrival).
 */
static inline void
arrival(const struct netload_run *run, struct rx_task *t, struct rx_stream_state *st,
		struct rte_mbuf *m, const netload_sig_t *sig, uint64_t by_end, uint64_t now)
{
	int stamped = sig->tx_tsc != 0;
	uint64_t lat_ns = 0;

	if (unlikely(st->hw_clock)) {
		uint64_t rx_ns = hw_arrival_ns(t->port_id, m);

		now = rte_rdtsc();
		if (stamped && rx_ns == 0) {
			st->hw_missing++;
			stamped = 0;
		} else if (stamped) {
			sample(run, st, sig->tx_tsc, rx_ns);
			lat_ns = rx_ns > sig->tx_tsc ? rx_ns - sig->tx_tsc : 0;
		}
	} else {
		if (unlikely(run->timing_samples != 0)) {
			now = rte_rdtsc();
			sample(run, st, sig->tx_tsc, now);
		}
		if (likely(stamped))
			lat_ns = netload_ticks_ns(now > sig->tx_tsc ? now - sig->tx_tsc : 0,
					run->ns_mult);
	}
	st->packets++;
	st->by_tx_end += by_end;
	st->bytes += m->pkt_len;
	gap(run, st, now);
	if (stamped)
		latency(run, st, sig, lat_ns);
	track(st, sig->seq, sig->tx_tsc);
}

/* Keep a copy of the frame's first bytes in the queue's ring (failure captures). */
static void
capture(const struct netload_run *run, struct rx_task *t, const struct rte_mbuf *m,
		uint64_t now)
{
	uint32_t slot = (uint32_t)(t->captured % run->capture_frames);
	uint32_t n = RTE_MIN(m->pkt_len, run->capture_snaplen);
	uint8_t *dst = t->capture + (size_t)slot * run->capture_snaplen;

	if (rte_pktmbuf_read(m, 0, n, dst) != dst)
		memcpy(dst, rte_pktmbuf_read(m, 0, n, dst), n);
	t->capture_len[slot] = m->pkt_len;
	t->capture_tsc[slot] = now;
	t->captured++;
}

void
netload_rx_burst(struct netload_run *run, struct rx_task *t, int count)
{
	struct rte_mbuf *bufs[NETLOAD_MAX_BURST];
	uint16_t n, i;
	uint64_t now, bytes = 0, tx_end, by_end;

	n = rte_eth_rx_burst(t->port_id, t->queue, bufs, run->burst);
	if (n == 0)
		return;
	if (unlikely(!count)) {
		/* before the start deadline: no stream counts yet, but ARP/ND is answered */
		if (netload_nd_ports[t->port_id] != NULL)
			for (i = 0; i < n; i++)
				netload_nd_input(t->port_id, bufs[i]);
		rte_pktmbuf_free_bulk(bufs, n);
		return;
	}
	asan_fence(bufs, n, 1);
	now = rte_rdtsc();
	/* Did this burst arrive while TX was still on (its schedule, or its actual end)? */
	tx_end = SHARED_LOAD(&run->tx_end_tsc);
	by_end = tx_end == 0 || now < tx_end;
	t->bursts++;
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = bufs[i];
		struct netload_signature copy;
		const netload_sig_t *sig;
		struct rx_stream_state *st;
		uint16_t slot;

		if (i + 4 < n)
			rte_prefetch0(rte_pktmbuf_mtod_offset(bufs[i + 4], char *,
					bufs[i + 4]->pkt_len - NETLOAD_SIGNATURE_BYTES));
		bytes += m->pkt_len;
		if (unlikely(t->capture != NULL))
			capture(run, t, m, now);
		sig = trailer(m, &copy);
		if (unlikely(sig == NULL || sig->magic != NETLOAD_SIGNATURE_MAGIC ||
				sig->stream_id >= NETLOAD_MAX_STREAMS ||
				(slot = run->slot_of[sig->stream_id]) == NETLOAD_NO_SLOT)) {
			/* No stream's frame: perhaps ARP/ND for the port (signed frames
			 * never take this branch, so they pay nothing for it). */
			t->foreign++;
			if (netload_nd_ports[t->port_id] != NULL)
				netload_nd_input(t->port_id, m);
			continue;
		}
		st = &t->streams[slot];
		arrival(run, t, st, m, sig, by_end, now);
	}
	SHARED_STORE(&t->packets, t->packets + n);
	t->bytes += bytes;
	asan_fence(bufs, n, 0);
	rte_pktmbuf_free_bulk(bufs, n);
}

/*
 * An RX queue's task for a run being set up: its capture ring and, per TX entry
 * of the run, the stream state with its sequence window, histograms and timing
 * samples. netload_rx_task_free releases what it got, also half-way.
 */
int
netload_rx_task_init(struct netload_run *run, struct rx_task *t,
		const struct netload_rx_conf *q, const struct netload_run_conf *c)
{
	uint32_t j;

	t->port_id = q->port_id;
	t->queue = q->queue;
	if (c->capture_frames) {
		t->capture = rte_malloc("netload_cap",
				(size_t)c->capture_frames * run->capture_snaplen, 0);
		t->capture_len = rte_malloc("netload_cap",
				sizeof(uint32_t) * c->capture_frames, 0);
		t->capture_tsc = rte_malloc("netload_cap",
				sizeof(uint64_t) * c->capture_frames, 0);
		if (t->capture == NULL || t->capture_len == NULL || t->capture_tsc == NULL)
			return netload_fail(NETLOAD_ENOMEM, "run: capture ring of %u frames",
					c->capture_frames);
	}
	t->streams = rte_zmalloc("netload_rxs",
			sizeof(struct rx_stream_state) * (c->n_tx + 1),
			RTE_CACHE_LINE_SIZE);
	if (t->streams == NULL)
		return netload_fail(NETLOAD_ENOMEM, "run: RX stream table");
	for (j = 0; j < c->n_tx; j++) {
		struct rx_stream_state *st = &t->streams[j];

		st->lat_min = UINT64_MAX;
		st->hw_clock = (uint32_t)run->tx[j].hw_clock;
		st->seen = rte_zmalloc("netload_seen", NETLOAD_SEQ_WINDOW / 8,
				RTE_CACHE_LINE_SIZE);
		st->gap_hist = rte_zmalloc("netload_gaps",
				sizeof(uint64_t) * NETLOAD_HIST_BUCKETS, RTE_CACHE_LINE_SIZE);
		st->lat_hist = rte_zmalloc("netload_lat",
				sizeof(uint64_t) * run->lat_buckets, RTE_CACHE_LINE_SIZE);
		st->ipdv_pos = rte_zmalloc("netload_ipdv",
				sizeof(uint64_t) * NETLOAD_HIST_BUCKETS, RTE_CACHE_LINE_SIZE);
		st->ipdv_neg = rte_zmalloc("netload_ipdv",
				sizeof(uint64_t) * NETLOAD_HIST_BUCKETS, RTE_CACHE_LINE_SIZE);
		if (c->timing_samples) {
			st->sample_tx = rte_malloc("netload_samples",
					sizeof(uint64_t) * c->timing_samples, 0);
			st->sample_rx = rte_malloc("netload_samples",
					sizeof(uint64_t) * c->timing_samples, 0);
		}
		if (st->seen == NULL || st->gap_hist == NULL || st->lat_hist == NULL ||
				st->ipdv_pos == NULL || st->ipdv_neg == NULL || (c->timing_samples &&
				(st->sample_tx == NULL || st->sample_rx == NULL)))
			return netload_fail(NETLOAD_ENOMEM,
					"run: sequence window for %u streams", c->n_tx);
	}
	return 0;
}

void
netload_rx_task_free(const struct netload_run *run, struct rx_task *t)
{
	uint32_t j;

	rte_free(t->capture);
	rte_free(t->capture_len);
	rte_free(t->capture_tsc);
	if (t->streams == NULL)
		return;
	for (j = 0; j < run->n_tx; j++) {
		rte_free(t->streams[j].seen);
		rte_free(t->streams[j].gap_hist);
		rte_free(t->streams[j].lat_hist);
		rte_free(t->streams[j].ipdv_pos);
		rte_free(t->streams[j].ipdv_neg);
		rte_free(t->streams[j].sample_tx);
		rte_free(t->streams[j].sample_rx);
	}
	rte_free(t->streams);
}
