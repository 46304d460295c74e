/*
 * netload_api.h — the one C API of the pytest-netload native core.
 *
 * Declarations only: no preprocessor lines and no DPDK types, so that cffi
 * reads this file verbatim as its cdef (native/netload_build.py) and
 * netload.h includes it for the C side. Change it here and nowhere else;
 * bump NETLOAD_ABI_VERSION when a struct or a signature changes.
 *
 * Conventions: functions return 0 (or a count) on success and a negative
 * enum netload_status on failure; netload_last_error() then holds a text with
 * the port, queue and DPDK's own reason. Nothing here prints or exits.
 */

enum netload_constants {
	NETLOAD_ABI_VERSION = 19,
	NETLOAD_SIGNATURE_BYTES = 16,
	NETLOAD_SIGNATURE_MAGIC = 0x4e4c,
	NETLOAD_MAX_STREAMS = 16384,   /* loaded in one engine, and in one run */
	NETLOAD_MAX_FIELDS = 16,
	NETLOAD_MAX_FRAMES = 64,
	NETLOAD_MIN_FRAME_BYTES = 60,
	NETLOAD_MAX_FRAME_BYTES = 9600,
	NETLOAD_NAME_BYTES = 64,
	NETLOAD_SEQ_WINDOW = 65536,
	NETLOAD_HIST_SUB_BITS = 7,       /* 128 sub-buckets: relative error < 1/64 */
	NETLOAD_HIST_BUCKETS = 2560,     /* values from 0 to 2^45 ns (9.8 h) */
	NETLOAD_HIST_MIN_SUB_BITS = 5,   /* latency histograms: 2^bits sub-buckets, */
	NETLOAD_HIST_MAX_SUB_BITS = 11,  /* a bucket at most 2^-(bits-1) of its value */
	NETLOAD_LATENCY_SUB_BITS = 8,    /* default: 2 significant digits (< 0.8 %) */
	NETLOAD_MAX_BURST = 128,         /* net_af_xdp (22.11) strands TX frames at 256 */
	NETLOAD_MAX_PHASES = 1024,
	NETLOAD_MAX_GAPS = 1048576,
	NETLOAD_FWD_SLOTS = 65536,       /* frames a delay line holds at once */
	NETLOAD_MAX_RUN_S = 86400,       /* a run's duration, drain, start delay and
	                                  * pacing schedule: at most 24 h each */
	NETLOAD_ND_REPLY_PPS = 1000,     /* ARP/ND replies a port sends per second, at most */
	NETLOAD_ND_MAX_WAIT_MS = 600000, /* the longest resolve or service wait */
	NETLOAD_EXPECT_RULES = 4,        /* rules of one stream's RX expectation */
	NETLOAD_EXPECT_BYTES = 128,      /* a rule covers the frame's first bytes, at most */
	NETLOAD_EXPECT_KEEP = 8          /* unmatched frames kept per stream and RX queue */
};

/* Checksums a port computes on TX (netload_port_info.tx_csum_offload bits). */
enum netload_csum_offload {
	NETLOAD_CSUM_IPV4 = 1,
	NETLOAD_CSUM_UDP = 2,
	NETLOAD_CSUM_TCP = 4
};

/* The trailer every generated frame ends with, in host byte order, at any offset
 * (C code reads it through an alignment-1 alias). No padding: 2 + 2 + 4 + 8 bytes
 * = NETLOAD_SIGNATURE_BYTES. */
struct netload_signature {
	uint16_t magic;           /* NETLOAD_SIGNATURE_MAGIC */
	uint16_t stream_id;
	uint32_t seq;
	uint64_t tx_tsc;          /* TSC (or NIC clock) when the burst was built; 0: none */
};

enum netload_status {
	NETLOAD_OK = 0,
	NETLOAD_EINVAL = -1,     /* a bad argument; the text names it */
	NETLOAD_ENOMEM = -2,     /* mempool, ring or heap allocation failed */
	NETLOAD_ENODEV = -3,     /* no such port or device string */
	NETLOAD_EPORT = -4,      /* the port refused a configure/start call */
	NETLOAD_EBUSY = -5,      /* a run is active, or the object is in use */
	NETLOAD_ESTATE = -6,     /* called in the wrong order */
	NETLOAD_ENOLCORE = -7,   /* no worker lcore to run on */
	NETLOAD_EEAL = -8,       /* EAL initialisation failed */
	NETLOAD_ENOTSUP = -9,    /* the device cannot do what was asked */
	NETLOAD_ETIMEDOUT = -10, /* the peer did not answer in time (ARP/ND) */
	NETLOAD_STATUS_MIN = -10
};

enum netload_field_op {
	NETLOAD_FIELD_SET = 0,
	NETLOAD_FIELD_INC = 1,
	NETLOAD_FIELD_DEC = 2,
	NETLOAD_FIELD_RANDOM = 3
};

/* Why a TX stream stopped sending (netload_tx_stats.end_reason). */
enum netload_tx_end {
	NETLOAD_TX_END_NONE = 0,      /* it never ended (the run was freed while sending) */
	NETLOAD_TX_END_COUNT = 1,     /* it sent its count */
	NETLOAD_TX_END_DURATION = 2,  /* the run's duration passed */
	NETLOAD_TX_END_PHASES = 3,    /* its last timed pacing phase ended */
	NETLOAD_TX_END_STOPPED = 4    /* netload_run_stop (Ctrl-C, a caller's stop) */
};

enum netload_run_state {
	NETLOAD_RUN_WAITING = 0,  /* before the common start deadline */
	NETLOAD_RUN_SENDING = 1,  /* TX active */
	NETLOAD_RUN_DRAINING = 2, /* TX done, RX still polling for late packets */
	NETLOAD_RUN_DONE = 3      /* every worker has returned */
};

/* ---- library and EAL ---------------------------------------------------- */

int netload_abi_version(void);
const char *netload_dpdk_version(void);
const char *netload_strerror(int status);
const char *netload_last_error(void);
int netload_log_open(const char *path);
int netload_eal_init(int argc, char **argv);
int netload_eal_cleanup(void);
unsigned int netload_worker_count(void);
int netload_lcore_cpus(int32_t *cpus, uint32_t n);
uint64_t netload_tsc_hz(void);
uint64_t netload_tsc_now(void);
/*
 * The one time conversion of the core: *out = value * mul / div, rounded
 * down, on a 128-bit product. NETLOAD_EINVAL when div is 0 or the result
 * does not fit 64 bits: a time is refused, never wrapped.
 */
int netload_time_scale(uint64_t value, uint64_t mul, uint64_t div, uint64_t *out);

/* ---- ports --------------------------------------------------------------- */

struct netload_port_conf {
	const char *device;       /* PCI address or vdev string */
	uint16_t rx_queues;
	uint16_t tx_queues;
	uint16_t rx_desc;
	uint16_t tx_desc;
	uint32_t mtu;             /* 0: leave the device default */
	uint32_t rx_mbufs;        /* mbufs in the port's RX pool */
	int promiscuous;
	int hw_timestamps;        /* enum netload_hw_timestamps */
};

/* RX hardware timestamps at port open (RX timestamp offload + NIC clock). */
enum netload_hw_timestamps {
	NETLOAD_HW_TS_OFF = 0,
	NETLOAD_HW_TS_ON = 1,     /* required: opening fails where the port cannot */
	NETLOAD_HW_TS_AUTO = 2    /* enabled where the port can */
};

struct netload_port_info {
	uint16_t port_id;
	char name[64];
	char driver[64];
	int socket_id;
	uint8_t mac[6];
	uint16_t mtu;
	uint16_t min_mtu;
	uint16_t max_mtu;
	uint32_t max_rx_pktlen;
	uint16_t max_rx_queues;
	uint16_t max_tx_queues;
	uint64_t rx_offload_capa;
	uint64_t tx_offload_capa;
	uint64_t tx_offloads_enabled;
	int has_timesync;
	int has_rx_timestamp;
	int has_queue_rate_limit;
	int link_up;
	uint32_t link_speed_mbps;
	int link_full_duplex;
	uint64_t tx_csum_offload;  /* enum netload_csum_offload bits the streams use */
	int has_read_clock;        /* rte_eth_read_clock works: the NIC clock can be read */
	int hw_timestamps;         /* RX timestamp offload enabled at open */
	uint64_t nic_clock_hz;     /* NIC clock ticks per second (estimated); 0: none */
};

struct netload_port_stats {
	uint64_t ipackets;
	uint64_t opackets;
	uint64_t ibytes;
	uint64_t obytes;
	uint64_t imissed;
	uint64_t ierrors;
	uint64_t oerrors;
	uint64_t rx_nombuf;
};

int netload_port_open(const struct netload_port_conf *conf, uint16_t *port_id);
int netload_port_info(uint16_t port_id, struct netload_port_info *info);
int netload_port_stats(uint16_t port_id, struct netload_port_stats *stats);
int netload_port_stats_reset(uint16_t port_id);
int netload_port_close(uint16_t port_id);
int netload_port_set_queue_rate(uint16_t port_id, uint16_t queue, uint32_t mbps);

/* ---- neighbours: ARP and IPv6 ND on a generator port ---------------------
 *
 * A port given an address answers ARP requests and neighbour solicitations
 * for it: during a run on the RX path (frames without a stream's signature
 * only, so signed frames pay nothing), the reply leaving on a TX queue of the
 * port whose owner thread sends it; between runs in netload_port_nd_service.
 * Replies are rate-limited to reply_pps. The control functions below run on
 * the control thread and refuse (NETLOAD_EBUSY) while a run is active.
 */
struct netload_port_addr {
	uint8_t mac[6];           /* the port's MAC as its frames carry it */
	uint8_t has_ip4;
	uint8_t has_ip6;
	uint8_t ip4[4];
	uint8_t ip6[16];
	uint16_t vlan;            /* 802.1Q VLAN id of its ARP/ND frames; 0: untagged */
	uint32_t reply_pps;       /* replies per second at most; 0: NETLOAD_ND_REPLY_PPS */
};

struct netload_nd_stats {
	uint64_t arp_requests;    /* ARP requests for the port's address */
	uint64_t arp_replies;     /* ARP replies sent */
	uint64_t ns_received;     /* neighbour solicitations for the port's address */
	uint64_t na_sent;         /* neighbour advertisements sent */
	uint64_t rate_limited;    /* requests left unanswered: over reply_pps */
	uint64_t tx_refused;      /* replies the port did not take (freed) */
	uint64_t other;           /* ARP/ND frames for other addresses (or VLANs) */
	uint64_t peer_seen;       /* frames that told the resolved peer's MAC */
	/* the latest ARP request or solicitation for another address: who asked for what
	 * (troubleshooting: a DUT on another subnet, or on another VLAN) */
	uint8_t other_family;     /* 4 or 6; 0: none seen */
	uint8_t other_sender[16];
	uint8_t other_target[16];
	uint16_t other_vlan;      /* its VLAN id; 0: untagged */
};

int netload_port_set_addr(uint16_t port_id, const struct netload_port_addr *addr);
int netload_port_clear_addr(uint16_t port_id);
/* Gratuitous ARP (IPv4) and unsolicited neighbour advertisement (IPv6). */
int netload_port_announce(uint16_t port_id);
/*
 * The MAC of peer_ip (4 or 16 bytes, family 4 or 6) on this port: an ARP
 * request or neighbour solicitation every retry_ms until an answer, at most
 * timeout_ms (NETLOAD_ETIMEDOUT). Requests for the port's address are answered
 * meanwhile.
 */
int netload_port_resolve(uint16_t port_id, int family, const uint8_t *peer_ip,
		uint32_t timeout_ms, uint32_t retry_ms, uint8_t *mac_out);
/* Answer ARP/ND on the port for wait_us (frames of no run are dropped); 0 at
 * once, doing nothing, while a run is active: the run answers then. */
int netload_port_nd_service(uint16_t port_id, uint32_t wait_us);
int netload_port_nd_stats(uint16_t port_id, struct netload_nd_stats *stats);

/* ---- memory ---------------------------------------------------------------- */

/* The engine's DPDK heap (every socket; mempools and rings live in it) and the TX
 * frame pools in it. */
struct netload_mem_stats {
	uint64_t heap_bytes;              /* the EAL's heap, all sockets */
	uint64_t heap_used_bytes;         /* allocated from it */
	uint64_t heap_largest_free_bytes; /* the largest free block of a socket */
	uint32_t shared_pools;            /* TX pools the streams share */
	uint32_t private_pools;           /* pre-filled pools of single frames (pool_mbufs) */
	uint64_t shared_pool_mbufs;
	uint64_t shared_pool_bytes;
	uint64_t template_serials;        /* frame templates made since the EAL started */
};

int netload_mem_stats(struct netload_mem_stats *stats);

/* ---- histograms (log-linear, HdrHistogram layout) ------------------------ */

int netload_hist_index(uint64_t value);
int netload_hist_lower_bounds(uint64_t *lower, uint32_t n);
uint64_t netload_hist_bench(uint64_t n, uint64_t seed);
uint32_t netload_hist_buckets(uint32_t sub_bits);
int netload_hist_lower_bounds_bits(uint32_t sub_bits, uint64_t *lower, uint32_t n);

/* ---- streams ------------------------------------------------------------- */

struct netload_field_conf {
	uint16_t offset;          /* from the first byte of the frame */
	uint8_t width;            /* 1, 2, 4, 6 or 8 bytes, written big-endian */
	uint8_t op;               /* enum netload_field_op */
	uint64_t min;
	uint64_t max;
	uint64_t step;
};

struct netload_stream_conf {
	uint16_t port_id;         /* the TX port: its pools sit on its socket */
	uint32_t n_frames;        /* distinct frame templates (one per size) */
	const uint8_t *const *frames;
	const uint16_t *frame_bytes;  /* frame length without FCS */
	uint32_t sequence_len;    /* frame index per packet, cycled */
	const uint16_t *sequence;
	int32_t l3_offset;        /* -1: not IP */
	int32_t l4_offset;        /* -1: no UDP/TCP checksum to keep */
	uint8_t l3_proto;         /* 4, 6 or 0 */
	uint8_t l4_proto;         /* 17 (UDP), 6 (TCP) or 0 */
	uint8_t fix_ipv4_csum;
	uint8_t fix_l4_csum;
	uint32_t n_fields;
	const struct netload_field_conf *fields;
	uint32_t pool_mbufs;      /* 0: build packets in the engine's shared pools (one per
	                           * socket and size class, the template copied in where an
	                           * mbuf holds another); N: a private pool of N mbufs per
	                           * frame template, pre-filled once (memory per stream) */
	uint64_t seed;            /* for random fields */
	uint32_t stamp_every;     /* TX timestamp in every Nth packet (0, 1: all); others carry 0 */
	int no_signature;         /* frames sent as given: no signature, no checksum kept, no
	                           * fields (a replay for a DUT that a trailer upsets); RX counts
	                           * them by flow (netload_run_conf.flows) */
};

struct netload_stream;

int netload_stream_create(const struct netload_stream_conf *conf, struct netload_stream **out);
int netload_stream_id(const struct netload_stream *stream);
int netload_stream_csum_offloaded(const struct netload_stream *stream);
void netload_stream_free(struct netload_stream *stream);

/* ---- runs ---------------------------------------------------------------- */

/*
 * A pacing phase: packet k+1 leaves gaps_ps[k mod n_gaps] after packet k
 * (deadlines accumulate on the TSC from the run's common start, so the mean
 * rate does not drift). No gaps: as fast as the port takes them.
 */
struct netload_phase_conf {
	const uint64_t *gaps_ps;
	uint32_t n_gaps;
	uint64_t duration_ns;     /* 0: until the run ends (only for the last phase) */
};

/*
 * Expected frames (rx_expect.c): what a stream's frames should look like when they
 * come back. A frame matches a rule when (frame[k] & mask[k]) == (value[k] & mask[k])
 * for every k below the rule's last masked byte, which must lie before the frame's
 * signature trailer (a shorter frame matches no rule). Rules are tried in order; a
 * frame is counted for the first that matches, or as unmatched (and its first bytes
 * kept, for the first NETLOAD_EXPECT_KEEP of each RX queue). Arrays are sized with
 * the NETLOAD_EXPECT_* constants (cffi reads numbers only).
 */
struct netload_expect_rule {
	uint8_t value[128];       /* NETLOAD_EXPECT_BYTES */
	uint8_t mask[128];        /* bits compared; 0 bytes are don't-care */
};

struct netload_expect_conf {
	uint32_t n_rules;         /* 1 to NETLOAD_EXPECT_RULES */
	struct netload_expect_rule rules[4];
};

struct netload_expect_stats {
	uint64_t matched[4];      /* frames whose first matching rule is this one */
	uint64_t unmatched;       /* frames no rule matched */
	uint32_t n_kept;          /* unmatched frames kept (at most NETLOAD_EXPECT_KEEP) */
	uint32_t kept_len[8];     /* each one's length (without FCS) */
	uint64_t kept_seq[8];     /* its sequence number (the signature's) */
	uint8_t kept[8][128];     /* its first min(len, NETLOAD_EXPECT_BYTES) bytes */
};

struct netload_tx_conf {
	struct netload_stream *stream;
	uint16_t queue;           /* on the stream's port */
	uint64_t count;           /* packets to send; 0: until the run ends */
	int expect_only;          /* send nothing: RX only expects the stream (sent elsewhere) */
	uint32_t n_phases;        /* 0: one phase at maximum rate */
	const struct netload_phase_conf *phases;
	int hw_clock;             /* latency on NIC clocks: TX stamps read the stream
	                           * port's clock, RX uses the frame's hardware
	                           * timestamp; every port involved needs hw_timestamps */
	uint64_t start_ns;        /* paced streams: the first packet's deadline after the
	                           * common start (0: at it); the phases' ends stay counted
	                           * from the common start (a capture's flows replayed) */
	const struct netload_expect_conf *expect;  /* NULL: its frames are not compared */
};

struct netload_rx_conf {
	uint16_t port_id;
	uint16_t queue;
};

/*
 * A flow whose frames carry no signature (a stream with no_signature): RX counts
 * the frames of this IPv4/IPv6 flow (untagged or behind VLAN tags) as TX entry
 * tx_index's, packets and bytes only (no sequence, no latency). A DUT that
 * rewrites the flow's addresses or ports (NAT) makes them foreign.
 */
struct netload_flow_conf {
	uint32_t tx_index;
	uint8_t family;           /* 4 or 6 */
	uint8_t proto;            /* the IP protocol */
	uint8_t has_ports;        /* UDP or TCP, not a fragment: the ports are in the flow */
	uint8_t src[16];          /* IPv4: the first 4 bytes */
	uint8_t dst[16];
	uint16_t sport;           /* host order; 0 without ports */
	uint16_t dport;
};

/*
 * A delay line in the worker loop: the reference DUT. Frames polled from
 * (rx_port, rx_queue) leave on (tx_port, tx_queue) delay_ns after they were
 * polled, plus the next entry of the jitter table; loss_ppm of them are
 * dropped. Release times never decrease, so the line never reorders.
 */
struct netload_fwd_conf {
	uint16_t rx_port;
	uint16_t rx_queue;
	uint16_t tx_port;
	uint16_t tx_queue;
	uint64_t delay_ns;
	const uint64_t *jitter_ps;
	uint32_t n_jitter;
	uint32_t loss_ppm;        /* dropped per million frames, at random */
	uint64_t seed;
};

struct netload_fwd_stats {
	uint64_t received;
	uint64_t forwarded;
	uint64_t dropped;         /* by loss_ppm */
	uint64_t overflow;        /* the line was full */
	uint64_t max_held;        /* frames held at once, at most */
};

struct netload_run_conf {
	uint32_t n_tx;
	const struct netload_tx_conf *tx;
	uint32_t n_rx;
	const struct netload_rx_conf *rx;
	uint64_t duration_ns;     /* 0: bounded by the counts alone */
	uint64_t start_delay_ns;  /* common TX start deadline after run_start */
	uint64_t drain_ns;        /* RX keeps polling this long after TX ends */
	/* each of the three at most NETLOAD_MAX_RUN_S, and so is each stream's
	 * pacing schedule (its phases added up) */
	uint16_t burst;           /* packets per burst; 0: default 32 */
	uint32_t timing_samples;  /* per stream: TX and RX times of the first N arrivals */
	uint32_t n_fwd;
	const struct netload_fwd_conf *fwd;
	uint32_t latency_sub_bits; /* latency histogram precision; 0: NETLOAD_LATENCY_SUB_BITS */
	uint32_t capture_frames;  /* per RX queue, keep the last N frames seen (any frame); 0: none */
	uint32_t capture_snaplen; /* bytes kept of each (0: 128) */
	uint64_t hist_pages;      /* histogram pages of 64 buckets for the run, all streams and
	                           * RX queues; 0: as many as fit (see rx.c) */
	uint64_t interval_ns;     /* 0: none; else the run (duration_ns, a multiple of it) is
	                           * counted in intervals of this length too (interval.c) */
	uint32_t n_flows;         /* flows of unsigned streams, counted on RX (flow.c) */
	const struct netload_flow_conf *flows;
};

struct netload_run_status {
	int state;                /* enum netload_run_state */
	uint64_t elapsed_ns;      /* since the start deadline */
	uint64_t tx_packets;      /* so far, all streams */
	uint64_t rx_packets;      /* so far, all queues, signed and foreign */
	uint64_t end_ns;          /* TX end on the schedule (run duration), ns after the
	                           * start deadline; 0: bounded by counts or phases */
};

struct netload_tx_stats {
	uint64_t packets;         /* handed to the PMD and accepted */
	uint64_t bytes;           /* frame bytes without FCS */
	uint64_t unsent;          /* built, refused by the PMD until the run ended, freed */
	uint64_t alloc_failures;  /* bursts that found the pool empty */
	uint64_t first_ns;        /* first burst built, ns after the start deadline */
	uint64_t last_ns;         /* last burst accepted by the PMD, same clock */
	uint64_t max_lag_ns;      /* paced streams: worst delay of a burst behind its deadline */
	uint64_t lagged_bursts;   /* paced bursts that left more than 1 us late */
	uint64_t end_ns;          /* when it stopped sending, ns after the start deadline */
	int end_reason;           /* enum netload_tx_end */
	/* The worker thread that sent it, from the start deadline to its return:
	 * its wall time minus its CPU time. That is time it waited for its CPU while
	 * another task ran there (wait_cpu_ns), plus time it slept inside a call
	 * (a PMD that blocks, as AF_PACKET's TX does in poll() on a full ring). */
	uint64_t off_cpu_ns;
	uint64_t preemptions;     /* involuntary context switches of that thread */
	uint64_t wait_cpu_ns;     /* of off_cpu_ns: runnable but waiting, another task on
	                           * its CPU (the kernel's schedstat run_delay): the measured
	                           * proof that the machine took the generator's core;
	                           * equals off_cpu_ns where schedstat cannot be read */
	uint64_t sleeps;          /* voluntary context switches: the worker blocked in a call */
	uint64_t refused_bursts;  /* TX calls in which the PMD took fewer frames than it was
	                           * offered (its TX ring was full: the device below it, or
	                           * what that feeds, took frames slower; back-pressure) */
};

struct netload_rx_stream_stats {
	uint64_t packets;         /* every signed packet of the stream, duplicates included */
	uint64_t bytes;
	uint64_t duplicates;
	uint64_t reordered;       /* arrived after a higher sequence number */
	uint64_t max_seq;         /* highest sequence number seen + 1; 0 if none */
	uint64_t first_ns;        /* first arrival, ns after the start deadline */
	uint64_t last_ns;
	uint64_t latency_min_ns;
	uint64_t latency_max_ns;
	uint64_t latency_sum_ns;  /* over latency_samples arrivals */
	uint64_t latency_samples; /* arrivals that carried a TX timestamp */
	uint64_t jitter_ns;       /* RFC 3550 interarrival jitter at the last arrival */
	uint64_t ipdv_pairs;      /* consecutive sequence numbers both timestamped (RFC 5481) */
	uint64_t hw_stamp_missing; /* hw_clock: stamped frames the NIC gave no RX timestamp */
	uint64_t gap_events;      /* arrivals after missing sequence numbers (loss events) */
	uint64_t last_gap_tx_ns;  /* TX time (after the start deadline) of the latest frame
	                           * that arrived after a gap: when the last loss happened;
	                           * 0 when none, or when that frame carried no timestamp */
	uint64_t by_tx_end;       /* packets (duplicates included) that arrived before TX
	                           * ended: the rest arrived in the drain, after the last
	                           * frame left (frames in flight, and the DUT's backlog) */
	uint64_t hist_unrecorded; /* histogram additions lost (latency, IPDV, gaps): the run's
	                           * page arena ran out, past thousands of streams; its
	                           * histograms then miss values that min/max/mean keep */
	uint64_t rx_queues;       /* RX queues (of every RX port of the run) it arrived on.
	                           * Sequence tracking is per queue: above 1 (RSS spread the
	                           * stream), duplicates and reordered count within each queue,
	                           * and gap_events / last_gap_tx_ns are the queues' sum / max,
	                           * where a gap may be frames another queue received */
};

struct netload_rx_queue_stats {
	uint64_t packets;         /* every packet polled from the queue */
	uint64_t bytes;
	uint64_t foreign;         /* no signature of a stream in this run */
	uint64_t bursts;
	uint64_t off_cpu_ns;      /* the worker that polled it: as in netload_tx_stats */
	uint64_t preemptions;
	uint64_t wait_cpu_ns;
	uint64_t sleeps;
};

struct netload_run;

int netload_run_start(const struct netload_run_conf *conf, struct netload_run **out);
int netload_run_poll(struct netload_run *run, uint32_t wait_ms, struct netload_run_status *status);
int netload_run_stop(struct netload_run *run);
int netload_run_tx_stats(const struct netload_run *run, uint32_t tx_index, struct netload_tx_stats *stats);
int netload_run_rx_stream_stats(const struct netload_run *run, uint32_t tx_index, struct netload_rx_stream_stats *stats);
int netload_run_rx_queue_stats(const struct netload_run *run, uint32_t rx_index, struct netload_rx_queue_stats *stats);
int netload_run_rx_gap_hist(const struct netload_run *run, uint32_t tx_index, uint64_t *counts, uint32_t n);
int netload_run_rx_latency_hist(const struct netload_run *run, uint32_t tx_index, uint64_t *counts, uint32_t n);
int netload_run_rx_ipdv_hist(const struct netload_run *run, uint32_t tx_index, uint64_t *positive, uint64_t *negative, uint32_t n);
int netload_run_fwd_stats(const struct netload_run *run, uint32_t fwd_index, struct netload_fwd_stats *stats);
/*
 * The RX capture ring of RX entry rx_index, oldest first: up to n frames;
 * frame k's first min(len[k], snaplen) bytes are at data + k * snaplen.
 * Returns the number of frames, or < 0.
 */
int netload_run_capture(const struct netload_run *run, uint32_t rx_index, uint8_t *data,
		uint32_t snaplen, uint32_t *len, uint64_t *ns, uint32_t n);
/* The frames RX counted for TX entry tx_index by its flow (netload_run_conf.flows),
 * every RX queue added up; all 0 for an entry of no flow. */
struct netload_rx_flow_stats {
	uint64_t packets;
	uint64_t bytes;
	uint64_t first_ns;        /* first arrival, ns after the start deadline; 0: none */
	uint64_t last_ns;
	uint64_t by_tx_end;       /* arrived before TX ended (as netload_rx_stream_stats) */
};
int netload_run_rx_flow_stats(const struct netload_run *run, uint32_t tx_index,
		struct netload_rx_flow_stats *stats);
/* The expected-frame counts of stream tx_index on RX entry rx_index (all zero for a
 * stream without an expectation). */
int netload_run_rx_expect(const struct netload_run *run, uint32_t tx_index, uint32_t rx_index,
		struct netload_expect_stats *out);
int netload_run_timing_samples(const struct netload_run *run, uint32_t tx_index, uint64_t *tx_ns, uint64_t *rx_ns, uint32_t n);
void netload_run_free(struct netload_run *run);
/*
 * Intervals (a run with interval_ns): each stream's counters at the end of
 * interval k, cumulative from the start; a frame is in the interval its RX
 * poll's clock falls in, a TX packet in the one its send falls in. Interval k
 * ends at (k + 1) * interval_ns after the start deadline; the last one at the
 * run's end, drain included.
 */
struct netload_interval_stats {
	uint64_t tx_packets;
	uint64_t rx_packets;
	uint64_t rx_bytes;
	uint64_t duplicates;
	uint64_t reordered;
	uint64_t latency_sum_ns;
	uint64_t latency_samples;
	uint64_t hist_unrecorded;
	uint64_t first_rx_ns;     /* first arrival in this interval, ns after the start
	                           * deadline; 0: none in it */
	uint64_t last_rx_ns;      /* last arrival in it; 0: none */
	/* How the stream's sender kept its schedule. tx_max_lag_ns is this interval's
	 * own worst lag (netload_tx_stats.max_lag_ns, for this interval alone); the
	 * rest are cumulative from the start, as above: its bursts more than 1 us
	 * late, TX calls the PMD took part of, and its worker thread's time off its
	 * CPU, of that the time it waited runnable (schedstat), its preemptions and
	 * its sleeps (read at each interval's end). */
	uint64_t tx_max_lag_ns;
	uint64_t tx_lagged_bursts;
	uint64_t tx_refused_bursts;
	uint64_t tx_off_cpu_ns;
	uint64_t tx_wait_cpu_ns;
	uint64_t tx_preemptions;
	uint64_t tx_sleeps;
};
/* The host has read the intervals before `read` (their ring slots are free again);
 * returns how many intervals can be read now (the last one once the run is done),
 * or < 0. */
int netload_run_intervals(struct netload_run *run, uint32_t read);
/* Interval k of stream tx_index, its latency histogram (cumulative) into counts[0..n):
 * 0, or 1 when the snapshot was lost (the host read the ring too late), or < 0. */
int netload_run_interval(const struct netload_run *run, uint32_t k, uint32_t tx_index,
		struct netload_interval_stats *out, uint64_t *counts, uint32_t n);
