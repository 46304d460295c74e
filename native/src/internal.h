/* internal.h — shared by the native core's .c files; never by cffi. */
#ifndef NETLOAD_INTERNAL_H
#define NETLOAD_INTERNAL_H

#include <stdint.h>
#include <rte_common.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_mempool.h>

#include "netload.h"

extern int netload_logtype;

#define NETLOAD_LOG(level, ...) \
	rte_log(RTE_LOG_ ## level, netload_logtype, "NETLOAD: " __VA_ARGS__)

/*
 * DPDK's error-level messages while the control thread listens (eal.c): start
 * clears the text, mark is its length so far, text is every message since start
 * on one line (" / " between messages), stop ends listening.
 */
void netload_log_tap_start(void);
size_t netload_log_tap_mark(void);
const char *netload_log_tap_text(void);
void netload_log_tap_stop(void);

/* Record the calling thread's last error and log it; returns status. */
int netload_fail(int status, const char *fmt, ...) __rte_format_printf(2, 3);

/*
 * value * mul / div, rounded down, on a 128-bit product: every conversion
 * between ns, ps, TSC cycles and fixed-point deadlines goes through it (a
 * 64-bit product overflows past 2^64 / tsc_hz ns, about 7 s). Returns -1,
 * leaving *out alone, when div is 0 or the result needs more than 64 bits.
 */
static inline int
netload_scale(uint64_t value, uint64_t mul, uint64_t div, uint64_t *out)
{
	unsigned __int128 r;

	if (div == 0)
		return -1;
	r = (unsigned __int128)value * mul / div;
	if (r > UINT64_MAX)
		return -1;
	*out = (uint64_t)r;
	return 0;
}

#define NETLOAD_NS_PER_S UINT64_C(1000000000)
#define NETLOAD_MAX_RUN_NS ((uint64_t)NETLOAD_MAX_RUN_S * NETLOAD_NS_PER_S)

/* Ticks of a clock of `hz` as ns, per frame: a 32.32 fixed-point factor (from
 * netload_ns_mult) and one 128-bit multiply; within 1 ns per 2^32 ticks. The exact,
 * checked conversion for run bounds is netload_scale. */
static inline uint64_t
netload_ns_mult(uint64_t hz)
{
	return (uint64_t)(4294967296.0 * 1e9 / (double)hz);
}

static inline uint64_t
netload_ticks_ns(uint64_t ticks, uint64_t ns_mult)
{
	return (uint64_t)(((unsigned __int128)ticks * ns_mult) >> 32);
}

#define NETLOAD_DEFAULT_BURST 32
#define NETLOAD_POOL_CACHE 256

/* The frame trailer (struct netload_signature, declared in netload_api.h) as it
 * sits in a frame: at any offset, so read through this alignment-1 alias. */
typedef struct netload_signature netload_sig_t __attribute__((aligned(1)));
_Static_assert(sizeof(struct netload_signature) == NETLOAD_SIGNATURE_BYTES,
		"the signature trailer has no padding");

/* One frame template of a stream, and the pool its packets are built in
 * (pool.c: shared by the streams, or the stream's own pre-filled one). */
struct netload_frame {
	struct rte_mempool *pool;
	uint64_t serial;          /* the template's tag in mbufs that hold it (pool.c) */
	uint16_t len;             /* bytes without FCS */
	uint8_t private_pool;     /* pool is this frame's own, pre-filled */
	uint16_t sig_off;
	uint32_t l4_base;         /* L4 sum (network order) without fields and trailer */
	uint32_t ip_base;         /* IPv4 header sum (network order) without fields */
	uint32_t sig_const;       /* trailer words that never change: magic, stream id */
	uint8_t sig_odd;          /* the trailer starts at an odd offset */
	uint16_t l4_len;
	uint8_t *data;            /* the template, for checks and re-fills */
};

struct netload_field_state {
	uint16_t offset;
	uint8_t width;
	uint8_t op;
	uint8_t in_l4_sum;        /* the field's bytes count in the L4 checksum */
	uint8_t in_ip_sum;        /* ... in the IPv4 header checksum */
	uint8_t odd;              /* starts at an odd offset */
	uint64_t min;
	uint64_t max;
	uint64_t step;
	uint64_t span;            /* random: number of values; 0 = 2^64 */
	uint64_t cur;
};

struct netload_stream {
	uint16_t id;
	uint16_t port_id;
	int32_t l3_offset;
	int32_t l4_offset;
	uint8_t l3_proto;
	uint8_t l4_proto;
	uint8_t fix_ipv4_csum;    /* a field touches the IPv4 header */
	uint8_t fix_l4_csum;
	uint8_t csum_offload;     /* the port computes checksums */
	uint16_t l4_csum_off;     /* checksum field, from the frame start */
	uint32_t n_frames;
	struct rte_mempool *pool; /* every frame's pool when they share one, else NULL */
	struct netload_frame frames[NETLOAD_MAX_FRAMES];
	uint32_t sequence_len;
	uint16_t *sequence;
	uint32_t n_fields;        /* per-packet fields only (set ops live in the template) */
	struct netload_field_state fields[NETLOAD_MAX_FIELDS];
	uint64_t seed;
	uint64_t rng;
	uint32_t in_run;
	uint32_t stamp_every;     /* 1: every packet */
	uint32_t stamp_left;      /* packets until the next stamped one */
	uint8_t no_signature;     /* frames sent as given (RX counts them by flow) */
};

/*
 * pool.c: TX frame pools. The dynamic field netload_tmpl_offset of an mbuf
 * holds the serial of the frame template its data holds (0: none).
 */
extern int netload_tmpl_offset;

static inline uint64_t *
netload_mbuf_tmpl(struct rte_mbuf *m)
{
	return RTE_MBUF_DYNFIELD(m, netload_tmpl_offset, uint64_t *);
}

/* Give fr (len and data set) a pool: its own pre-filled one of private_mbufs,
 * or (0) the shared one of its socket and size class; and a new serial. */
int netload_pool_attach(struct netload_frame *fr, uint16_t stream_id, uint32_t index,
		int socket, uint32_t private_mbufs);
/* Free the pools whose mbufs are all back (after the ports gave back what they sent,
 * through the reclaim function port.c sets). */
void netload_pool_collect(void);
void netload_pool_set_reclaim(void (*reclaim)(void));
void netload_pool_detach(struct netload_frame *fr);
uint32_t netload_pool_shared_mbufs(uint16_t len);

/* Streams by id, for the RX classifier's sanity and for id allocation. */
struct netload_stream *netload_stream_by_id(uint16_t id);
void netload_stream_reset(struct netload_stream *s);
uint16_t netload_stream_fill(struct netload_stream *s, struct rte_mbuf **bufs,
		uint16_t n, uint64_t first_seq, uint64_t tsc, uint64_t *bytes);

/*
 * Histogram bucket of a value with 2^bits sub-buckets (see hist.c): below
 * 2^bits one bucket per value, then 2^(bits-1) per power of two. Values
 * past the last of the n buckets clamp into it.
 */
static inline uint32_t
netload_hist_index_bits(uint64_t v, uint32_t bits, uint32_t n)
{
	uint32_t b, idx;

	if (v < (UINT64_C(1) << bits))
		return (uint32_t)v;
	b = 63 - __builtin_clzll(v) - (bits - 1);
	idx = (1u << bits) + (b - 1) * (1u << (bits - 1)) +
		(uint32_t)((v >> b) - (1u << (bits - 1)));
	return idx < n ? idx : n - 1;
}

static inline uint32_t
netload_hist_index_inline(uint64_t v)
{
	return netload_hist_index_bits(v, NETLOAD_HIST_SUB_BITS, NETLOAD_HIST_BUCKETS);
}

/*
 * A port's NIC clock (port_clock.c; ports opened with hw_timestamps), mapped onto the TSC's
 * ns timeline: netload_port_clock_anchor reads both clocks together at run
 * start, so NIC times of different ports compare in one run.
 */
struct netload_nic_clock {
	int enabled;
	uint64_t hz;              /* ticks per second, estimated against the TSC */
	uint64_t open_ticks;      /* a reading at open, for the rate estimate */
	uint64_t open_tsc;
	uint64_t anchor_ticks;
	uint64_t anchor_ns;       /* TSC time of anchor_ticks, ns */
	uint64_t ns_mult;         /* ns = ticks * ns_mult >> 32 */
};

extern struct netload_nic_clock netload_nic_clocks[RTE_MAX_ETHPORTS];
extern int netload_rx_ts_offset;        /* mbuf dynfield of RX timestamps; -1: none */
extern uint64_t netload_rx_ts_flag;     /* ol_flags bit: the field is valid */

int netload_port_clock_anchor(uint16_t port_id, uint64_t tsc_hz, uint64_t tsc_ns_mult);

/* NIC ticks of port_id as ns on the TSC timeline (after an anchor). */
static inline uint64_t
netload_nic_ns(uint16_t port_id, uint64_t ticks)
{
	const struct netload_nic_clock *c = &netload_nic_clocks[port_id];
	uint64_t d = ticks - c->anchor_ticks;

	if ((int64_t)d >= 0)
		return c->anchor_ns + netload_ticks_ns(d, c->ns_mult);
	return c->anchor_ns - netload_ticks_ns(-d, c->ns_mult);
}

/* Ports: the TX checksum offloads a stream may use. */
uint64_t netload_port_tx_csum(uint16_t port_id);
int netload_port_is_open(uint16_t port_id);
/* A run's workers own the ports' queues from its start until it is reaped or freed:
 * run.c lends them (1) and takes them back (0); the control thread asks. */
void netload_port_lend_queues(int lent);
int netload_port_queues_lent(void);
/* Called with the port's id when it closes, before its queues go (nd_control.c sets it). */
void netload_port_set_close_hook(void (*hook)(uint16_t port_id));


/*
 * ARP/ND on a generator port (nd.c; the control thread's side in nd_control.c,
 * the state in nd.h). netload_nd_ports[port] (set: the port answers) is read by
 * RX workers on frames without a signature; everything else is the control
 * thread's, but for the counters and the reply bucket, which the RX workers of
 * the port's queues share under `lock` (ARP/ND frames are few).
 */
struct rte_ring;
struct netload_nd;
extern struct netload_nd *netload_nd_ports[RTE_MAX_ETHPORTS];

/* A frame of no stream arrived on port_id: answer it if it asks for the port's address. */
void netload_nd_input(uint16_t port_id, struct rte_mbuf *m);
/* Send the replies waiting for port_id on its TX queue `queue` (the caller owns it). */
void netload_nd_flush(uint16_t port_id, uint16_t queue);
/* The port's ARP/ND state dropped (at its close: the hook nd_control.c gives port.c). */
void netload_nd_port_closed(uint16_t port_id);

#endif /* NETLOAD_INTERNAL_H */
