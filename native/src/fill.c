/*
 * fill.c — the per-packet writer: each burst's modified fields, the signature
 * trailer (sequence number, TX timestamp) and checksums, in software on the
 * incremental sums stream.c prepared, or left to the port's offload.
 */
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>

#include "csum.h"
#include "internal.h"

static inline void
offload_csum(const struct netload_stream *s, struct rte_mbuf *m, uint8_t *p)
{
	void *l3 = p + s->l3_offset;
	uint16_t *l4sum = (uint16_t *)(p + s->l4_csum_off);

	m->l2_len = s->l3_offset;
	m->l3_len = s->l4_offset - s->l3_offset;
	m->ol_flags = s->l4_proto == 6 ? RTE_MBUF_F_TX_TCP_CKSUM : RTE_MBUF_F_TX_UDP_CKSUM;
	if (s->l3_proto == 4) {
		m->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM;
		((struct rte_ipv4_hdr *)l3)->hdr_checksum = 0;
		*l4sum = rte_ipv4_phdr_cksum(l3, m->ol_flags);
	} else {
		m->ol_flags |= RTE_MBUF_F_TX_IPV6;
		*l4sum = rte_ipv6_phdr_cksum(l3, m->ol_flags);
	}
}

/* Sums here stay far below 2^32: two folding steps are enough. */
static inline uint16_t
fold32(uint32_t sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)((sum & 0xffff) + (sum >> 16));
}

/*
 * Field-major burst writer: each field runs one tight loop over the burst,
 * specialised at compile time for its op and width, so the per-packet work
 * has no branches on the field's shape.
 */
static __rte_always_inline void
field_burst(struct netload_field_state *fs, uint64_t *rng, uint8_t *const *pkts,
		uint16_t n, uint32_t *l4, uint32_t *ip, const uint8_t op, const uint8_t width)
{
	const uint16_t off = fs->offset;
	const uint64_t min = fs->min, max = fs->max, step = fs->step, span = fs->span;
	const int odd = fs->odd, in_l4 = fs->in_l4_sum, in_ip = fs->in_ip_sum;
	uint64_t cur = fs->cur, r = *rng;
	uint16_t i;

	for (i = 0; i < n; i++) {
		uint64_t v, vs;

		if (op == NETLOAD_FIELD_INC) {
			v = cur;
			cur = max - v < step ? min : v + step;
		} else if (op == NETLOAD_FIELD_DEC) {
			v = cur;
			cur = v - min < step ? max : v - step;
		} else {
			r ^= r >> 12;
			r ^= r << 25;
			r ^= r >> 27;
			v = r * UINT64_C(0x2545F4914F6CDD1D);
			if (span != 0)
				v = min + step * (uint64_t)(((unsigned __int128)v * span) >> 64);
		}
		vs = le_words(put_be(pkts[i] + off, width, v));
		if (odd)
			vs = swap16(fold(vs));
		if (in_l4)
			l4[i] += vs;
		if (in_ip)
			ip[i] += vs;
	}
	fs->cur = cur;
	*rng = r;
}

#define FIELD_WIDTHS(OP) \
	switch (fs->width) { \
	case 1: field_burst(fs, &s->rng, pkts, n, l4, ip, OP, 1); break; \
	case 2: field_burst(fs, &s->rng, pkts, n, l4, ip, OP, 2); break; \
	case 4: field_burst(fs, &s->rng, pkts, n, l4, ip, OP, 4); break; \
	case 6: field_burst(fs, &s->rng, pkts, n, l4, ip, OP, 6); break; \
	default: field_burst(fs, &s->rng, pkts, n, l4, ip, OP, 8); break; \
	}

/*
 * Write n packets into freshly allocated mbufs of this stream: the template
 * where the mbuf does not hold it yet, lengths, per-packet fields, the
 * signature trailer, checksums. Returns n.
 */
uint16_t
netload_stream_fill(struct netload_stream *s, struct rte_mbuf **bufs, uint16_t n,
		uint64_t first_seq, uint64_t tsc, uint64_t *bytes)
{
	const uint32_t tsc_words = (uint32_t)le_words(tsc);
	uint8_t *pkts[NETLOAD_MAX_BURST];
	uint32_t l4[NETLOAD_MAX_BURST], ip[NETLOAD_MAX_BURST];
	uint64_t total = 0;
	uint16_t i;
	uint32_t k;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = bufs[i];
		const struct netload_frame *fr = &s->frames[s->sequence_len == 1 ? 0 :
			s->sequence[(first_seq + i) % s->sequence_len]];
		uint32_t seq = (uint32_t)(first_seq + i);
		struct netload_signature sig;
		uint32_t sig_sum;

		uint64_t *tag = netload_mbuf_tmpl(m);

		pkts[i] = rte_pktmbuf_mtod(m, uint8_t *);
		/* The mbuf last held another template (a shared pool): copy this
		 * one. Its variable bytes are all rewritten below either way. */
		if (unlikely(*tag != fr->serial)) {
			rte_memcpy(pkts[i], fr->data, fr->len);
			*tag = fr->serial;
		}
		m->data_len = fr->len;
		m->pkt_len = fr->len;
		total += fr->len;
		if (unlikely(s->no_signature))
			continue;  /* sent as given: no fields, no sums (stream.c) */
		sig.magic = NETLOAD_SIGNATURE_MAGIC;
		sig.stream_id = s->id;
		sig.seq = seq;
		if (likely(s->stamp_left == 0)) {
			sig.tx_tsc = tsc;
			s->stamp_left = s->stamp_every - 1;
			sig_sum = tsc_words;
		} else {
			sig.tx_tsc = 0;     /* unstamped: RX skips its latency */
			s->stamp_left--;
			sig_sum = 0;
		}
		memcpy(pkts[i] + fr->sig_off, &sig, sizeof(sig));
		/* The trailer is stored little-endian: its words sum as they are. */
		sig_sum += fr->sig_const + (seq & 0xffff) + (seq >> 16);
		l4[i] = fr->l4_base + (unlikely(fr->sig_odd) ? swap16(fold32(sig_sum)) : sig_sum);
		ip[i] = fr->ip_base;
	}
	if (unlikely(s->no_signature)) {
		*bytes += total;
		return n;
	}
	for (k = 0; k < s->n_fields; k++) {
		struct netload_field_state *fs = &s->fields[k];

		switch (fs->op) {
		case NETLOAD_FIELD_INC: FIELD_WIDTHS(NETLOAD_FIELD_INC); break;
		case NETLOAD_FIELD_DEC: FIELD_WIDTHS(NETLOAD_FIELD_DEC); break;
		default: FIELD_WIDTHS(NETLOAD_FIELD_RANDOM); break;
		}
	}
	if (s->csum_offload) {
		for (i = 0; i < n; i++)
			offload_csum(s, bufs[i], pkts[i]);
	} else {
		if (s->fix_ipv4_csum) {
			const uint16_t at = s->l3_offset + 10;

			for (i = 0; i < n; i++) {
				uint16_t csum = (uint16_t)~fold32(ip[i]);

				memcpy(pkts[i] + at, &csum, 2);
			}
		}
		if (s->fix_l4_csum) {
			const uint16_t at = s->l4_csum_off;
			const int udp = s->l4_proto == 17;

			for (i = 0; i < n; i++) {
				uint16_t csum = (uint16_t)~fold32(l4[i]);

				if (udp && csum == 0)
					csum = 0xffff;
				memcpy(pkts[i] + at, &csum, 2);
			}
		}
	}
	*bytes += total;
	return n;
}
