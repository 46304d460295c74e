/*
 * port.h — what port.c shares with port_clock.c (NIC clocks, RX timestamps) and
 * port_xsk.c (AF_XDP sockets its driver leaves open); no other file.
 */
#ifndef NETLOAD_PORT_H
#define NETLOAD_PORT_H

#include <rte_ethdev.h>

#include "internal.h"

/*
 * port_clock.c. RX timestamp offload for a port being opened: the mbuf field
 * once per process, the offload bit in the port's RX configuration. Returns 1
 * when enabled, 0 when the port cannot (and hw_timestamps allows that), < 0 on
 * error.
 */
int netload_port_rx_ts_configure(const struct netload_port_conf *conf,
		const struct rte_eth_dev_info *info, struct rte_eth_conf *eth_conf);
/* Start the port's NIC clock (netload_nic_clocks[port_id]); 0, or a negative errno.
 * A clock is enabled only while its port is open: port.c clears it at the close. */
int netload_port_clock_open(uint16_t port_id);

/* port_xsk.c. The AF_XDP sockets the open of port_id created, recorded; at its close,
 * those its driver left open closed (close_left) and the record dropped. */
void netload_port_xsks_record(uint16_t port_id);
void netload_port_xsks_release(uint16_t port_id, const char *device, int close_left);

#endif /* NETLOAD_PORT_H */
