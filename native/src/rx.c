/*
 * rx.c — an RX queue's task: set up for a run (its stream states, sequence
 * windows, histogram page tables and the run's page arena) and freed, and its
 * receive step: each frame classified on its signature trailer (frames of no
 * stream go to ARP/ND), captured if asked, then accounted (rx_account.c).
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

/* A stream's sequence window in the queue's block (st->seen, without st). */
static inline uint64_t *
stream_window(const struct rx_task *t, uint32_t slot)
{
	return t->seen_block + (size_t)slot * (NETLOAD_SEQ_WINDOW / 64);
}

/* Cache lines of a stream's state that its in-order frames use (run.h). */
#define RX_STATE_HOT_LINES 4

/* Frames ahead whose trailer the classifier prefetches. */
#define RX_PREFETCH 4

/*
 * Does the PMD of port_id copy each frame into an mbuf of its own, on the core
 * that polls (out of a vring, a file or a socket)? Then the frame's bytes are in
 * that core's cache when the burst returns, and prefetching its trailer only
 * costs: 3 cycles a frame of vhost at full rate (benchmarks/rx_fair.py). Frames
 * from anywhere else (a NIC's DMA, another core's mbufs through a ring, AF_XDP,
 * memif, whose zero-copy mode hands over the peer's buffers) get their trailers
 * prefetched.
 */
static int
rx_copies_frames(uint16_t port_id)
{
	static const char *const copying[] = {"net_vhost", "net_pcap", "net_af_packet",
		"net_tap"};
	struct rte_eth_dev_info info;
	size_t i;

	if (rte_eth_dev_info_get(port_id, &info) != 0 || info.driver_name == NULL)
		return 0;
	for (i = 0; i < RTE_DIM(copying); i++)
		if (strcmp(info.driver_name, copying[i]) == 0)
			return 1;
	return 0;
}

/*
 * Classify frame m on its trailer into *f, a run of its own (n = 1): its
 * stream's slot, sequence number and TX stamp; f->slot is NETLOAD_NO_SLOT for a
 * frame of no stream of this run, which may be a frame of an unsigned stream,
 * counted by its flow (flow.c), or ARP/ND for the port (signed frames never
 * take that branch, so they pay nothing for it). Returns the trailer's first
 * word (its magic and stream id, as the frame holds them) for a frame of a
 * stream, which the next frames of its run repeat; 0 for one of none.
 */
static inline uint32_t
classify(struct netload_run *run, struct rx_task *t, struct rte_mbuf *m, struct rx_frame *f,
		uint16_t *last, uint64_t now, uint64_t by_end)
{
	struct netload_signature copy;
	const netload_sig_t *sig;
	uint32_t len = m->pkt_len, key;
	uint16_t slot;

	f->slot = NETLOAD_NO_SLOT;
	f->n = 1;
	f->bytes = len;
	if (unlikely(len < NETLOAD_SIGNATURE_BYTES + 14))
		goto foreign;
	sig = rte_pktmbuf_read(m, len - NETLOAD_SIGNATURE_BYTES, NETLOAD_SIGNATURE_BYTES,
			&copy);
	if (unlikely(sig == NULL || sig->magic != NETLOAD_SIGNATURE_MAGIC ||
			sig->stream_id >= NETLOAD_MAX_STREAMS))
		goto foreign;
	slot = run->slot_of[sig->stream_id];
	if (unlikely(slot == NETLOAD_NO_SLOT))
		goto foreign;
	f->slot = slot;
	f->seq = sig->seq;
	f->tx_tsc = sig->tx_tsc;
	if (slot != *last) {
		/* A stream's first frame in the burst: fetch its state for the accounting
		 * pass, the four lines it uses, and the word of its sequence window that this
		 * frame's number marks (the window's address needs no stream state). */
		const char *st = (const char *)&t->streams[slot];
		uint32_t k;

		RTE_BUILD_BUG_ON(offsetof(struct rx_stream_state, duplicates) >
				RX_STATE_HOT_LINES * RTE_CACHE_LINE_SIZE);
		for (k = 0; k < RX_STATE_HOT_LINES; k++)
			rte_prefetch0(st + k * RTE_CACHE_LINE_SIZE);
		rte_prefetch0(&stream_window(t, slot)[(sig->seq & WINDOW_MASK) >> 6]);
		*last = slot;
	}
	memcpy(&key, sig, sizeof(key));
	return key;
foreign:
	if (unlikely(run->flows != NULL) && netload_flows_count(run, t, m, now, by_end))
		return 0;  /* a frame of an unsigned stream, counted by its flow */
	t->foreign++;
	if (netload_nd_ports[t->port_id] != NULL)
		netload_nd_input(t->port_id, m);
	return 0;
}

/*
 * Does frame m continue the open run: the trailer's first word `key` (the
 * same magic and stream), sequence number `seq` and TX stamp `tx`? Only a frame
 * whose trailer lies in its first segment can; any other is classified on its
 * own (classify), as is every frame that does not continue the run.
 */
static inline int
continues(const struct rte_mbuf *m, uint32_t len, uint32_t key, uint32_t seq, uint64_t tx)
{
	const netload_sig_t *sig;
	uint32_t word;

	if (unlikely(len < NETLOAD_SIGNATURE_BYTES + 14 || len > m->data_len))
		return 0;
	sig = rte_pktmbuf_mtod_offset(m, const netload_sig_t *, len - NETLOAD_SIGNATURE_BYTES);
	memcpy(&word, sig, sizeof(word));
	return (word == key) & (sig->seq == seq) & (sig->tx_tsc == tx);
}

/*
 * Is m an mbuf that rte_pktmbuf_free_bulk would only put back in pool mp (one
 * segment, direct, not shared)? The RX PMDs give those: a burst of them goes
 * back in one put (netload_rx_burst), without its look at each one's segments.
 */
static inline int
plain_mbuf(const struct rte_mbuf *m, const struct rte_mempool *mp)
{
	uint32_t refs_segs;

	/* refcnt and nb_segs, side by side, both 1: one compare, whatever the byte order */
	RTE_BUILD_BUG_ON(offsetof(struct rte_mbuf, nb_segs) !=
			offsetof(struct rte_mbuf, refcnt) + sizeof(uint16_t));
	memcpy(&refs_segs, (const char *)m + offsetof(struct rte_mbuf, refcnt),
			sizeof(refs_segs));
	return (m->pool == mp) & (refs_segs == 0x00010001) &
			(((m->ol_flags & (RTE_MBUF_F_INDIRECT | RTE_MBUF_F_EXTERNAL)) |
			(uintptr_t)m->next) == 0);
}

/* The burst held back for accounting (netload_rx_burst), accounted now. */
static inline void
account_held(struct netload_run *run, struct rx_task *t)
{
	netload_rx_account(run, t, NULL, t->held[t->cur ^ 1], t->held_n, t->held_now,
			t->held_by_end);
	t->held_n = 0;
}

/*
 * One burst: classify every frame (prefetching trailers ahead, and each
 * frame's stream state), then account the frames. Every frame is counted and
 * sequence-checked, and latency is taken on every stamped frame.
 *
 * Frames are classified into runs (run.h struct rx_frame): a frame that
 * continues the open run (its stream, the next sequence number, the same TX
 * stamp: the frames of one TX burst) only lengthens it, a few compares of its
 * trailer; the accounting then takes a run's frames together where counting
 * them one by one would give the same (rx_account.c). Not in the timed modes,
 * which read each frame's mbuf.
 *
 * The accounting is one burst behind (t->defer; not in the timed modes either):
 * a burst's runs wait in t->held while the previous burst's are accounted. The
 * stream state and sequence-window words the classifier prefetched then have a
 * whole poll to arrive, where with thousands of streams they come from memory.
 * Results are read only once the worker has accounted the last burst
 * (netload_rx_flush).
 *
 * The mbufs go back to their pool in one put when every one is plain
 * (plain_mbuf, checked as each frame is read), else through
 * rte_pktmbuf_free_bulk.
 */
void
netload_rx_burst(struct netload_run *run, struct rx_task *t, int count)
{
	struct rte_mbuf *bufs[NETLOAD_MAX_BURST];
	struct rx_frame local[NETLOAD_MAX_BURST], *f;
	uint16_t n, i, runs = 0, last = NETLOAD_NO_SLOT;
	uint64_t now, bytes = 0, tx_end, by_end, run_tx = 0, run_bytes0 = 0;
	uint32_t run_key = 0, run_base = 0, run_start = 0;
	const int merge = t->defer;
	const struct rte_mempool *mp;
	int plain = 1, ahead;

	RTE_BUILD_BUG_ON(NETLOAD_MAX_BURST > UINT16_MAX);
	n = rte_eth_rx_burst(t->port_id, t->queue, bufs, run->burst);
	if (n == 0)
		return;
	/* Polled before the start deadline: no stream counts yet, but ARP/ND is answered.
	 * The caller checked the deadline before this poll: a worker preempted in
	 * between polls after it, when another worker's TX may be on, so look again. */
	if (unlikely(!count) && rte_rdtsc() < run->start_tsc) {
		if (netload_nd_ports[t->port_id] != NULL)
			for (i = 0; i < n; i++)
				netload_nd_input(t->port_id, bufs[i]);
		rte_pktmbuf_free_bulk(bufs, n);
		return;
	}
	asan_fence(bufs, n, 1);
	now = rte_rdtsc();
	/* An interval ended before this burst came: the frames so far are all its. */
	if (unlikely(now >= t->snap_tsc))
		netload_rx_snapshot(run, t, now);
	/* Did this burst arrive while TX was still on (its schedule, or its actual end)? */
	tx_end = SHARED_LOAD(&run->tx_end_tsc);
	by_end = tx_end == 0 || now < tx_end;
	t->bursts++;
	f = t->defer ? t->held[t->cur] : local;
	/* Trailers prefetched up to `ahead` frames ahead (none where the PMD copied them). */
	ahead = t->prefetch ? n - RX_PREFETCH : 0;
	for (i = 0; i < n && i < RX_PREFETCH && t->prefetch; i++)
		rte_prefetch0(rte_pktmbuf_mtod_offset(bufs[i], char *,
				bufs[i]->pkt_len - NETLOAD_SIGNATURE_BYTES));
	if (unlikely(t->capture != NULL))
		for (i = 0; i < n; i++)
			capture(run, t, bufs[i], now);
	/* A run is open while run_key is not 0: its first frame bufs[run_start] of
	 * f[runs - 1], whose frame i would have number run_base + i; its bytes are
	 * those counted since run_bytes0. Frames that continue it change nothing. */
	mp = bufs[0]->pool;
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = bufs[i];
		uint32_t len = m->pkt_len;

		if ((int)i < ahead)
			rte_prefetch0(rte_pktmbuf_mtod_offset(bufs[i + RX_PREFETCH], char *,
					bufs[i + RX_PREFETCH]->pkt_len - NETLOAD_SIGNATURE_BYTES));
		if (run_key != 0) {
			if (likely(continues(m, len, run_key, run_base + i, run_tx))) {
				plain &= plain_mbuf(m, mp);
				bytes += len;
				continue;
			}
			f[runs - 1].n = (uint16_t)(i - run_start);
			f[runs - 1].bytes = (uint32_t)(bytes - run_bytes0);
		}
		run_key = classify(run, t, m, &f[runs], &last, now, by_end);
		plain &= plain_mbuf(m, mp);  /* after classify, which may show it to ARP/ND */
		if (merge && run_key != 0) {
			run_start = i;
			run_bytes0 = bytes;
			run_base = f[runs].seq - i;
			run_tx = f[runs].tx_tsc;
		} else {
			run_key = 0;
		}
		bytes += len;
		runs++;
	}
	if (run_key != 0) {
		f[runs - 1].n = (uint16_t)(n - run_start);
		f[runs - 1].bytes = (uint32_t)(bytes - run_bytes0);
	}
	/* Expected frames: compared now, while the mbufs are here (rx_expect.c); a run
	 * without any pays this one test a burst. */
	if (unlikely(t->expect != NULL))
		netload_expect_burst(run, t, bufs, f, runs);
	if (likely(t->defer)) {
		if (t->held_n != 0)
			account_held(run, t);
		t->held_n = runs;
		t->held_now = now;
		t->held_by_end = by_end;
		t->cur ^= 1;
	} else {
		netload_rx_account(run, t, bufs, f, runs, now, by_end);
	}
	SHARED_STORE(&t->packets, t->packets + n);
	t->bytes += bytes;
	asan_fence(bufs, n, 0);
	if (likely(plain))
		rte_mempool_put_bulk(bufs[0]->pool, (void **)bufs, n);
	else
		rte_pktmbuf_free_bulk(bufs, n);
}

/* What a worker does when it ends a run: the held burst, then the log. */
void
netload_rx_flush(struct netload_run *run, struct rx_task *t)
{
	if (t->held_n != 0)
		account_held(run, t);
	if (t->hlog_n != 0)
		netload_rx_hlog_apply(run, t);
}

/* Histogram pages of one stream's four histograms on one queue, all dense. */
static uint64_t
pages_per_stream(const struct netload_run *run)
{
	return NETLOAD_HIST_PAGES(run->lat_buckets) + 3 * NETLOAD_HIST_PAGES(NETLOAD_HIST_BUCKETS);
}

/*
 * The run's histogram arena. When every page of every stream on every queue
 * fits in RX_ARENA_DENSE_BYTES or in half the engine's largest free block, it
 * holds them all and cannot run out. Past that (thousands of streams) it takes
 * half that block, and at least RX_ARENA_PAGES_PER_STREAM pages a stream, more
 * than a stream's values, clustered in a few octaves, take; a page that cannot
 * be had is counted per stream (hist_unrecorded), never written wild. A run
 * may give the number of pages itself (tests of that limit, tuning).
 */
#define RX_ARENA_DENSE_BYTES (UINT64_C(64) << 20)
#define RX_ARENA_PAGES_PER_STREAM 24

int
netload_rx_arena_init(struct netload_run *run, const struct netload_run_conf *c)
{
	const uint64_t page_bytes = sizeof(uint64_t) * NETLOAD_HIST_PAGE;
	uint64_t dense = (uint64_t)c->n_tx * c->n_rx * pages_per_stream(run);
	uint64_t pages = dense, spare;
	struct rte_malloc_socket_stats heap;

	if (rte_malloc_get_socket_stats(rte_socket_id(), &heap) < 0)
		heap.greatest_free_size = 0;
	spare = RTE_MAX(RX_ARENA_DENSE_BYTES, heap.greatest_free_size / 2) / page_bytes;
	if (c->hist_pages != 0)
		pages = c->hist_pages;
	else if (dense > spare)
		pages = RTE_MAX(spare, (uint64_t)c->n_tx * RX_ARENA_PAGES_PER_STREAM);
	run->hist_pages = pages;
	run->hist_used = 0;
	if (pages == 0)
		return 0;
	run->hist_arena = rte_zmalloc("netload_hist", pages * page_bytes, RTE_CACHE_LINE_SIZE);
	if (run->hist_arena == NULL)
		return netload_fail(NETLOAD_ENOMEM,
				"run: %" PRIu64 " MiB of histogram pages for %u streams on %u RX "
				"queues; give the engine more memory (memory_mb) or run fewer "
				"streams", pages * page_bytes >> 20, c->n_tx, c->n_rx);
	return 0;
}

void
netload_rx_arena_free(struct netload_run *run)
{
	rte_free(run->hist_arena);
	run->hist_arena = NULL;
}

/*
 * An RX queue's task for a run being set up: its capture ring and, per TX entry
 * of the run, the stream state with its sequence window, histogram page tables
 * and timing samples. netload_rx_task_free releases what it got, also half-way.
 */
int
netload_rx_task_init(struct netload_run *run, struct rx_task *t,
		const struct netload_rx_conf *q, const struct netload_run_conf *c)
{
	uint64_t lat_pages = NETLOAD_HIST_PAGES(run->lat_buckets);
	uint64_t std_pages = NETLOAD_HIST_PAGES(NETLOAD_HIST_BUCKETS);
	uint32_t j;
	int ret;

	t->port_id = q->port_id;
	t->queue = q->queue;
	t->prefetch = !rx_copies_frames(q->port_id);
	t->snap_tsc = UINT64_MAX;  /* netload_ivl_init sets it in a run with intervals */
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
	t->seen_block = rte_zmalloc("netload_seen",
			(size_t)c->n_tx * (NETLOAD_SEQ_WINDOW / 8), RTE_CACHE_LINE_SIZE);
	t->tables = rte_zmalloc("netload_hist_tables",
			sizeof(uint64_t *) * c->n_tx * pages_per_stream(run), RTE_CACHE_LINE_SIZE);
	if (t->streams == NULL || (c->n_tx && (t->seen_block == NULL || t->tables == NULL)))
		return netload_fail(NETLOAD_ENOMEM,
				"run: %zu MiB of sequence windows and tables for %u streams on RX "
				"queue %u of port %u; give the engine more memory (memory_mb) or run "
				"fewer streams", (size_t)c->n_tx * (NETLOAD_SEQ_WINDOW / 8 +
				sizeof(uint64_t *) * pages_per_stream(run)) >> 20, c->n_tx,
				q->queue, q->port_id);
	ret = netload_expect_task_init(run, t);
	if (ret < 0)
		return ret;
	/* Accounting a burst behind needs no mbuf: not in the timed modes. */
	t->defer = c->timing_samples == 0;
	for (j = 0; j < c->n_tx; j++)
		if (run->tx[j].hw_clock)
			t->defer = 0;
	for (j = 0; j < c->n_tx; j++) {
		struct rx_stream_state *st = &t->streams[j];
		uint64_t **tab = t->tables + (size_t)j * pages_per_stream(run);

		st->lat_min = UINT64_MAX;
		st->hw_clock = (uint32_t)run->tx[j].hw_clock;
		st->seen = stream_window(t, j);
		st->lat_hist = tab;
		st->gap_hist = tab + lat_pages;
		st->ipdv_pos = tab + lat_pages + std_pages;
		st->ipdv_neg = tab + lat_pages + 2 * std_pages;
		if (c->timing_samples) {
			st->sample_tx = rte_malloc("netload_samples",
					sizeof(uint64_t) * c->timing_samples, 0);
			st->sample_rx = rte_malloc("netload_samples",
					sizeof(uint64_t) * c->timing_samples, 0);
			if (st->sample_tx == NULL || st->sample_rx == NULL)
				return netload_fail(NETLOAD_ENOMEM,
						"run: %u timing samples for %u streams",
						c->timing_samples, c->n_tx);
		}
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
	rte_free(t->seen_block);
	rte_free(t->tables);
	rte_free(t->expect);
	if (t->streams == NULL)
		return;
	for (j = 0; j < run->n_tx; j++) {
		rte_free(t->streams[j].sample_tx);
		rte_free(t->streams[j].sample_rx);
	}
	rte_free(t->streams);
}

/*
 * The interval snapshots of queue t due by `now`: every frame accounted so far
 * arrived before the interval's end, since a burst after it takes the snapshot
 * before it is accounted (netload_rx_burst) and the worker takes it between
 * polls (interval.c). Several ends passed at once (a stalled worker) give equal
 * snapshots. A slot the host has not read yet is not overwritten: the snapshot
 * is lost, and reading it says so.
 */
void
netload_rx_snapshot(struct netload_run *run, struct rx_task *t, uint64_t now)
{
	struct run_intervals *iv = run->ivl;
	uint32_t q = (uint32_t)(t - run->rx), i;

	netload_rx_flush(run, t);
	while (now >= t->snap_tsc) {
		uint32_t j = t->snaps, slot = j % NETLOAD_IVL_RING;
		size_t base = ((size_t)slot * run->n_rx + q) * run->n_tx;

		if (j - SHARED_LOAD(&iv->read) < NETLOAD_IVL_RING) {
			for (i = 0; i < run->n_tx; i++) {
				struct rx_stream_state *st = &t->streams[i];
				struct ivl_rx *o = &iv->rx[base + i];
				uint64_t *h = iv->hist + (base + i) * run->lat_buckets;

				o->packets = st->packets;
				o->bytes = st->bytes;
				o->duplicates = st->duplicates;
				o->reordered = st->reordered;
				o->lat_sum = st->lat_sum;
				o->lat_samples = st->lat_samples;
				o->hist_unrecorded = st->hist_unrecorded;
				o->first_tsc = st->ivl_first_tsc;
				o->last_tsc = st->ivl_first_tsc ? st->last_tsc : 0;
				memset(h, 0, sizeof(*h) * run->lat_buckets);
				netload_rx_hist_add_into(st->lat_hist, h, run->lat_buckets);
				if (st->lat_b.n != 0 && st->lat_b.idx < run->lat_buckets)
					h[st->lat_b.idx] += st->lat_b.n;
			}
			SHARED_STORE(&iv->rx_seq[(size_t)slot * run->n_rx + q], (uint64_t)j + 1);
		}
		for (i = 0; i < run->n_tx; i++)
			t->streams[i].ivl_first_tsc = 0;
		SHARED_STORE(&t->snaps, j + 1);
		t->snap_tsc = netload_ivl_end_tsc(run, j + 1);
	}
}
