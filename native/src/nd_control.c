/*
 * nd_control.c — the control thread's side of ARP/ND (nd.c): a port's address
 * set and cleared, its announcement, its peer resolved, its queues serviced
 * between runs, its counters read. Every one of them needs the port open, and
 * those that poll or send on its queues need no run active (the run's workers
 * own the queues then, and answer ARP/ND themselves).
 */
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>

#include "nd.h"

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
			netload_nd_free(nd);
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
		send_direct(nd, port_id, netload_nd_arp_frame(nd, BROADCAST, ARP_REQUEST, ZERO,
				nd->addr.ip4));
	if (nd->addr.has_ip6)
		send_direct(nd, port_id, netload_nd_icmp6_frame(nd, ALL_NODES_MAC, ALL_NODES_IP6,
				ICMP6_NA, NA_OVERRIDE, nd->addr.ip6));
	return 0;
}

static struct rte_mbuf *
request_frame(struct netload_nd *nd, int family, const uint8_t *peer)
{
	uint8_t mac[6] = { 0x33, 0x33, 0xff, peer[13], peer[14], peer[15] };
	uint8_t solicited[16] = { 0xff, 0x02, [11] = 1, [12] = 0xff };

	if (family == 4)
		return netload_nd_arp_frame(nd, BROADCAST, ARP_REQUEST, ZERO, peer);
	memcpy(solicited + 13, peer + 13, 3);
	return netload_nd_icmp6_frame(nd, mac, solicited, ICMP6_NS, 0, peer);
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
