/*
 * port_clock.c — hardware timestamps of a port: RX timestamp offload set up at
 * its open, its NIC clock started and its rate measured against the TSC, and
 * anchored to the TSC at a run's start, so that NIC times of different ports
 * compare on one timeline (internal.h netload_nic_ns).
 */
#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf_dyn.h>

#include "port.h"

struct netload_nic_clock netload_nic_clocks[RTE_MAX_ETHPORTS];
int netload_rx_ts_offset = -1;
uint64_t netload_rx_ts_flag;

/* The NIC clock rate is measured against the TSC over this long at open. */
#define NIC_CLOCK_PROBE_US 20000

/* Read the NIC clock between two TSC reads; the TSC midpoint goes to *tsc. */
static int
read_clock_pair(uint16_t port_id, uint64_t *ticks, uint64_t *tsc)
{
	uint64_t before = rte_rdtsc();
	int ret = rte_eth_read_clock(port_id, ticks);

	*tsc = before + (rte_rdtsc() - before) / 2;
	return ret;
}

/*
 * Start the port's NIC clock: a first reading, and the tick rate measured
 * against the TSC (refined at each anchor, over a longer span).
 */
int
netload_port_clock_open(uint16_t port_id)
{
	struct netload_nic_clock *c = &netload_nic_clocks[port_id];
	uint64_t t1, c1;
	int ret;

	memset(c, 0, sizeof(*c));
	ret = rte_eth_timesync_enable(port_id);
	if (ret != 0 && ret != -ENOTSUP)
		NETLOAD_LOG(WARNING, "port %u: timesync enable: %s\n", port_id,
				rte_strerror(-ret));
	ret = read_clock_pair(port_id, &c->open_ticks, &c->open_tsc);
	if (ret != 0)
		return ret;
	rte_delay_us_sleep(NIC_CLOCK_PROBE_US);
	ret = read_clock_pair(port_id, &t1, &c1);
	if (ret != 0)
		return ret;
	if (t1 <= c->open_ticks || c1 <= c->open_tsc)
		return -EIO;
	c->hz = (uint64_t)((double)(t1 - c->open_ticks) * (double)rte_get_tsc_hz() /
			(double)(c1 - c->open_tsc));
	if (c->hz == 0)
		return -EIO;
	c->ns_mult = netload_ns_mult(c->hz);
	c->enabled = 1;
	return 0;
}

int
netload_port_clock_anchor(uint16_t port_id, uint64_t tsc_hz, uint64_t tsc_ns_mult)
{
	struct netload_nic_clock *c;
	uint64_t ticks, tsc;
	int ret;

	/* A clock is enabled only while its port is open (port.c clears it at the
	 * close and at a failed open), so this is the port's open check too. */
	if (port_id >= RTE_MAX_ETHPORTS || !netload_nic_clocks[port_id].enabled)
		return netload_fail(NETLOAD_EINVAL, "port %u has no hardware timestamps; "
				"open it with hw_timestamps", port_id);
	c = &netload_nic_clocks[port_id];
	ret = read_clock_pair(port_id, &ticks, &tsc);
	if (ret != 0)
		return netload_fail(NETLOAD_EPORT, "port %u: reading the NIC clock: %s",
				port_id, rte_strerror(-ret));
	/* A longer span than at open: a better rate, once 100 ms have passed. */
	if (tsc - c->open_tsc > tsc_hz / 10 && ticks > c->open_ticks) {
		c->hz = (uint64_t)((double)(ticks - c->open_ticks) * (double)tsc_hz /
				(double)(tsc - c->open_tsc));
		c->ns_mult = netload_ns_mult(c->hz);
	}
	c->anchor_ticks = ticks;
	c->anchor_ns = netload_ticks_ns(tsc, tsc_ns_mult);
	return 0;
}

/* RX timestamp offload for a port being opened (port.h). */
int
netload_port_rx_ts_configure(const struct netload_port_conf *conf,
		const struct rte_eth_dev_info *info, struct rte_eth_conf *eth_conf)
{
	int ret;

	if (conf->hw_timestamps == NETLOAD_HW_TS_OFF)
		return 0;
	if (conf->hw_timestamps != NETLOAD_HW_TS_ON && conf->hw_timestamps != NETLOAD_HW_TS_AUTO)
		return netload_fail(NETLOAD_EINVAL, "port '%s': hw_timestamps=%d; give 0 "
				"(off), 1 (required) or 2 (where the port can)",
				conf->device, conf->hw_timestamps);
	if (!(info->rx_offload_capa & RTE_ETH_RX_OFFLOAD_TIMESTAMP)) {
		if (conf->hw_timestamps == NETLOAD_HW_TS_AUTO)
			return 0;
		return netload_fail(NETLOAD_ENOTSUP, "port '%s' (driver %s) has no RX "
				"timestamp offload; open it without hw_timestamps and measure "
				"latency with the TSC clock", conf->device, info->driver_name);
	}
	if (netload_rx_ts_offset < 0) {
		ret = rte_mbuf_dyn_rx_timestamp_register(&netload_rx_ts_offset,
				&netload_rx_ts_flag);
		if (ret != 0)
			return netload_fail(NETLOAD_ENOMEM, "port '%s': registering the mbuf "
					"timestamp field: %s", conf->device, rte_strerror(rte_errno));
	}
	eth_conf->rxmode.offloads |= RTE_ETH_RX_OFFLOAD_TIMESTAMP;
	return 1;
}
