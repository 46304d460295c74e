/*
 * port.c — opening any DPDK device as a port: queues, pools, capabilities,
 * counters; its queues lent to a run; what the pools below and ARP/ND above
 * hook into (the reclaim of sent mbufs, the close). Its NIC clock is in
 * port_clock.c, the AF_XDP sockets its driver leaves open in port_xsk.c.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "port.h"

struct port_state {
	int open;
	int probed;               /* we hot-plugged it, so we remove it */
	char device[256];
	struct rte_mempool *rx_pool;
	uint64_t tx_offloads;
	uint64_t tx_csum;
};

static struct port_state ports[RTE_MAX_ETHPORTS];

int
netload_port_is_open(uint16_t port_id)
{
	return port_id < RTE_MAX_ETHPORTS && ports[port_id].open;
}

/*
 * Whether a run's workers own the ports' queues: run.c lends them when a run
 * starts and takes them back when it is reaped or freed. Meanwhile the control
 * thread neither polls nor sends on them (nd_control.c, the reclaim below).
 */
static int queues_lent;

void
netload_port_lend_queues(int lent)
{
	queues_lent = lent;
}

int
netload_port_queues_lent(void)
{
	return queues_lent;
}

/* The TX pools' mbufs that open ports sent, given back now (pool.c asks before
 * it frees pools): between runs only, as the workers own the queues in one. */
static void
reclaim_sent_mbufs(void)
{
	struct rte_eth_dev_info info;
	uint16_t pid, q;

	if (queues_lent)
		return;  /* the workers own the TX queues */
	RTE_ETH_FOREACH_DEV(pid) {
		if (!netload_port_is_open(pid) || rte_eth_dev_info_get(pid, &info) != 0)
			continue;
		for (q = 0; q < info.nb_tx_queues; q++)
			rte_eth_tx_done_cleanup(pid, q, 0);
	}
}

/* What a layer above keeps per port, let go when the port closes: nd.c's ARP/ND
 * state (it sets the hook with a port's first address; the port knows nothing of it). */
static void (*close_hook)(uint16_t port_id);

void
netload_port_set_close_hook(void (*hook)(uint16_t port_id))
{
	close_hook = hook;
}

uint64_t
netload_port_tx_csum(uint16_t port_id)
{
	return netload_port_is_open(port_id) ? ports[port_id].tx_csum : 0;
}

/* The device name is the devargs text before the first comma. */
static void
device_name(const char *device, char *name, size_t size)
{
	size_t n = strcspn(device, ",");

	if (n >= size)
		n = size - 1;
	memcpy(name, device, n);
	name[n] = '\0';
}

static int
find_or_probe(const char *device, uint16_t *port_id, int *probed)
{
	char name[RTE_DEV_NAME_MAX_LEN];
	int ret;

	device_name(device, name, sizeof(name));
	*probed = 0;
	if (rte_eth_dev_get_port_by_name(name, port_id) == 0)
		return 0;
	ret = rte_dev_probe(device);
	if (ret < 0 && ret != -EEXIST && netload_log_tap_mark() > 0)
		return netload_fail(NETLOAD_ENODEV,
				"device '%s' could not be probed: DPDK said: %s (%s)",
				device, netload_log_tap_text(), rte_strerror(-ret));
	if (ret < 0 && ret != -EEXIST)
		return netload_fail(NETLOAD_ENODEV,
				"device '%s' could not be probed (DPDK: %s); check the "
				"driver name (net_af_xdp, net_af_packet, net_pcap, net_tap, "
				"net_memif, net_virtio_user, net_ring, net_null or a PCI "
				"address bound to vfio-pci) and its arguments",
				device, rte_strerror(-ret));
	if (rte_eth_dev_get_port_by_name(name, port_id) != 0)
		return netload_fail(NETLOAD_ENODEV,
				"device '%s' was probed but no ethdev port is named '%s'",
				device, name);
	*probed = ret != -EEXIST;
	return 0;
}

static void
release(uint16_t port_id)
{
	struct port_state *ps = &ports[port_id];
	struct rte_eth_dev_info info;
	int probed = ps->probed;

	memset(&info, 0, sizeof(info));
	if (rte_eth_dev_info_get(port_id, &info) != 0)
		info.device = NULL;
	rte_eth_dev_stop(port_id);
	rte_eth_dev_close(port_id);
	if (probed && info.device != NULL)
		rte_dev_remove(info.device);
	netload_port_xsks_release(port_id, ps->device, info.driver_name != NULL &&
			strcmp(info.driver_name, "net_af_xdp") == 0);
	rte_mempool_free(ps->rx_pool);
	memset(ps, 0, sizeof(*ps));
	memset(&netload_nic_clocks[port_id], 0, sizeof(netload_nic_clocks[port_id]));
	netload_pool_collect();  /* the closed port gave back the TX pools' mbufs */
}

/*
 * Drivers whose start returns success although the device did not start: a
 * vhost-user backend that refused the memory table (too many memory regions)
 * is only logged by net_virtio_user. An error DPDK logs while such a port
 * starts fails the open, with DPDK's text.
 */
static int
start_swallows_errors(const char *driver)
{
	return driver != NULL && strcmp(driver, "net_virtio_user") == 0;
}

static int port_open(const struct netload_port_conf *conf, uint16_t *port_id);

/* "; DPDK said: <its error text since mark>", or nothing: two printf arguments */
#define DPDK_SAID(mark) \
	(netload_log_tap_mark() > (mark) ? "; DPDK said: " : ""), \
	(netload_log_tap_mark() > (mark) ? netload_log_tap_text() + (mark) : "")

/*
 * A queue whose AF_XDP socket was just closed (by this process's last close of
 * the port, or by the engine whose port lock this one waited for) is freed by
 * the kernel a moment later, in deferred work; until then a new socket cannot
 * bind to it. The open is retried from scratch for up to this long.
 */
#define XSK_QUEUE_FREE_WAIT_US 2000000
#define XSK_QUEUE_RETRY_US 20000

static int
xsk_queue_still_bound(const struct netload_port_conf *conf)
{
	return strncmp(conf->device, "net_af_xdp", 10) == 0 &&
			strstr(netload_log_tap_text(), "Failed to create xsk socket") != NULL;
}

int
netload_port_open(const struct netload_port_conf *conf, uint16_t *port_id)
{
	unsigned int waited_us = 0;
	int ret;

	netload_pool_set_reclaim(reclaim_sent_mbufs);
	for (;;) {
		netload_log_tap_start();
		ret = port_open(conf, port_id);
		if (ret == 0 || !xsk_queue_still_bound(conf) ||
				waited_us >= XSK_QUEUE_FREE_WAIT_US)
			break;
		netload_log_tap_stop();
		rte_delay_us_sleep(XSK_QUEUE_RETRY_US);
		waited_us += XSK_QUEUE_RETRY_US;
	}
	netload_log_tap_stop();
	if (ret != 0 && waited_us > 0)
		NETLOAD_LOG(WARNING, "port '%s': its AF_XDP queue stayed bound for %.1f s; "
				"another process may hold it\n", conf->device, waited_us / 1e6);
	return ret;
}

static int
port_open(const struct netload_port_conf *conf, uint16_t *port_id)
{
	struct rte_eth_conf eth_conf;
	struct rte_eth_dev_info info;
	struct rte_eth_txconf txconf;
	struct port_state *ps;
	char pool_name[RTE_MEMPOOL_NAMESIZE];
	uint16_t pid, q, nb_rxd, nb_txd;
	uint32_t data_room, mbufs;
	int probed, ret, socket, hw_ts;
	size_t mark;

	if (conf == NULL || conf->device == NULL || conf->device[0] == '\0')
		return netload_fail(NETLOAD_EINVAL, "port device string is empty");
	if (conf->rx_queues == 0 || conf->tx_queues == 0)
		return netload_fail(NETLOAD_EINVAL,
				"port '%s': rx_queues and tx_queues must be at least 1",
				conf->device);
	ret = find_or_probe(conf->device, &pid, &probed);
	if (ret < 0)
		return ret;
	/* net_virtio_user reports its backend's refusal at configure or start only in
	 * the log: anything it logs from here on is checked after the start */
	mark = netload_log_tap_mark();
	ps = &ports[pid];
	if (ps->open)
		return netload_fail(NETLOAD_EBUSY, "port '%s' (port %u) is already open",
				conf->device, pid);
	ps->probed = probed;
	snprintf(ps->device, sizeof(ps->device), "%s", conf->device);

	ret = rte_eth_dev_info_get(pid, &info);
	if (ret != 0) {
		release(pid);
		return netload_fail(NETLOAD_EPORT, "port '%s': cannot read device info: %s",
				conf->device, rte_strerror(-ret));
	}
	if (conf->rx_queues > info.max_rx_queues || conf->tx_queues > info.max_tx_queues) {
		release(pid);
		return netload_fail(NETLOAD_EINVAL,
				"port '%s': %u RX / %u TX queues asked, the device has at most %u / %u",
				conf->device, conf->rx_queues, conf->tx_queues,
				info.max_rx_queues, info.max_tx_queues);
	}
	memset(&eth_conf, 0, sizeof(eth_conf));
	ps->tx_csum = 0;
	if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM)
		ps->tx_csum |= NETLOAD_CSUM_IPV4;
	if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_UDP_CKSUM)
		ps->tx_csum |= NETLOAD_CSUM_UDP;
	if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_TCP_CKSUM)
		ps->tx_csum |= NETLOAD_CSUM_TCP;
	ps->tx_offloads = info.tx_offload_capa & (RTE_ETH_TX_OFFLOAD_IPV4_CKSUM |
			RTE_ETH_TX_OFFLOAD_UDP_CKSUM | RTE_ETH_TX_OFFLOAD_TCP_CKSUM |
			RTE_ETH_TX_OFFLOAD_MULTI_SEGS);
	eth_conf.txmode.offloads = ps->tx_offloads;
	if (conf->mtu != 0)
		eth_conf.rxmode.mtu = conf->mtu;
	/*
	 * A vhost-user server port registers its link interrupt handler when its peer
	 * goes away, whatever the configuration; only with LSC configured does its close
	 * unregister it, else the EAL's interrupt thread calls into the freed port
	 * (DPDK 22.11's virtio-user: a crash at close after the DUT reconnected).
	 */
	if (strcmp(info.driver_name, "net_virtio_user") == 0 && info.dev_flags != NULL &&
			(*info.dev_flags & RTE_ETH_DEV_INTR_LSC))
		eth_conf.intr_conf.lsc = 1;
	hw_ts = netload_port_rx_ts_configure(conf, &info, &eth_conf);
	if (hw_ts < 0) {
		release(pid);
		return hw_ts;
	}

	ret = rte_eth_dev_configure(pid, conf->rx_queues, conf->tx_queues, &eth_conf);
	if (ret != 0) {
		release(pid);
		return netload_fail(NETLOAD_EPORT, "port '%s': configure failed: %s",
				conf->device, rte_strerror(-ret));
	}
	nb_rxd = conf->rx_desc ? conf->rx_desc : 1024;
	nb_txd = conf->tx_desc ? conf->tx_desc : 1024;
	ret = rte_eth_dev_adjust_nb_rx_tx_desc(pid, &nb_rxd, &nb_txd);
	if (ret != 0) {
		release(pid);
		return netload_fail(NETLOAD_EPORT, "port '%s': descriptor counts refused: %s",
				conf->device, rte_strerror(-ret));
	}

	socket = rte_eth_dev_socket_id(pid);
	if (socket < 0)
		socket = (int)rte_socket_id();
	data_room = RTE_MBUF_DEFAULT_BUF_SIZE;
	if (conf->mtu > 1500)
		data_room = RTE_PKTMBUF_HEADROOM + conf->mtu + 64;
	mbufs = conf->rx_mbufs ? conf->rx_mbufs : 16383;
	snprintf(pool_name, sizeof(pool_name), "nlrx%u", pid);
	ps->rx_pool = rte_pktmbuf_pool_create(pool_name, mbufs, NETLOAD_POOL_CACHE, 0,
			data_room, socket);
	if (ps->rx_pool == NULL) {
		release(pid);
		return netload_fail(NETLOAD_ENOMEM,
				"port '%s': RX pool of %u mbufs: %s; give the engine more "
				"memory or fewer rx_mbufs", conf->device, mbufs,
				rte_strerror(rte_errno));
	}
	for (q = 0; q < conf->rx_queues; q++) {
		ret = rte_eth_rx_queue_setup(pid, q, nb_rxd, socket, NULL, ps->rx_pool);
		if (ret < 0) {
			release(pid);
			return netload_fail(NETLOAD_EPORT, "port '%s' RX queue %u: %s%s%s",
					conf->device, q, rte_strerror(-ret), DPDK_SAID(mark));
		}
	}
	txconf = info.default_txconf;
	txconf.offloads = ps->tx_offloads;
	for (q = 0; q < conf->tx_queues; q++) {
		ret = rte_eth_tx_queue_setup(pid, q, nb_txd, socket, &txconf);
		if (ret < 0) {
			release(pid);
			return netload_fail(NETLOAD_EPORT, "port '%s' TX queue %u: %s%s%s",
					conf->device, q, rte_strerror(-ret), DPDK_SAID(mark));
		}
	}
	ret = rte_eth_dev_start(pid);
	if (ret < 0) {
		release(pid);
		return netload_fail(NETLOAD_EPORT, "port '%s': start failed: %s%s%s",
				conf->device, rte_strerror(-ret), DPDK_SAID(mark));
	}
	if (netload_log_tap_mark() > mark && start_swallows_errors(info.driver_name)) {
		release(pid);
		return netload_fail(NETLOAD_EPORT, "port '%s' (driver %s) did not start: "
				"DPDK said: %s%s", conf->device, info.driver_name,
				netload_log_tap_text() + mark,
				strstr(netload_log_tap_text() + mark, "memory region") ?
				"; a vhost-user peer maps at most 8 memory regions: start "
				"the engine with --single-file-segments in hugepages, or "
				"--no-huge (its default EAL arguments do one of them)" : "");
	}
	if (conf->promiscuous) {
		ret = rte_eth_promiscuous_enable(pid);
		if (ret != 0 && ret != -ENOTSUP)
			NETLOAD_LOG(WARNING, "port '%s': promiscuous mode: %s\n",
					conf->device, rte_strerror(-ret));
	}
	if (hw_ts) {
		ret = netload_port_clock_open(pid);
		if (ret != 0 && conf->hw_timestamps == NETLOAD_HW_TS_ON) {
			release(pid);
			return netload_fail(NETLOAD_ENOTSUP, "port '%s' (driver %s) has RX "
					"timestamp offload but its clock cannot be read (%s), so "
					"TX and RX times cannot be compared; open it without "
					"hw_timestamps", conf->device, info.driver_name,
					rte_strerror(-ret));
		}
		if (ret != 0)
			memset(&netload_nic_clocks[pid], 0, sizeof(netload_nic_clocks[pid]));
	}
	rte_eth_stats_reset(pid);
	if (strcmp(info.driver_name, "net_af_xdp") == 0)
		netload_port_xsks_record(pid);
	ps->open = 1;
	*port_id = pid;
	NETLOAD_LOG(INFO, "port %u open: %s (driver %s), %u/%u queues, %u/%u descriptors\n",
			pid, conf->device, info.driver_name, conf->rx_queues,
			conf->tx_queues, nb_rxd, nb_txd);
	return 0;
}

int
netload_port_info(uint16_t port_id, struct netload_port_info *out)
{
	struct rte_eth_dev_info info;
	struct rte_ether_addr mac;
	struct rte_eth_link link;
	struct timespec ts;
	uint16_t mtu = 0;
	int ret;

	if (!netload_port_is_open(port_id))
		return netload_fail(NETLOAD_ENODEV, "port %u is not open", port_id);
	ret = rte_eth_dev_info_get(port_id, &info);
	if (ret != 0)
		return netload_fail(NETLOAD_EPORT, "port %u: device info: %s",
				port_id, rte_strerror(-ret));
	memset(out, 0, sizeof(*out));
	out->port_id = port_id;
	rte_eth_dev_get_name_by_port(port_id, out->name);
	snprintf(out->driver, sizeof(out->driver), "%s", info.driver_name);
	out->socket_id = rte_eth_dev_socket_id(port_id);
	if (rte_eth_macaddr_get(port_id, &mac) == 0)
		memcpy(out->mac, mac.addr_bytes, 6);
	rte_eth_dev_get_mtu(port_id, &mtu);
	out->mtu = mtu;
	out->min_mtu = info.min_mtu;
	out->max_mtu = info.max_mtu;
	out->max_rx_pktlen = info.max_rx_pktlen;
	out->max_rx_queues = info.max_rx_queues;
	out->max_tx_queues = info.max_tx_queues;
	out->rx_offload_capa = info.rx_offload_capa;
	out->tx_offload_capa = info.tx_offload_capa;
	out->tx_offloads_enabled = ports[port_id].tx_offloads;
	out->tx_csum_offload = ports[port_id].tx_csum;
	out->has_rx_timestamp = (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_TIMESTAMP) != 0;
	ret = rte_eth_timesync_read_time(port_id, &ts);
	out->has_timesync = ret != -ENOTSUP && ret != -ENODEV && ret != -EIO;
	{
		uint64_t ticks;

		out->has_read_clock = rte_eth_read_clock(port_id, &ticks) == 0;
	}
	out->hw_timestamps = netload_nic_clocks[port_id].enabled;
	out->nic_clock_hz = netload_nic_clocks[port_id].hz;
	out->has_queue_rate_limit = 0;
	if (info.max_tx_queues > 0) {
		/* Rate 0 means "no limit" where the PMD supports limits at all. */
		ret = rte_eth_set_queue_rate_limit(port_id, 0, 0);
		out->has_queue_rate_limit = ret != -ENOTSUP;
	}
	memset(&link, 0, sizeof(link));
	if (rte_eth_link_get_nowait(port_id, &link) == 0) {
		out->link_up = link.link_status == RTE_ETH_LINK_UP;
		out->link_speed_mbps = link.link_speed == RTE_ETH_SPEED_NUM_UNKNOWN ?
			0 : link.link_speed;
		out->link_full_duplex = link.link_duplex == RTE_ETH_LINK_FULL_DUPLEX;
	}
	return 0;
}

int
netload_port_stats(uint16_t port_id, struct netload_port_stats *out)
{
	struct rte_eth_stats st;
	int ret;

	if (!netload_port_is_open(port_id))
		return netload_fail(NETLOAD_ENODEV, "port %u is not open", port_id);
	ret = rte_eth_stats_get(port_id, &st);
	if (ret != 0)
		return netload_fail(NETLOAD_EPORT, "port %u: stats: %s", port_id,
				rte_strerror(-ret));
	out->ipackets = st.ipackets;
	out->opackets = st.opackets;
	out->ibytes = st.ibytes;
	out->obytes = st.obytes;
	out->imissed = st.imissed;
	out->ierrors = st.ierrors;
	out->oerrors = st.oerrors;
	out->rx_nombuf = st.rx_nombuf;
	return 0;
}

int
netload_port_stats_reset(uint16_t port_id)
{
	int ret;

	if (!netload_port_is_open(port_id))
		return netload_fail(NETLOAD_ENODEV, "port %u is not open", port_id);
	ret = rte_eth_stats_reset(port_id);
	if (ret != 0)
		return netload_fail(NETLOAD_EPORT, "port %u: stats reset: %s", port_id,
				rte_strerror(-ret));
	return 0;
}

int
netload_port_close(uint16_t port_id)
{
	if (!netload_port_is_open(port_id))
		return 0;
	NETLOAD_LOG(INFO, "port %u closed (%s)\n", port_id, ports[port_id].device);
	if (close_hook != NULL)
		close_hook(port_id);
	release(port_id);
	return 0;
}

int
netload_port_set_queue_rate(uint16_t port_id, uint16_t queue, uint32_t mbps)
{
	int ret;

	if (!netload_port_is_open(port_id))
		return netload_fail(NETLOAD_ENODEV, "port %u is not open", port_id);
	ret = rte_eth_set_queue_rate_limit(port_id, queue, mbps);
	if (ret == -ENOTSUP)
		return netload_fail(NETLOAD_ENOTSUP,
				"port %u (%s) has no hardware queue rate limiting; use "
				"software pacing", port_id, ports[port_id].device);
	if (ret != 0)
		return netload_fail(NETLOAD_EPORT, "port %u queue %u: rate limit %u Mbit/s: %s",
				port_id, queue, mbps, rte_strerror(-ret));
	NETLOAD_LOG(INFO, "port %u queue %u: hardware rate limit %u Mbit/s\n",
			port_id, queue, mbps);
	return 0;
}
