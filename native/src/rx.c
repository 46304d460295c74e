/*
 * rx.c — the receive side: classify each frame on its signature trailer and
 * keep per-stream counts, sequence tracking and latency.
 */
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

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
		const struct netload_signature *sig, uint64_t ns)
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

static inline const struct netload_signature *
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

		st->gap_hist[g == 0 ? 0 : netload_hist_index_inline((uint64_t)
				(((unsigned __int128)g * run->ns_mult) >> 32))]++;
	}
	st->last_tsc = now;
}

/*
 * A frame of a stream timed on NIC clocks: its latency is the NIC's RX
 * timestamp minus the TX port's clock reading, both on the run's timeline.
 * Gaps and first/last arrival stay on the TSC, like every other stream's.
 */
static void
arrival(const struct netload_run *run, struct rx_task *t, struct rx_stream_state *st,
		struct rte_mbuf *m, const struct netload_signature *sig, uint64_t by_end)
{
	uint64_t rx_ns = hw_arrival_ns(t->port_id, m);

	st->packets++;
	st->by_tx_end += by_end;
	st->bytes += m->pkt_len;
	gap(run, st, rte_rdtsc());
	if (sig->tx_tsc != 0) {
		if (rx_ns == 0) {
			st->hw_missing++;
		} else {
			if (st->n_samples < run->timing_samples) {
				st->sample_tx[st->n_samples] = sig->tx_tsc;
				st->sample_rx[st->n_samples++] = rx_ns;
			}
			latency(run, st, sig, rx_ns > sig->tx_tsc ? rx_ns - sig->tx_tsc : 0);
		}
	}
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
		rte_pktmbuf_free_bulk(bufs, n);
		return;
	}
	asan_fence(bufs, n, 1);
	now = rte_rdtsc();
	/* Did this burst arrive while TX was still on (its schedule, or its actual end)? */
	tx_end = run->tx_end_tsc;
	by_end = tx_end == 0 || now < tx_end;
	t->bursts++;
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = bufs[i];
		struct netload_signature copy;
		const struct netload_signature *sig;
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
			t->foreign++;
			continue;
		}
		st = &t->streams[slot];
		if (unlikely(st->hw_clock)) {
			arrival(run, t, st, m, sig, by_end);
			continue;
		}
		if (unlikely(run->timing_samples != 0)) {
			/* Pattern checks want each frame's own arrival time. */
			now = rte_rdtsc();
			if (st->n_samples < run->timing_samples) {
				st->sample_tx[st->n_samples] = sig->tx_tsc;
				st->sample_rx[st->n_samples++] = now;
			}
		}
		st->packets++;
		st->by_tx_end += by_end;
		st->bytes += m->pkt_len;
		gap(run, st, now);
		if (likely(sig->tx_tsc != 0))
			latency(run, st, sig, (uint64_t)(((unsigned __int128)
					(now > sig->tx_tsc ? now - sig->tx_tsc : 0) * run->ns_mult) >> 32));
		track(st, sig->seq, sig->tx_tsc);
	}
	t->packets += n;
	t->bytes += bytes;
	asan_fence(bufs, n, 0);
	rte_pktmbuf_free_bulk(bufs, n);
}
