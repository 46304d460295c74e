/*
 * run.h — the state of one run: its TX, RX and forwarding tasks and its
 * workers. Shared by the files of the run and tasks layers (native/c_layers.py):
 * run.c (its life), results.c (what it measured), conf.c (its configuration
 * loaded), tx.c (the TX step), rx.c, rx_expect.c and rx_account.c (the RX step,
 * its expected frames and its accounting) and fwd.c (the delay line); never by
 * the layers below them.
 */
#ifndef NETLOAD_RUN_H
#define NETLOAD_RUN_H

#include "cpu.h"
#include "internal.h"

#define NETLOAD_NO_SLOT 0xffff

/* A pacing phase in TSC cycles << NETLOAD_FP_SHIFT, relative to the run's start. */
struct tx_phase {
	uint64_t *gaps_fp;
	uint32_t n_gaps;          /* 0: as fast as the port takes them */
	uint64_t end_fp;          /* 0: until the run ends */
	uint64_t mean_gap_fp;     /* 0 for maximum rate */
};

/*
 * Deadlines keep 12 fractional bits of a cycle: 1/4096 cycle is 0.1 ps at
 * 2.3 GHz, finer than the gap tables' 1 ps, and 24 h of deadlines fit 64
 * bits up to a 52 GHz TSC (16 bits overflowed 24 h above 3.3 GHz).
 */
#define NETLOAD_FP_SHIFT 12

/* Written by one worker only; read by the main lcore after the run. */
struct tx_task {
	struct netload_stream *stream;
	uint16_t port_id;
	uint16_t queue;
	uint64_t count;
	uint64_t next_seq;        /* packets built so far */
	int done;
	int hw_clock;             /* stamps read the port's NIC clock (ns timeline) */
	uint32_t n_phases;        /* 0: unpaced */
	struct tx_phase *phases;
	uint32_t phase;
	uint32_t gap_idx;
	uint64_t next_fp;         /* deadline of the next packet */
	uint64_t max_lag;         /* cycles */
	uint64_t ivl_max_lag;     /* cycles, since the last interval snapshot */
	uint64_t send_cost;       /* cycles a fill and send take here (paced streams) */
	uint64_t cost_window;     /* least cost of the current 64 calls */
	uint64_t cost_calls;
	uint64_t lagged_bursts;
	uint16_t n_pending;       /* refused by the PMD, sent first next time */
	struct rte_mbuf *pending[NETLOAD_MAX_BURST];
	/* results */
	uint64_t packets;         /* shared: SHARED_LOAD/SHARED_STORE */
	uint64_t bytes;
	uint64_t unsent;
	uint64_t alloc_failures;
	uint64_t first_tsc;
	uint64_t last_tsc;
	uint64_t end_tsc;         /* when it stopped sending; 0: not yet */
	int end_reason;           /* enum netload_tx_end */
	uint64_t refused_bursts;  /* calls the PMD took part of (netload_tx_stats) */
	uint64_t off_cpu_ns;      /* its worker's, over the run (netload_tx_stats) */
	uint64_t preemptions;
	uint64_t wait_cpu_ns;
	uint64_t sleeps;
} __rte_cache_aligned;

/*
 * Histograms are paged: a table of page pointers per histogram, and pages of
 * NETLOAD_HIST_PAGE buckets taken on first use from the run's arena, shared by
 * every RX queue. A stream's values cluster in a few octaves, so 10,000
 * streams fit where dense histograms (~100 KB a stream and queue) did not.
 */
#define NETLOAD_HIST_PAGE_SHIFT 6
#define NETLOAD_HIST_PAGE (1u << NETLOAD_HIST_PAGE_SHIFT)
#define NETLOAD_HIST_PAGES(buckets) \
	(((buckets) + NETLOAD_HIST_PAGE - 1) >> NETLOAD_HIST_PAGE_SHIFT)

/*
 * What the classifier keeps of a burst's frames for the accounting pass: runs of
 * frames, each n consecutive frames of the burst of one stream with consecutive
 * sequence numbers (seq, seq + 1, ... modulo 2^32) and one TX stamp, as frames
 * of one TX burst arrive. A frame of no stream is a run of its own (n = 1), and
 * so is every frame where the accounting reads each frame's mbuf (the timed
 * modes). The accounting counts each frame of a run as it would count it alone.
 */
struct rx_frame {
	uint64_t tx_tsc;
	uint32_t seq;             /* the first frame's */
	uint16_t slot;            /* NETLOAD_NO_SLOT: no stream of this run */
	uint16_t n;               /* frames in the run, 1 .. NETLOAD_MAX_BURST */
	uint32_t bytes;           /* the frames' bytes together */
};

/* Additions to one bucket of a histogram, not yet made (rx_account.c batch_add). */
struct hist_batch {
	uint32_t idx;
	uint32_t n;
};

/*
 * One stream as one RX queue sees it. The first four cache lines (up to
 * `duplicates`, RX_STATE_HOT_LINES in rx.c, which the classifier prefetches)
 * hold what every in-order frame touches; the rest is for reordering and the
 * slower timing modes.
 */
struct rx_stream_state {
	/* hot: every frame */
	uint64_t next;            /* highest sequence seen + 1 (64-bit extended) */
	uint64_t packets;
	uint64_t bytes;
	uint64_t by_tx_end;       /* packets that arrived before TX ended */
	uint64_t last_tsc;
	uint64_t lat_min;         /* ns */
	uint64_t lat_max;
	uint64_t lat_sum;
	uint64_t lat_samples;
	uint64_t jitter16;        /* RFC 3550 J, ns, scaled by 16 */
	uint64_t prev_transit;    /* ns; 0: none yet */
	uint64_t prev_seq;        /* wire sequence number (32 bits) of prev_transit */
	uint64_t ipdv_pairs;
	uint64_t *seen;           /* bitmap of NETLOAD_SEQ_WINDOW sequence numbers */
	uint64_t **lat_hist;      /* page tables: run->lat_buckets latency counts, ns */
	uint64_t **gap_hist;      /* NETLOAD_HIST_BUCKETS inter-arrival counts, in ns */
	/* warm: latency variation, and frames out of order */
	uint64_t **ipdv_pos;      /* |IPDV| of increases, ns */
	uint64_t **ipdv_neg;      /* |IPDV| of decreases */
	uint64_t first_tsc;
	uint64_t ivl_first_tsc;   /* first arrival of the current interval; 0: none yet */
	/* The commonest values, counted here and added to bucket 0 of their histogram
	 * when it is read (results.c): gap 0 (frames of one burst) and IPDV 0 (frames
	 * of one TX burst), kept off the pages, whose every addition is a cache miss
	 * when thousands of streams run. */
	uint64_t gap_zero;
	uint64_t ipdv_zero;
	/* Each histogram's latest additions, one bucket and its count: added to the
	 * pages (through the queue's log) when another bucket comes, and to the counts
	 * when the histogram is read. A stream's values repeat a bucket from burst to
	 * burst (the gap between a stream's bursts, its latency), and each addition
	 * to a page is a cache miss at 10,000 streams. */
	struct hist_batch lat_b, pos_b, neg_b, gap_b;
	uint64_t duplicates;
	uint64_t reordered;
	uint64_t gap_events;      /* arrivals that skipped sequence numbers */
	uint64_t last_gap_tx;     /* TX stamp of the latest such arrival; 0: none */
	uint64_t hist_unrecorded; /* histogram additions lost: the page arena ran out */
	uint32_t hw_clock;        /* latency on NIC clocks: stamps and arrivals in ns */
	uint32_t n_samples;
	uint64_t hw_missing;      /* stamped arrivals without an RX hardware timestamp */
	uint64_t *sample_tx;      /* TX and RX times of the first timing_samples arrivals:
	                           * TSC cycles, or ns on NIC clocks (hw_clock) */
	uint64_t *sample_rx;
} __rte_cache_aligned;

/* One histogram addition waiting in an RX queue's log (rx_account.c netload_rx_hlog_apply). */
struct rx_hist_add {
	uint64_t **table;         /* the histogram's page table */
	struct rx_stream_state *st;  /* whose hist_unrecorded counts a page not had */
	uint64_t n;               /* 64 bits: merged additions of a long run can pass 2^32 */
	uint32_t idx;             /* bucket */
};

#define NETLOAD_RX_HLOG 64

/*
 * A stream's RX expectation as the run holds it (rx_expect.c): its rules' values
 * pre-masked, in 64-bit words, and each rule's span (words to compare, the bytes
 * the frame must have before its trailer).
 */
#define NETLOAD_EXPECT_WORDS (NETLOAD_EXPECT_BYTES / 8)

struct rx_expect_rule {
	uint64_t value[NETLOAD_EXPECT_WORDS];
	uint64_t mask[NETLOAD_EXPECT_WORDS];
	uint32_t words;           /* words up to the last masked byte */
	uint32_t need;            /* bytes up to the last masked byte */
};

struct rx_expect {
	uint32_t n_rules;
	uint32_t bytes;           /* 8 x the most words a rule compares */
	struct rx_expect_rule rules[NETLOAD_EXPECT_RULES];
};

/* One stream's expected-frame counts on one RX queue. */
struct rx_expect_state {
	uint64_t matched[NETLOAD_EXPECT_RULES];
	uint64_t unmatched;
	uint32_t n_kept;
	uint32_t kept_len[NETLOAD_EXPECT_KEEP];
	uint64_t kept_seq[NETLOAD_EXPECT_KEEP];
	uint8_t kept[NETLOAD_EXPECT_KEEP][NETLOAD_EXPECT_BYTES];
};

struct rx_task {
	uint16_t port_id;
	uint16_t queue;
	uint64_t packets;         /* shared: SHARED_LOAD/SHARED_STORE */
	uint64_t bytes;
	uint64_t foreign;
	uint64_t bursts;
	struct rx_stream_state *streams;  /* one per TX entry of the run */
	uint8_t *capture;         /* ring of capture_frames slots of capture_snaplen bytes */
	uint32_t *capture_len;    /* each slot's original frame length */
	uint64_t *capture_tsc;    /* and its arrival (the burst's TSC) */
	uint64_t captured;        /* frames written to the ring (the newest is captured - 1) */
	uint64_t off_cpu_ns;      /* its worker's, over the run (netload_rx_queue_stats) */
	uint64_t preemptions;
	uint64_t wait_cpu_ns;
	uint64_t sleeps;
	uint64_t *seen_block;     /* every stream's sequence window, in one allocation */
	uint64_t **tables;        /* every stream's histogram page tables */
	struct rx_expect_state *expect;  /* [run->n_expect]: streams with an expectation */
	uint64_t snap_tsc;        /* the next interval's end (interval.c); UINT64_MAX: none */
	int prefetch;             /* prefetch frames' trailers: the PMD did not copy them here */
	uint32_t snaps;           /* shared: interval snapshots taken */
	uint32_t hlog_n;          /* additions waiting in hlog */
	struct rx_hist_add hlog[NETLOAD_RX_HLOG];
	/* The burst whose accounting waits for the next poll (rx.c netload_rx_burst):
	 * its runs of frames in held[cur ^ 1]; held[cur] takes the next burst's. */
	int defer;                /* accounting waits a burst (not in the timed modes) */
	uint32_t cur;
	uint16_t held_n;          /* runs in held[cur ^ 1] */
	uint64_t held_now;
	uint64_t held_by_end;
	struct rx_frame held[2][NETLOAD_MAX_BURST];
} __rte_cache_aligned;

/* A delay line (the reference DUT): a FIFO of frames and their release times. */
struct fwd_task {
	uint16_t rx_port;
	uint16_t rx_queue;
	uint16_t tx_port;
	uint16_t tx_queue;
	uint64_t delay;           /* cycles */
	uint64_t *jitter;         /* cycles */
	uint32_t n_jitter;
	uint32_t jitter_idx;
	uint64_t loss_threshold;  /* random < threshold: drop */
	uint64_t rng;
	uint64_t last_release;
	struct rte_mbuf **slots;  /* NETLOAD_FWD_SLOTS */
	uint64_t *release;
	uint32_t head;
	uint32_t held;
	struct netload_fwd_stats stats;
} __rte_cache_aligned;

struct worker {
	unsigned int lcore;
	uint32_t n_tx;
	uint32_t *tx;             /* indices into run->tx */
	uint32_t n_rx;
	uint32_t *rx;
	uint32_t n_fwd;
	uint32_t *fwd;
	/* ARP/ND replies this worker sends: on (ctl_port[i], ctl_queue[i]), TX queues
	 * no other worker uses in this run */
	uint32_t n_ctl;
	uint64_t tx_snap_tsc;     /* its TX tasks' next interval end; UINT64_MAX: none */
	uint32_t tx_snaps;        /* shared: their interval snapshots taken */
	int schedstat_fd;         /* its /proc/thread-self/schedstat; -1: none */
	struct netload_cpu_mark cpu_start; /* the kernel's view of it at the start */
	uint16_t ctl_port[RTE_MAX_ETHPORTS];
	uint16_t ctl_queue[RTE_MAX_ETHPORTS];
} __rte_cache_aligned;

struct netload_run {
	uint32_t n_tx;
	struct tx_task *tx;
	uint32_t n_rx;
	struct rx_task *rx;
	uint32_t n_fwd;
	struct fwd_task *fwd;
	uint32_t n_workers;
	struct worker *workers;
	uint16_t slot_of[NETLOAD_MAX_STREAMS];   /* stream id -> TX entry */
	uint16_t burst;
	uint32_t timing_samples;
	uint32_t capture_frames;  /* per RX queue: the last N frames are kept; 0: none */
	uint32_t capture_snaplen;
	uint32_t lat_bits;        /* latency histogram sub-bucket bits */
	uint32_t lat_buckets;
	uint64_t hz;
	uint64_t ns_mult;         /* ns = cycles * ns_mult >> 32 */
	uint64_t *hist_arena;     /* histogram pages, zeroed, shared by the RX queues */
	uint64_t hist_pages;      /* pages in the arena */
	uint64_t hist_used;       /* pages handed out: atomic (RX workers take them) */
	uint64_t start_tsc;
	uint64_t end_tsc;         /* 0: no duration bound */
	/* Shared between the control thread and the workers: accessed only through
	 * __atomic builtins (SHARED_LOAD/SHARED_STORE or read-modify-write), never volatile. */
	uint64_t tx_end_tsc;      /* end_tsc, or when TX ended everywhere if earlier;
	                           * 0 while unknown (RX counts arrivals before it) */
	uint64_t drain_tsc;
	uint32_t stop;            /* TX stop requested */
	uint32_t abort;           /* every worker returns at once */
	uint32_t tx_running;      /* workers still sending */
	uint64_t drain_end_tsc;   /* set once TX has ended everywhere */
	uint32_t finished;        /* workers returned */
	int reaped;
	struct run_intervals *ivl; /* NULL: no intervals (interval.c) */
	struct run_flows *flows;  /* NULL: no unsigned flows (flow.c) */
	uint32_t n_expect;        /* streams with an RX expectation (rx_expect.c) */
	uint16_t *expect_of;      /* [n_tx]: TX entry -> its expectation; NETLOAD_NO_SLOT: none */
	struct rx_expect *expect; /* [n_expect] */
};

/*
 * Interval snapshots (interval.c): a ring of NETLOAD_IVL_RING slots, each every
 * stream's cumulative counters and latency histogram at one interval's end, per
 * RX queue and per TX task; a worker writes a slot only once the host has read
 * the interval it held before.
 */
#define NETLOAD_IVL_RING 16

struct ivl_rx {
	uint64_t packets;
	uint64_t bytes;
	uint64_t duplicates;
	uint64_t reordered;
	uint64_t lat_sum;
	uint64_t lat_samples;
	uint64_t hist_unrecorded;
	uint64_t first_tsc;       /* first arrival in the interval; 0: none */
	uint64_t last_tsc;        /* last one in it; 0: none */
};

/* A TX task at an interval's end: its packets, its worst lag in the interval,
 * and (cumulative) its late bursts, partial calls and its worker's CPU marks. */
struct ivl_tx {
	uint64_t packets;
	uint64_t max_lag;         /* cycles, this interval's */
	uint64_t lagged_bursts;
	uint64_t refused_bursts;
	struct netload_cpu_use cpu;
};

struct run_intervals {
	uint64_t interval_ns;
	uint32_t n_snaps;         /* interval ends inside the run: all but the last's */
	uint32_t read;            /* shared: intervals the host has read */
	uint64_t *rx_seq;         /* [slot][rx]: k + 1 of the snapshot it holds; 0: none */
	struct ivl_rx *rx;        /* [slot][rx][tx] */
	uint64_t *hist;           /* [slot][rx][tx][lat_buckets] */
	uint64_t *tx_seq;         /* [slot][tx] */
	struct ivl_tx *tx;        /* [slot][tx] */
	uint8_t *tx_sent;         /* [tx]: a worker sends it (not expect-only) */
};

/* The end of interval j of `run` on the TSC; UINT64_MAX past its last snapshot. */
static inline uint64_t
netload_ivl_end_tsc(const struct netload_run *run, uint32_t j)
{
	uint64_t cycles = 0;

	if (run->ivl == NULL || j >= run->ivl->n_snaps)
		return UINT64_MAX;
	netload_scale((uint64_t)(j + 1) * run->ivl->interval_ns, run->hz, NETLOAD_NS_PER_S,
			&cycles);
	return run->start_tsc + cycles;
}

/* rx.c: the interval snapshots of an RX queue due by `now` (its frames accounted
 * so far all arrived before the interval's end). */
void netload_rx_snapshot(struct netload_run *run, struct rx_task *t, uint64_t now);

/* interval.c: the snapshots, taken by the workers at each interval's end. */
int netload_ivl_init(struct netload_run *run, const struct netload_run_conf *c);
void netload_ivl_free(struct netload_run *run);
void netload_ivl_turn(struct netload_run *run, struct worker *w, uint64_t now);
void netload_ivl_finish(struct netload_run *run, struct worker *w);

/* TSC cycles of `run` as ns, exactly (128-bit); the per-frame conversion is
 * netload_ticks_ns. */
static inline uint64_t
netload_tsc_ns(const struct netload_run *run, uint64_t cycles)
{
	uint64_t ns = UINT64_MAX;  /* only past 2^64 ns, which no run reaches */

	netload_scale(cycles, NETLOAD_NS_PER_S, run->hz, &ns);
	return ns;
}

/* conf.c: a run's configuration checked and loaded. */
int netload_run_check_conf(const struct netload_run_conf *c);
int netload_run_load_phases(struct netload_run *run, struct tx_task *t, const struct netload_tx_conf *c,
		uint32_t index);
int netload_run_load_forwarders(struct netload_run *run, const struct netload_run_conf *c);
int netload_run_assign(struct netload_run *run, unsigned int n_lcores);

/* tx.c: one stream's TX step (its task, stream and template fetched a few tasks
 * ahead), and its end. */
void netload_tx_prefetch(const struct netload_run *run, const struct worker *w, uint32_t i);
uint16_t netload_tx_step(struct netload_run *run, struct tx_task *t);
void netload_tx_finish(struct tx_task *t, int reason);
int netload_tx_end_reason(const struct netload_run *run, const struct tx_task *t, int over);

/* Fields that one thread writes while another reads them. */
#define SHARED_LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define SHARED_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

/* rx.c: an RX queue's task for a run, and its receive step. */
int netload_rx_arena_init(struct netload_run *run, const struct netload_run_conf *c);
void netload_rx_arena_free(struct netload_run *run);
int netload_rx_task_init(struct netload_run *run, struct rx_task *t,
		const struct netload_rx_conf *q, const struct netload_run_conf *c);
void netload_rx_task_free(const struct netload_run *run, struct rx_task *t);
void netload_rx_burst(struct netload_run *run, struct rx_task *t, int count);
void netload_rx_flush(struct netload_run *run, struct rx_task *t);

/* rx_account.c: a burst's classified runs of frames f[0..n) accounted stream by
 * stream (bufs: its mbufs, for the timed modes only; NULL for a held burst); the queue's
 * log of histogram additions applied; a paged histogram's counts read. */
void netload_rx_account(struct netload_run *run, struct rx_task *t, struct rte_mbuf **bufs,
		const struct rx_frame *f, uint16_t n, uint64_t now, uint64_t by_end);
void netload_rx_hlog_apply(struct netload_run *run, struct rx_task *t);
void netload_rx_hist_add_into(uint64_t *const *table, uint64_t *counts, uint32_t n);

/* flow.c: frames without a signature counted by flow (netload_run_conf.flows): the
 * table built and freed, and a frame counted (1) or not one of them (0). */
int netload_flows_init(struct netload_run *run, const struct netload_run_conf *c);
void netload_flows_free(struct netload_run *run);
int netload_flows_count(struct netload_run *run, struct rx_task *t, const struct rte_mbuf *m,
		uint64_t now, uint64_t by_end);
/* rx_expect.c: expected frames, compared right after a burst is classified (the
 * mbufs at hand, so the deferred accounting needs nothing of them). */
int netload_expect_init(struct netload_run *run, const struct netload_run_conf *c);
int netload_expect_task_init(const struct netload_run *run, struct rx_task *t);
void netload_expect_free(struct netload_run *run);
void netload_expect_burst(const struct netload_run *run, struct rx_task *t,
		struct rte_mbuf *const *bufs, const struct rx_frame *f, uint16_t n_runs);

/* fwd.c: the reference DUT's delay line, one step per worker turn. */
void netload_fwd_step(struct netload_run *run, struct fwd_task *f);
void netload_fwd_release_all(struct fwd_task *f);

#endif /* NETLOAD_RUN_H */
