/*
 * nd.c — a generator port as a host on its subnet: it answers ARP requests
 * and IPv6 neighbour solicitations for its address, announces itself
 * (gratuitous ARP, unsolicited neighbour advertisement) and resolves its
 * peer's MAC, so that a router DUT needs no static neighbour entries. This
 * file holds a port's state, the frames it sends and what it answers;
 * nd_control.c the control thread's functions (address, announce, resolve).
 *
 * During a run, RX workers hand frames without a stream's signature to
 * netload_nd_input; a reply goes into the port's ring, and the worker that
 * owns a TX queue of the port in that run sends it (netload_nd_flush, once
 * per loop turn). Between runs the control thread polls the port itself
 * (netload_port_nd_service). Signed frames never come here.
 */
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_malloc.h>

#include "nd.h"

struct netload_nd *netload_nd_ports[RTE_MAX_ETHPORTS];

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

struct rte_mbuf *
netload_nd_arp_frame(struct netload_nd *nd, const uint8_t *eth_dst, uint16_t op,
		const uint8_t *tha, const uint8_t *tpa)
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
struct rte_mbuf *
netload_nd_icmp6_frame(struct netload_nd *nd, const uint8_t *eth_dst, const uint8_t *ip_dst,
		uint8_t type, uint8_t flags, const uint8_t *target)
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
		queue_reply(nd, netload_nd_arp_frame(nd, sha, ARP_REPLY, sha, spa));
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
	queue_reply(nd, netload_nd_icmp6_frame(nd, eth_dst, ip_dst, ICMP6_NA, flags,
			nd->addr.ip6));
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

void
netload_nd_free(struct netload_nd *nd)
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
	netload_nd_free(netload_nd_ports[port_id]);
	netload_nd_ports[port_id] = NULL;
}
