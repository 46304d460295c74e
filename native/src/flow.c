/*
 * flow.c — frames without a signature counted by their flow: a replayed
 * capture's streams sent with no_signature. The run's flows (IPv4/IPv6 address
 * pair, protocol and, for UDP and TCP, the ports) are a hash table built at run
 * start; a frame the classifier (rx.c) finds no signature in is looked up here
 * before it counts as foreign. Each RX queue counts packets, bytes and the
 * first and last arrival per TX entry in its own row, so its one worker writes
 * them without atomics.
 */
#include <string.h>

#include <rte_byteorder.h>
#include <rte_jhash.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "run.h"

#define FLOW_KEY_BYTES 40
#define FLOW_COUNTS 5

struct flow_entry {
	uint8_t key[FLOW_KEY_BYTES];
	uint32_t tx_index;
	uint32_t used;
};

struct run_flows {
	uint32_t mask;            /* table slots - 1 (a power of two) */
	struct flow_entry *table;
	uint64_t *counts;         /* [rx][tx][FLOW_COUNTS]: packets, bytes, first and last
	                           * arrival (TSC of the burst; 0: none), packets that
	                           * arrived before TX ended */
	uint32_t n_tx;
};

/* family, protocol, ports flag, addresses, ports: the bytes a flow is hashed on. */
static void
make_key(uint8_t *key, uint8_t family, uint8_t proto, uint8_t has_ports, const uint8_t *src,
		const uint8_t *dst, uint16_t sport, uint16_t dport)
{
	memset(key, 0, FLOW_KEY_BYTES);
	key[0] = family;
	key[1] = proto;
	key[2] = has_ports;
	memcpy(key + 4, src, family == 4 ? 4 : 16);
	memcpy(key + 20, dst, family == 4 ? 4 : 16);
	key[36] = (uint8_t)(sport >> 8);
	key[37] = (uint8_t)sport;
	key[38] = (uint8_t)(dport >> 8);
	key[39] = (uint8_t)dport;
}

/* DPDK's Jenkins hash over the key's 10 words: a few dozen cycles a foreign frame,
 * where a byte-at-a-time hash takes one dependent multiply per byte. */
static inline uint32_t
key_hash(const uint8_t *key)
{
	return rte_jhash(key, FLOW_KEY_BYTES, 0);
}

int
netload_flows_init(struct netload_run *run, const struct netload_run_conf *c)
{
	struct run_flows *fl;
	uint32_t i, size = 16;

	if (c->n_flows == 0)
		return 0;
	if (c->flows == NULL || c->n_flows > NETLOAD_MAX_STREAMS)
		return netload_fail(NETLOAD_EINVAL, "run: %u flows; give 1 to %d with their table",
				c->n_flows, NETLOAD_MAX_STREAMS);
	while (size < 2 * c->n_flows)
		size <<= 1;
	fl = rte_zmalloc("netload_flows", sizeof(*fl), 0);
	if (fl == NULL)
		return netload_fail(NETLOAD_ENOMEM, "run: flow table");
	run->flows = fl;
	fl->mask = size - 1;
	fl->n_tx = run->n_tx;
	fl->table = rte_zmalloc("netload_flow_table", sizeof(*fl->table) * size, 0);
	fl->counts = rte_zmalloc("netload_flow_counts",
			sizeof(uint64_t) * FLOW_COUNTS * run->n_tx * (run->n_rx ? run->n_rx : 1), 0);
	if (fl->table == NULL || fl->counts == NULL)
		return netload_fail(NETLOAD_ENOMEM, "run: flow table of %u slots", size);
	for (i = 0; i < c->n_flows; i++) {
		const struct netload_flow_conf *f = &c->flows[i];
		uint8_t key[FLOW_KEY_BYTES];
		uint32_t at;

		if (f->tx_index >= run->n_tx || (f->family != 4 && f->family != 6))
			return netload_fail(NETLOAD_EINVAL, "run: flow %u names TX entry %u of %u, "
					"family %u; give an entry of the run and family 4 or 6",
					i, f->tx_index, run->n_tx, f->family);
		make_key(key, f->family, f->proto, f->has_ports != 0, f->src, f->dst,
				f->has_ports ? f->sport : 0, f->has_ports ? f->dport : 0);
		for (at = key_hash(key) & fl->mask; fl->table[at].used; at = (at + 1) & fl->mask)
			if (memcmp(fl->table[at].key, key, FLOW_KEY_BYTES) == 0)
				return netload_fail(NETLOAD_EINVAL, "run: flow %u repeats an "
						"earlier flow (TX entry %u); give each flow once",
						i, fl->table[at].tx_index);
		memcpy(fl->table[at].key, key, FLOW_KEY_BYTES);
		fl->table[at].tx_index = f->tx_index;
		fl->table[at].used = 1;
	}
	return 0;
}

void
netload_flows_free(struct netload_run *run)
{
	if (run->flows == NULL)
		return;
	rte_free(run->flows->table);
	rte_free(run->flows->counts);
	rte_free(run->flows);
	run->flows = NULL;
}

/* The frame's flow key; 0 when it is not IPv4 or IPv6. */
static int
frame_key(const struct rte_mbuf *m, uint8_t *key)
{
	uint8_t buf[14 + 8 + 40 + 4], pb[4];
	const uint8_t *p;
	uint32_t off = 12, n = RTE_MIN(m->pkt_len, (uint32_t)sizeof(buf)), l4;
	uint16_t type, sport = 0, dport = 0;
	uint8_t proto, ports;

	p = rte_pktmbuf_read(m, 0, n, buf);
	if (p == NULL || n < 14)
		return 0;
	type = (uint16_t)(p[off] << 8 | p[off + 1]);
	while ((type == 0x8100 || type == 0x88a8 || type == 0x9100) && off + 6 <= n) {
		off += 4;
		type = (uint16_t)(p[off] << 8 | p[off + 1]);
	}
	off += 2;
	if (type == 0x0800 && off + 20 <= n && p[off] >> 4 == 4) {
		uint32_t ihl = (p[off] & 0xfu) * 4;

		proto = p[off + 9];
		l4 = off + ihl;
		/* a fragment (MF set or an offset) has no ports of its own */
		ports = (proto == 6 || proto == 17) && ihl >= 20 &&
			((p[off + 6] & 0x3f) | p[off + 7]) == 0;
		if (ports) {
			const uint8_t *q = l4 + 4 <= n ? p + l4 :
				rte_pktmbuf_read(m, l4, 4, pb);

			if (q == NULL)
				return 0;
			sport = (uint16_t)(q[0] << 8 | q[1]);
			dport = (uint16_t)(q[2] << 8 | q[3]);
		}
		make_key(key, 4, proto, ports, p + off + 12, p + off + 16, sport, dport);
		return 1;
	}
	if (type == 0x86dd && off + 40 <= n && p[off] >> 4 == 6) {
		proto = p[off + 6];
		ports = proto == 6 || proto == 17;
		if (ports && off + 44 <= n) {
			sport = (uint16_t)(p[off + 40] << 8 | p[off + 41]);
			dport = (uint16_t)(p[off + 42] << 8 | p[off + 43]);
		} else if (ports) {
			return 0;
		}
		make_key(key, 6, proto, ports, p + off + 8, p + off + 24, sport, dport);
		return 1;
	}
	return 0;
}

int
netload_flows_count(struct netload_run *run, struct rx_task *t, const struct rte_mbuf *m,
		uint64_t now, uint64_t by_end)
{
	const struct run_flows *fl = run->flows;
	uint8_t key[FLOW_KEY_BYTES];
	uint32_t at;

	if (!frame_key(m, key))
		return 0;
	for (at = key_hash(key) & fl->mask; fl->table[at].used; at = (at + 1) & fl->mask) {
		if (memcmp(fl->table[at].key, key, FLOW_KEY_BYTES) == 0) {
			uint64_t *c = fl->counts + FLOW_COUNTS * ((size_t)(t - run->rx) * fl->n_tx +
					fl->table[at].tx_index);

			c[0]++;
			c[1] += m->pkt_len;
			if (c[2] == 0)
				c[2] = now;
			c[3] = now;
			c[4] += by_end;
			return 1;
		}
	}
	return 0;
}

/* ns after the start deadline of a TSC stamp (0 before it). */
static uint64_t
since_start(const struct netload_run *run, uint64_t tsc)
{
	return tsc > run->start_tsc ? netload_tsc_ns(run, tsc - run->start_tsc) : 0;
}

int
netload_run_rx_flow_stats(const struct netload_run *run, uint32_t tx_index,
		struct netload_rx_flow_stats *out)
{
	uint64_t first = 0, last = 0;
	uint32_t r;

	if (run == NULL || out == NULL || tx_index >= run->n_tx)
		return netload_fail(NETLOAD_EINVAL, "rx flow stats: no TX entry %u", tx_index);
	memset(out, 0, sizeof(*out));
	if (run->flows == NULL)
		return 0;
	for (r = 0; r < run->n_rx; r++) {
		const uint64_t *c = run->flows->counts +
			FLOW_COUNTS * ((size_t)r * run->n_tx + tx_index);

		out->packets += c[0];
		out->bytes += c[1];
		out->by_tx_end += c[4];
		if (c[2] && (first == 0 || c[2] < first))
			first = c[2];
		if (c[3] > last)
			last = c[3];
	}
	out->first_ns = first ? since_start(run, first) : 0;
	out->last_ns = last ? since_start(run, last) : 0;
	return 0;
}
