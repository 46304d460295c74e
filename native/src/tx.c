/*
 * tx.c — the TX step of one paced or unpaced stream: which packets are due,
 * building and sending them in bursts, the lag behind the schedule, and how a
 * stream stops.
 */
#include <stdint.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "run.h"

/*
 * How many of the next `want` packets are due by horizon_fp (cycles << 16
 * since the start): now plus what one send call costs on this port, since no
 * packet can leave more precisely than that. Walks the phase list (phases
 * end by now_fp); marks the task done when its last phase has ended. So at
 * high rates, or on ports with costly send calls (AF_XDP's syscall), packets
 * leave in small bursts, each at most one send call early or one loop turn
 * late: the burst size is chosen by the port's own cost.
 */
static inline uint16_t
due(struct tx_task *t, uint64_t now_fp, uint64_t horizon_fp, uint16_t want)
{
	uint16_t n = 0;

	while (n < want) {
		struct tx_phase *ph = &t->phases[t->phase];

		if (ph->end_fp && (now_fp >= ph->end_fp ||
				(ph->n_gaps && t->next_fp >= ph->end_fp))) {
			if (t->phase + 1 == t->n_phases) {
				t->done = n == 0;
				break;
			}
			t->phase++;
			t->next_fp = ph->end_fp;
			t->gap_idx = 0;
			continue;
		}
		if (ph->n_gaps == 0)
			return want;
		if (t->next_fp > horizon_fp)
			break;
		n++;
		t->next_fp += ph->gaps_fp[t->gap_idx];
		if (++t->gap_idx == ph->n_gaps)
			t->gap_idx = 0;
	}
	return n;
}

/*
 * What the worker's TX turn will read for the tasks after its i-th, fetched a
 * few tasks ahead: with thousands of streams, each stream's task, its state and
 * its template are cache misses, and one stream's burst is long enough to hide
 * them for the next. Each stage needs the one before it in cache: the task
 * three ahead; the stream state two ahead (its pointer is in the task); the
 * template one ahead (its pointer is in the state). A few streams stay in cache
 * anyway, and take none of this.
 */
#define TX_PREFETCH_MIN_TASKS 16

void
netload_tx_prefetch(const struct netload_run *run, const struct worker *w, uint32_t i)
{
	const uint32_t n = w->n_tx;
	const struct netload_stream *s;
	const char *p;

	if (n < TX_PREFETCH_MIN_TASKS)
		return;
	/* The turn wraps to its first task (no division: it would cost what the
	 * prefetches save). */
	rte_prefetch0(&run->tx[w->tx[i + 3 < n ? i + 3 : i + 3 - n]]);
	s = run->tx[w->tx[i + 2 < n ? i + 2 : i + 2 - n]].stream;
	p = (const char *)s;
	rte_prefetch0(p);
	rte_prefetch0(p + RTE_CACHE_LINE_SIZE);
	rte_prefetch0(&s->sequence_len);
	rte_prefetch0(&s->fields[0]);
	rte_prefetch0((const char *)&s->fields[0] + RTE_CACHE_LINE_SIZE);
	rte_prefetch0(&s->rng);
	s = run->tx[w->tx[i + 1 < n ? i + 1 : i + 1 - n]].stream;
	rte_prefetch0(s->frames[0].data);
}

/*
 * Build a burst and send it. Frames the PMD refused last time go first and
 * the burst is topped up with new ones, so the PMD always sees full bursts
 * (a trickle of small retries costs a syscall each on AF_XDP and AF_PACKET).
 */
uint16_t
netload_tx_step(struct netload_run *run, struct tx_task *t)
{
	struct netload_stream *s = t->stream;
	struct rte_mbuf *bufs[NETLOAD_MAX_BURST];
	uint64_t bytes = 0, tsc;
	uint16_t old = t->n_pending, want, sent, i;

	want = run->burst - old;
	if (t->count && t->count - t->next_seq < want)
		want = (uint16_t)(t->count - t->next_seq);
	if (want == 0 && old == 0) {
		t->done = 1;
		return 0;
	}
	if (t->n_phases && want) {
		uint64_t now = rte_rdtsc(), now_fp, horizon_fp, first_fp = t->next_fp;

		/* Past the end (the worker was descheduled across it): send nothing more. */
		if (run->end_tsc && now >= run->end_tsc)
			return 0;
		now_fp = (now > run->start_tsc ? now - run->start_tsc : 0) << NETLOAD_FP_SHIFT;
		/* Batch only where packets come faster than one send call takes. */
		horizon_fp = now_fp;
		if (t->phases[t->phase].mean_gap_fp < t->send_cost << NETLOAD_FP_SHIFT)
			horizon_fp += t->send_cost << NETLOAD_FP_SHIFT;
		want = due(t, now_fp, horizon_fp, want);
		if (want && now_fp > first_fp) {
			uint64_t lag = (now_fp - first_fp) >> NETLOAD_FP_SHIFT;

			if (lag > t->max_lag)
				t->max_lag = lag;
			if (lag > t->ivl_max_lag)
				t->ivl_max_lag = lag;
			if (lag > run->hz / 1000000)
				t->lagged_bursts++;
		}
		if (t->done || (want == 0 && old == 0))
			return 0;
	}
	if (old)
		memcpy(bufs, t->pending, sizeof(bufs[0]) * old);
	if (want && s->pool != NULL) {
		if (unlikely(rte_pktmbuf_alloc_bulk(s->pool, bufs + old, want) != 0)) {
			t->alloc_failures++;
			want = 0;
		}
	} else if (want) {
		for (i = 0; i < want; i++) {
			uint16_t f = s->sequence[(t->next_seq + i) % s->sequence_len];

			bufs[old + i] = rte_pktmbuf_alloc(s->frames[f].pool);
			if (unlikely(bufs[old + i] == NULL))
				break;
		}
		if (unlikely(i < want)) {
			t->alloc_failures++;
			want = i;
		}
	}
	if (old + want == 0)
		return 0;
	tsc = rte_rdtsc();
	if (want) {
		uint64_t stamp = tsc;

		if (unlikely(t->hw_clock)) {
			uint64_t ticks;

			stamp = rte_eth_read_clock(t->port_id, &ticks) == 0 ?
				netload_nic_ns(t->port_id, ticks) : 0;
		}
		netload_stream_fill(s, bufs + old, want, t->next_seq, stamp, &bytes);
		t->next_seq += want;
	}
	sent = rte_eth_tx_burst(t->port_id, t->queue, bufs, old + want);
	if (likely(sent == old + want && old == 0)) {
		t->bytes += bytes;
	} else {
		for (i = 0; i < sent; i++)
			t->bytes += bufs[i]->pkt_len;
	}
	t->n_pending = old + want - sent;
	if (t->n_pending) {
		memcpy(t->pending, bufs + sent, sizeof(bufs[0]) * t->n_pending);
		t->refused_bursts++;
	}
	SHARED_STORE(&t->packets, t->packets + sent);
	if (sent) {
		if (t->first_tsc == 0)
			t->first_tsc = tsc;
		t->last_tsc = rte_rdtsc();
		if (t->n_phases) {
			/* What a fill and send cost on this port: the least of 64 calls
			 * (a stall inflates one call, never the least). */
			uint64_t cost = t->last_tsc - tsc;

			if (cost < t->cost_window)
				t->cost_window = cost;
			if ((++t->cost_calls & 63) == 0) {
				t->send_cost = t->cost_window;
				t->cost_window = UINT64_MAX;
			}
		}
	}
	return old + want;
}

/* A stream stops sending: what the PMD still refused is freed, and why and when it ended kept. */
void
netload_tx_finish(struct tx_task *t, int reason)
{
	if (t->n_pending) {
		rte_pktmbuf_free_bulk(t->pending, t->n_pending);
		t->unsent += t->n_pending;
		t->n_pending = 0;
	}
	if (t->end_tsc == 0 && reason != NETLOAD_TX_END_NONE) {
		t->end_tsc = rte_rdtsc();
		t->end_reason = reason;
	}
	t->done = 1;
}

/* Why a stream that is still sending stops now: `over` means the run's end or a stop. */
int
netload_tx_end_reason(const struct netload_run *run, const struct tx_task *t, int over)
{
	if (over)
		return SHARED_LOAD(&run->stop) ? NETLOAD_TX_END_STOPPED : NETLOAD_TX_END_DURATION;
	return t->count && t->next_seq >= t->count ? NETLOAD_TX_END_COUNT :
		NETLOAD_TX_END_PHASES;
}

