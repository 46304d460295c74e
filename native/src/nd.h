/*
 * nd.h — what nd.c (a port's ARP/ND state, its frames, the RX path's answers)
 * and nd_control.c (the control thread's functions) share; no other file.
 */
#ifndef NETLOAD_ND_H
#define NETLOAD_ND_H

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

static const uint8_t BROADCAST[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static const uint8_t ALL_NODES_MAC[6] = { 0x33, 0x33, 0, 0, 0, 1 };
static const uint8_t ALL_NODES_IP6[16] = { 0xff, 0x02, [15] = 1 };
static const uint8_t ZERO[16];

/* An ARP frame from the port's address, or an ICMPv6 NS or NA (target and one
 * link-layer option); NULL when the port's ARP/ND pool is empty. */
struct rte_mbuf *netload_nd_arp_frame(struct netload_nd *nd, const uint8_t *eth_dst, uint16_t op,
		const uint8_t *tha, const uint8_t *tpa);
struct rte_mbuf *netload_nd_icmp6_frame(struct netload_nd *nd, const uint8_t *eth_dst,
		const uint8_t *ip_dst, uint8_t type, uint8_t flags, const uint8_t *target);
/* The state, its pool and its ring freed, with the replies still in the ring. */
void netload_nd_free(struct netload_nd *nd);

#endif /* NETLOAD_ND_H */
