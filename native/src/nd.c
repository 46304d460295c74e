/*
 * nd.c — a generator port as a host on its subnet: it answers ARP requests
 * and IPv6 neighbour solicitations for its address, announces itself
 * (gratuitous ARP, unsolicited neighbour advertisement) and resolves its
 * peer's MAC, so that a router DUT needs no static neighbour entries.
 *
 * During a run, RX workers hand frames without a stream's signature to
 * netload_nd_input; a reply goes into the port's ring, and the worker that
 * owns a TX queue of the port in that run sends it (netload_nd_flush, once
 * per loop turn). Between runs the control thread polls the port itself
 * (netload_port_nd_service). Signed frames never come here.
 */
#include <string.h>
#include <time.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <rte_spinlock.h>

#include "internal.h"

#define ND_POOL_MBUFS 511
#define ND_RING_SLOTS 256
#define ND_BURST 32
#define ND_REPLY_BURST 32     /* replies the bucket lets through at once */
#define ND_PEEK_BYTES 128     /* of a frame: ARP and ND fit */
#define ND_MIN_FRAME 60       /* bytes without FCS */
#define ETH_ARP 0x0806
#define ETH_IPV6 0x86dd
#define ETH_VLAN 0x8100
#define ARP_REQUEST 1
#define ARP_REPLY 2
#define ICMP6 58
#define ICMP6_NS 135
#define ICMP6_NA 136
#define ND_OPT_SOURCE_LL 1
#define ND_OPT_TARGET_LL 2
#define NA_SOLICITED 0x40
#define NA_OVERRIDE 0x20

struct netload_nd {
	struct netload_port_addr addr;
	struct rte_mempool *pool;   /* replies and requests */
	struct rte_ring *ring;      /* replies waiting for a TX queue: MP, SC */
	rte_spinlock_t lock;        /* the fields below */
	uint64_t interval;          /* TSC cycles per reply at reply_pps */
	uint64_t tat;               /* the reply bucket's theoretical arrival time */
	struct netload_nd_stats stats;
	int want_family;            /* the peer being resolved; 0: none */
	uint8_t want_ip[16];
	int peer_found;
	uint8_t peer_mac[6];
};

struct netload_nd *netload_nd_ports[RTE_MAX_ETHPORTS];

static const uint8_t BROADCAST[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static const uint8_t ALL_NODES_MAC[6] = { 0x33, 0x33, 0, 0, 0, 1 };
static const uint8_t ALL_NODES_IP6[16] = { 0xff, 0x02, [15] = 1 };
static const uint8_t ZERO[16];

static inline uint16_t
be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* One reply from the bucket (GCRA): at most reply_pps, bursts of ND_REPLY_BURST. */
static int
take_token(struct netload_nd *nd)
{
	uint64_t now = rte_rdtsc();
	uint64_t tat = nd->tat < now ? now : nd->tat;

	if (tat > now + ND_REPLY_BURST * nd->interval)
		return 0;
	nd->tat = tat + nd->interval;
	return 1;
}

/* An mbuf holding an Ethernet header (and the port's VLAN tag) to `dst`; *payload
 * points after it, `payload_len` bytes zeroed (the frame padded to 60 bytes). */
static struct rte_mbuf *
frame_start(struct netload_nd *nd, const uint8_t *dst, uint16_t type, uint16_t payload_len,
		uint8_t **payload)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(nd->pool);
	uint16_t hdr = nd->addr.vlan ? 18 : 14;
	uint16_t total = RTE_MAX((uint16_t)(hdr + payload_len), (uint16_t)ND_MIN_FRAME);
	uint8_t *p;

	if (m == NULL)
		return NULL;
	p = (uint8_t *)rte_pktmbuf_append(m, total);
	if (p == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memset(p, 0, total);
	memcpy(p, dst, 6);
	memcpy(p + 6, nd->addr.mac, 6);
	if (nd->addr.vlan) {
		put16(p + 12, ETH_VLAN);
		put16(p + 14, nd->addr.vlan);
		put16(p + 16, type);
	} else {
		put16(p + 12, type);
	}
	*payload = p + hdr;
	return m;
}

static struct rte_mbuf *
arp_frame(struct netload_nd *nd, const uint8_t *eth_dst, uint16_t op, const uint8_t *tha,
		const uint8_t *tpa)
{
	uint8_t *a;
	struct rte_mbuf *m = frame_start(nd, eth_dst, ETH_ARP, 28, &a);

	if (m == NULL)
		return NULL;
	put16(a, 1);            /* Ethernet */
	put16(a + 2, 0x0800);   /* IPv4 */
	a[4] = 6;
	a[5] = 4;
	put16(a + 6, op);
	memcpy(a + 8, nd->addr.mac, 6);
	memcpy(a + 14, nd->addr.ip4, 4);
	memcpy(a + 18, tha, 6);
	memcpy(a + 24, tpa, 4);
	return m;
}

/* An ICMPv6 NS or NA from the port's address: target and one link-layer option. */
static struct rte_mbuf *
nd6_frame(struct netload_nd *nd, const uint8_t *eth_dst, const uint8_t *ip_dst, uint8_t type,
		uint8_t flags, const uint8_t *target)
{
	uint8_t *ip, *icmp;
	uint16_t sum;
	struct rte_mbuf *m = frame_start(nd, eth_dst, ETH_IPV6, 40 + 32, &ip);

	if (m == NULL)
		return NULL;
	ip[0] = 0x60;
	put16(ip + 4, 32);
	ip[6] = ICMP6;
	ip[7] = 255;
	memcpy(ip + 8, nd->addr.ip6, 16);
	memcpy(ip + 24, ip_dst, 16);
	icmp = ip + 40;
	icmp[0] = type;
	icmp[4] = flags;
	memcpy(icmp + 8, target, 16);
	icmp[24] = type == ICMP6_NS ? ND_OPT_SOURCE_LL : ND_OPT_TARGET_LL;
	icmp[25] = 1;           /* 8 bytes */
	memcpy(icmp + 26, nd->addr.mac, 6);
	sum = rte_ipv6_udptcp_cksum((const struct rte_ipv6_hdr *)ip, icmp);
	memcpy(icmp + 2, &sum, 2);
	return m;
}

/* A reply for the port's ring (sent by whoever owns a TX queue of the port). */
static void
queue_reply(struct netload_nd *nd, struct rte_mbuf *m)
{
	if (m != NULL && rte_ring_mp_enqueue(nd->ring, m) == 0)
		return;
	rte_pktmbuf_free(m);
	rte_spinlock_lock(&nd->lock);
	nd->stats.tx_refused++;
	rte_spinlock_unlock(&nd->lock);
}

/* Under the lock: who asked for an address not the port's (for troubleshooting). */
static void
note_other(struct netload_nd *nd, int family, const uint8_t *sender, const uint8_t *target,
		uint16_t vlan)
{
	size_t n = family == 4 ? 4 : 16;

	nd->stats.other++;
	nd->stats.other_family = (uint8_t)family;
	memset(nd->stats.other_sender, 0, 16);
	memset(nd->stats.other_target, 0, 16);
	memcpy(nd->stats.other_sender, sender, n);
	memcpy(nd->stats.other_target, target, n);
	nd->stats.other_vlan = vlan;
}

/* Under the lock: a frame from `ip` says its MAC; keep it if it is the peer sought. */
static void
learn(struct netload_nd *nd, int family, const uint8_t *ip, const uint8_t *mac)
{
	if (nd->want_family != family || memcmp(ip, nd->want_ip, family == 4 ? 4 : 16) != 0 ||
			(mac[0] & 1) || memcmp(mac, ZERO, 6) == 0)
		return;
	memcpy(nd->peer_mac, mac, 6);
	nd->peer_found = 1;
	nd->stats.peer_seen++;
}

static void
arp_input(struct netload_nd *nd, const uint8_t *f, uint32_t off, uint32_t len, uint16_t vlan)
{
	const uint8_t *a = f + off, *sha, *spa, *tpa;
	int answer = 0;  /* decided under the lock, built after it */
	uint16_t op;

	if (len < off + 28 || be16(a) != 1 || be16(a + 2) != 0x0800 || a[4] != 6 || a[5] != 4)
		return;
	op = be16(a + 6);
	sha = a + 8;
	spa = a + 14;
	tpa = a + 24;
	rte_spinlock_lock(&nd->lock);
	if (vlan != nd->addr.vlan || !nd->addr.has_ip4) {
		if (op == ARP_REQUEST)
			note_other(nd, 4, spa, tpa, vlan);
		rte_spinlock_unlock(&nd->lock);
		return;
	}
	learn(nd, 4, spa, sha);
	if (op == ARP_REQUEST && memcmp(tpa, nd->addr.ip4, 4) == 0) {
		nd->stats.arp_requests++;
		if (take_token(nd)) {
			nd->stats.arp_replies++;
			answer = 1;
		} else {
			nd->stats.rate_limited++;
		}
	} else if (op == ARP_REQUEST && memcmp(spa, tpa, 4) != 0) {
		note_other(nd, 4, spa, tpa, vlan);
	}
	rte_spinlock_unlock(&nd->lock);
	if (answer)
		queue_reply(nd, arp_frame(nd, sha, ARP_REPLY, sha, spa));
}

/* The link-layer address option of type `want` in ND options [opt, end); NULL: none. */
static const uint8_t *
nd_option(const uint8_t *opt, const uint8_t *end, uint8_t want)
{
	while (opt + 8 <= end && opt[1] != 0) {
		if (opt[0] == want && opt[1] == 1)
			return opt + 2;
		opt += (size_t)opt[1] * 8;
	}
	return NULL;
}

static void
nd6_input(struct netload_nd *nd, const uint8_t *f, uint32_t off, uint32_t len, uint16_t vlan)
{
	const uint8_t *ip = f + off, *icmp, *src, *target, *end, *ll;
	int answer = 0;  /* decided under the lock, built after it */
	uint8_t eth_dst[6], ip_dst[16], flags = 0;
	uint32_t plen;

	if (len < off + 40 + 24 || (ip[0] >> 4) != 6 || ip[6] != ICMP6 || ip[7] != 255)
		return;
	icmp = ip + 40;
	if ((icmp[0] != ICMP6_NS && icmp[0] != ICMP6_NA) || icmp[1] != 0)
		return;
	plen = be16(ip + 4);
	end = ip + 40 + plen;
	if (end > f + len)
		end = f + len;
	src = ip + 8;
	target = icmp + 8;
	rte_spinlock_lock(&nd->lock);
	if (vlan != nd->addr.vlan || !nd->addr.has_ip6) {
		if (icmp[0] == ICMP6_NS)
			note_other(nd, 6, src, target, vlan);
		rte_spinlock_unlock(&nd->lock);
		return;
	}
	if (icmp[0] == ICMP6_NA) {
		ll = nd_option(icmp + 24, end, ND_OPT_TARGET_LL);
		learn(nd, 6, target, ll != NULL ? ll : f + 6);
		rte_spinlock_unlock(&nd->lock);
		return;
	}
	ll = nd_option(icmp + 24, end, ND_OPT_SOURCE_LL);
	if (memcmp(src, ZERO, 16) != 0)
		learn(nd, 6, src, ll != NULL ? ll : f + 6);
	if (memcmp(target, nd->addr.ip6, 16) != 0) {
		note_other(nd, 6, src, target, vlan);
		rte_spinlock_unlock(&nd->lock);
		return;
	}
	nd->stats.ns_received++;
	if (take_token(nd)) {
		nd->stats.na_sent++;
		answer = 1;
	} else {
		nd->stats.rate_limited++;
	}
	rte_spinlock_unlock(&nd->lock);
	if (!answer)
		return;
	if (memcmp(src, ZERO, 16) == 0) {
		/* duplicate address detection: tell all nodes */
		memcpy(eth_dst, ALL_NODES_MAC, 6);
		memcpy(ip_dst, ALL_NODES_IP6, 16);
		flags = NA_OVERRIDE;
	} else {
		memcpy(eth_dst, ll != NULL ? ll : f + 6, 6);
		memcpy(ip_dst, src, 16);
		flags = NA_SOLICITED | NA_OVERRIDE;
	}
	queue_reply(nd, nd6_frame(nd, eth_dst, ip_dst, ICMP6_NA, flags, nd->addr.ip6));
}

void
netload_nd_input(uint16_t port_id, struct rte_mbuf *m)
{
	struct netload_nd *nd = netload_nd_ports[port_id];
	uint8_t copy[ND_PEEK_BYTES];
	const uint8_t *f;
	uint32_t len = RTE_MIN(m->pkt_len, (uint32_t)ND_PEEK_BYTES), off = 14;
	uint16_t type, vlan = 0;

	if (nd == NULL || len < 14)
		return;
	f = rte_pktmbuf_read(m, 0, len, copy);
	if (f == NULL)
		return;
	type = be16(f + 12);
	if (type == ETH_VLAN) {
		if (len < 18)
			return;
		vlan = be16(f + 14) & 0x0fff;
		type = be16(f + 16);
		off = 18;
	}
	if (type == ETH_ARP)
		arp_input(nd, f, off, len, vlan);
	else if (type == ETH_IPV6)
		nd6_input(nd, f, off, len, vlan);
}

void
netload_nd_flush(uint16_t port_id, uint16_t queue)
{
	struct netload_nd *nd = netload_nd_ports[port_id];
	struct rte_mbuf *bufs[ND_BURST];
	unsigned int n;
	uint16_t sent;

	if (nd == NULL || rte_ring_empty(nd->ring))
		return;
	n = rte_ring_sc_dequeue_burst(nd->ring, (void **)bufs, ND_BURST, NULL);
	sent = rte_eth_tx_burst(port_id, queue, bufs, (uint16_t)n);
	if (sent < n) {
		rte_pktmbuf_free_bulk(bufs + sent, n - sent);
		rte_spinlock_lock(&nd->lock);
		nd->stats.tx_refused += n - sent;
		rte_spinlock_unlock(&nd->lock);
	}
}

static void
nd_free(struct netload_nd *nd)
{
	void *m;

	if (nd == NULL)
		return;
	if (nd->ring != NULL) {
		while (rte_ring_dequeue(nd->ring, &m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(nd->ring);
	}
	rte_mempool_free(nd->pool);
	rte_free(nd);
}

void
netload_nd_port_closed(uint16_t port_id)
{
	nd_free(netload_nd_ports[port_id]);
	netload_nd_ports[port_id] = NULL;
}

/* The control functions: the port must be open and no run active. */
static int
control(uint16_t port_id, const char *what)
{
	if (port_id >= RTE_MAX_ETHPORTS || !netload_port_is_open(port_id))
		return netload_fail(NETLOAD_ENODEV, "%s: port %u is not open", what, port_id);
	if (netload_port_queues_lent())
		return netload_fail(NETLOAD_EBUSY, "%s: port %u: a run is active; the run "
				"answers ARP/ND itself, call this between runs", what, port_id);
	return 0;
}

int
netload_port_set_addr(uint16_t port_id, const struct netload_port_addr *addr)
{
	struct netload_nd *nd;
	char name[RTE_MEMZONE_NAMESIZE];
	int ret = control(port_id, "set_addr"), socket;
	uint32_t pps;

	if (ret < 0)
		return ret;
	if (addr == NULL)
		return netload_fail(NETLOAD_EINVAL, "set_addr: port %u: NULL address", port_id);
	if (!addr->has_ip4 && !addr->has_ip6)
		return netload_fail(NETLOAD_EINVAL, "set_addr: port %u: give an IPv4 or an IPv6 "
				"address", port_id);
	if (addr->vlan > 4094)
		return netload_fail(NETLOAD_EINVAL, "set_addr: port %u: VLAN id %u; give 1 to "
				"4094, or 0 for untagged", port_id, addr->vlan);
	if ((addr->mac[0] & 1) || memcmp(addr->mac, ZERO, 6) == 0)
		return netload_fail(NETLOAD_EINVAL, "set_addr: port %u: the MAC must be a unicast "
				"address", port_id);
	nd = netload_nd_ports[port_id];
	if (nd == NULL) {
		socket = rte_eth_dev_socket_id(port_id);
		if (socket < 0)
			socket = (int)rte_socket_id();
		nd = rte_zmalloc_socket("netload_nd", sizeof(*nd), RTE_CACHE_LINE_SIZE, socket);
		if (nd == NULL)
			return netload_fail(NETLOAD_ENOMEM, "set_addr: port %u: ARP/ND state",
					port_id);
		snprintf(name, sizeof(name), "nl_nd_pool%u", port_id);
		nd->pool = rte_pktmbuf_pool_create(name, ND_POOL_MBUFS, 0, 0,
				RTE_PKTMBUF_HEADROOM + 256, socket);
		snprintf(name, sizeof(name), "nl_nd_ring%u", port_id);
		nd->ring = rte_ring_create(name, ND_RING_SLOTS, socket, RING_F_SC_DEQ);
		if (nd->pool == NULL || nd->ring == NULL) {
			nd_free(nd);
			return netload_fail(NETLOAD_ENOMEM, "set_addr: port %u: ARP/ND pool or "
					"ring: %s", port_id, rte_strerror(rte_errno));
		}
		rte_spinlock_init(&nd->lock);
		netload_port_set_close_hook(netload_nd_port_closed);
	}
	rte_spinlock_lock(&nd->lock);
	nd->addr = *addr;
	pps = addr->reply_pps ? addr->reply_pps : NETLOAD_ND_REPLY_PPS;
	nd->interval = rte_get_tsc_hz() / pps;
	nd->tat = 0;
	rte_spinlock_unlock(&nd->lock);
	netload_nd_ports[port_id] = nd;
	NETLOAD_LOG(INFO, "port %u: answers ARP/ND (IPv4 %s, IPv6 %s, VLAN %u)\n", port_id,
			addr->has_ip4 ? "on" : "off", addr->has_ip6 ? "on" : "off", addr->vlan);
	return 0;
}

int
netload_port_clear_addr(uint16_t port_id)
{
	int ret = control(port_id, "clear_addr");

	if (ret < 0)
		return ret;
	netload_nd_port_closed(port_id);
	return 0;
}

static struct netload_nd *
nd_of(uint16_t port_id, const char *what)
{
	struct netload_nd *nd = netload_nd_ports[port_id];

	if (nd == NULL)
		netload_fail(NETLOAD_ESTATE, "%s: port %u has no address; set one first "
				"(netload_port_set_addr)", what, port_id);
	return nd;
}

/* Control thread, no run: send one frame on TX queue 0, a few tries. */
static void
send_direct(struct netload_nd *nd, uint16_t port_id, struct rte_mbuf *m)
{
	int tries;

	if (m == NULL) {
		nd->stats.tx_refused++;
		return;
	}
	for (tries = 0; tries < 100; tries++) {
		if (rte_eth_tx_burst(port_id, 0, &m, 1) == 1)
			return;
		rte_delay_us_sleep(10);
	}
	rte_pktmbuf_free(m);
	nd->stats.tx_refused++;
}

/* One pass over the port's RX queues: ARP/ND answered, everything else dropped. */
static void
service_pass(struct netload_nd *nd, uint16_t port_id)
{
	struct rte_mbuf *bufs[ND_BURST];
	struct rte_eth_dev_info info;
	uint16_t q, n, i;

	if (rte_eth_dev_info_get(port_id, &info) != 0)
		return;
	for (q = 0; q < info.nb_rx_queues; q++) {
		n = rte_eth_rx_burst(port_id, q, bufs, ND_BURST);
		for (i = 0; i < n; i++)
			netload_nd_input(port_id, bufs[i]);
		if (n)
			rte_pktmbuf_free_bulk(bufs, n);
	}
	netload_nd_flush(port_id, 0);
	(void)nd;
}

int
netload_port_announce(uint16_t port_id)
{
	struct netload_nd *nd;
	int ret = control(port_id, "announce");

	if (ret < 0)
		return ret;
	if ((nd = nd_of(port_id, "announce")) == NULL)
		return NETLOAD_ESTATE;
	if (nd->addr.has_ip4)  /* gratuitous ARP: a request for its own address */
		send_direct(nd, port_id, arp_frame(nd, BROADCAST, ARP_REQUEST, ZERO,
				nd->addr.ip4));
	if (nd->addr.has_ip6)
		send_direct(nd, port_id, nd6_frame(nd, ALL_NODES_MAC, ALL_NODES_IP6, ICMP6_NA,
				NA_OVERRIDE, nd->addr.ip6));
	return 0;
}

static struct rte_mbuf *
request_frame(struct netload_nd *nd, int family, const uint8_t *peer)
{
	uint8_t mac[6] = { 0x33, 0x33, 0xff, peer[13], peer[14], peer[15] };
	uint8_t solicited[16] = { 0xff, 0x02, [11] = 1, [12] = 0xff };

	if (family == 4)
		return arp_frame(nd, BROADCAST, ARP_REQUEST, ZERO, peer);
	memcpy(solicited + 13, peer + 13, 3);
	return nd6_frame(nd, mac, solicited, ICMP6_NS, 0, peer);
}

int
netload_port_resolve(uint16_t port_id, int family, const uint8_t *peer_ip,
		uint32_t timeout_ms, uint32_t retry_ms, uint8_t *mac_out)
{
	struct timespec nap = { 0, 100000 };
	struct netload_nd *nd;
	uint64_t hz = rte_get_tsc_hz(), now, end, next, retry;
	uint32_t sent = 0;
	int ret = control(port_id, "resolve");

	if (ret < 0)
		return ret;
	if ((nd = nd_of(port_id, "resolve")) == NULL)
		return NETLOAD_ESTATE;
	if (peer_ip == NULL || mac_out == NULL || (family != 4 && family != 6))
		return netload_fail(NETLOAD_EINVAL, "resolve: port %u: give family 4 or 6, an "
				"address and room for the MAC", port_id);
	if ((family == 4 && !nd->addr.has_ip4) || (family == 6 && !nd->addr.has_ip6))
		return netload_fail(NETLOAD_EINVAL, "resolve: port %u has no IPv%d address of "
				"its own to ask from", port_id, family);
	if (timeout_ms == 0 || timeout_ms > NETLOAD_ND_MAX_WAIT_MS || retry_ms == 0)
		return netload_fail(NETLOAD_EINVAL, "resolve: port %u: timeout %u ms, retry %u ms; "
				"give 1 to %d ms and a retry of at least 1 ms", port_id, timeout_ms,
				retry_ms, NETLOAD_ND_MAX_WAIT_MS);
	rte_spinlock_lock(&nd->lock);
	nd->want_family = family;
	memset(nd->want_ip, 0, sizeof(nd->want_ip));
	memcpy(nd->want_ip, peer_ip, family == 4 ? 4 : 16);
	nd->peer_found = 0;
	rte_spinlock_unlock(&nd->lock);
	now = rte_rdtsc();
	end = now + (uint64_t)timeout_ms * hz / 1000;
	retry = (uint64_t)retry_ms * hz / 1000;
	next = now;
	while (now < end) {
		if (now >= next) {
			send_direct(nd, port_id, request_frame(nd, family, peer_ip));
			sent++;
			next = now + retry;
		}
		service_pass(nd, port_id);
		rte_spinlock_lock(&nd->lock);
		if (nd->peer_found) {
			memcpy(mac_out, nd->peer_mac, 6);
			nd->want_family = 0;
			rte_spinlock_unlock(&nd->lock);
			return 0;
		}
		rte_spinlock_unlock(&nd->lock);
		nanosleep(&nap, NULL);
		now = rte_rdtsc();
	}
	rte_spinlock_lock(&nd->lock);
	nd->want_family = 0;
	rte_spinlock_unlock(&nd->lock);
	return netload_fail(NETLOAD_ETIMEDOUT, "resolve: port %u: no answer to %u %s in %u ms",
			port_id, sent, family == 4 ? "ARP requests" : "neighbour solicitations",
			timeout_ms);
}

int
netload_port_nd_service(uint16_t port_id, uint32_t wait_us)
{
	struct timespec nap = { 0, 50000 };
	struct netload_nd *nd;
	uint64_t end;

	if (port_id >= RTE_MAX_ETHPORTS || !netload_port_is_open(port_id))
		return netload_fail(NETLOAD_ENODEV, "nd_service: port %u is not open", port_id);
	if (wait_us > NETLOAD_ND_MAX_WAIT_MS * 1000u)
		return netload_fail(NETLOAD_EINVAL, "nd_service: wait %u us; give at most %d ms",
				wait_us, NETLOAD_ND_MAX_WAIT_MS);
	nd = netload_nd_ports[port_id];
	if (nd == NULL || netload_port_queues_lent())
		return 0;
	end = rte_rdtsc() + (uint64_t)wait_us * rte_get_tsc_hz() / 1000000;
	do {
		service_pass(nd, port_id);
		if (wait_us)
			nanosleep(&nap, NULL);
	} while (rte_rdtsc() < end);
	return 0;
}

int
netload_port_nd_stats(uint16_t port_id, struct netload_nd_stats *stats)
{
	struct netload_nd *nd;

	if (port_id >= RTE_MAX_ETHPORTS || stats == NULL)
		return netload_fail(NETLOAD_EINVAL, "nd_stats: port %u: NULL stats", port_id);
	nd = netload_nd_ports[port_id];
	memset(stats, 0, sizeof(*stats));
	if (nd == NULL)
		return 0;
	rte_spinlock_lock(&nd->lock);
	*stats = nd->stats;
	rte_spinlock_unlock(&nd->lock);
	return 0;
}
