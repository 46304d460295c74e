/*
 * stream.c — the stream registry and packet templates (their pools: pool.c):
 * a stream's configuration checked, its frames built with their checksum bases,
 * its fields reset. The per-packet writer is fill.c.
 *
 * Checksums are kept incrementally: at create time each template gets the
 * one's complement sum of its pseudo-header and L4 segment with every byte
 * that changes per packet (fields, trailer, the checksum itself) zeroed. Per
 * packet only the changed bytes are summed and added to that base.
 */
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_malloc.h>

#include "csum.h"
#include "internal.h"

static struct netload_stream *streams[NETLOAD_MAX_STREAMS];

struct netload_stream *
netload_stream_by_id(uint16_t id)
{
	return id < NETLOAD_MAX_STREAMS ? streams[id] : NULL;
}

int
netload_stream_id(const struct netload_stream *s)
{
	return s == NULL ? NETLOAD_EINVAL : s->id;
}

int
netload_stream_csum_offloaded(const struct netload_stream *s)
{
	return s == NULL ? NETLOAD_EINVAL : s->csum_offload;
}

/* Bytes [start, end) of the frame that the L4 checksum covers in the IP header. */
static void
pseudo_addr_range(const struct netload_stream *s, uint32_t *start, uint32_t *end)
{
	if (s->l3_proto == 4) {
		*start = s->l3_offset + 12;
		*end = s->l3_offset + 20;
	} else {
		*start = s->l3_offset + 8;
		*end = s->l3_offset + 40;
	}
}

static int
field_in_l4_sum(const struct netload_stream *s, const struct netload_field_conf *fc,
		uint32_t *in_sum)
{
	uint32_t a = fc->offset, b = fc->offset + fc->width, ps, pe;
	uint32_t l4 = (uint32_t)s->l4_offset;

	*in_sum = 0;
	if (!s->fix_l4_csum)
		return 0;
	pseudo_addr_range(s, &ps, &pe);
	if (a >= l4 || (a >= ps && b <= pe)) {
		/* The checksum field itself is rewritten after the sum. */
		if (a < s->l4_csum_off + 2u && b > s->l4_csum_off)
			return netload_fail(NETLOAD_EINVAL,
					"field at offset %u overlaps the L4 checksum at %u; "
					"disable checksum fixing to modify it",
					fc->offset, s->l4_csum_off);
		*in_sum = 1;
		return 0;
	}
	if (b > ps && a < pe)
		return netload_fail(NETLOAD_EINVAL,
				"field at offset %u width %u straddles the IP addresses "
				"(bytes %u-%u); align it to the address fields",
				fc->offset, fc->width, ps, pe - 1);
	if (b > l4)
		return netload_fail(NETLOAD_EINVAL,
				"field at offset %u width %u straddles the L4 header at %u",
				fc->offset, fc->width, l4);
	return 0;
}

static uint64_t
width_max(uint8_t width)
{
	return width == 8 ? UINT64_MAX : (UINT64_C(1) << (8 * width)) - 1;
}

static int
check_field(const struct netload_stream_conf *c, uint32_t i)
{
	const struct netload_field_conf *fc = &c->fields[i];
	uint32_t f;

	if (fc->width != 1 && fc->width != 2 && fc->width != 4 && fc->width != 6 &&
			fc->width != 8)
		return netload_fail(NETLOAD_EINVAL,
				"field %u: width %u is not supported; use 1, 2, 4, 6 or 8 bytes",
				i, fc->width);
	if (fc->op > NETLOAD_FIELD_RANDOM)
		return netload_fail(NETLOAD_EINVAL, "field %u: unknown op %u", i, fc->op);
	if (fc->min > fc->max)
		return netload_fail(NETLOAD_EINVAL,
				"field %u: min %" PRIu64 " > max %" PRIu64 "; swap them",
				i, fc->min, fc->max);
	if (fc->max > width_max(fc->width))
		return netload_fail(NETLOAD_EINVAL,
				"field %u: max %" PRIu64 " does not fit in %u bytes",
				i, fc->max, fc->width);
	if (fc->step == 0 && fc->op != NETLOAD_FIELD_SET)
		return netload_fail(NETLOAD_EINVAL, "field %u: step must be at least 1", i);
	for (f = 0; f < c->n_frames; f++) {
		if ((uint32_t)fc->offset + fc->width > c->frame_bytes[f])
			return netload_fail(NETLOAD_EINVAL,
					"field %u at offset %u width %u lies outside the %u-byte "
					"frame; give an offset below %u", i, fc->offset, fc->width,
					c->frame_bytes[f], c->frame_bytes[f] - NETLOAD_SIGNATURE_BYTES -
					fc->width);
		if ((uint32_t)fc->offset + fc->width >
				(uint32_t)c->frame_bytes[f] - NETLOAD_SIGNATURE_BYTES)
			return netload_fail(NETLOAD_EINVAL,
					"field %u at offset %u width %u runs into the signature "
					"trailer of the %u-byte frame; use a larger frame or an "
					"earlier offset", i, fc->offset, fc->width,
					c->frame_bytes[f]);
	}
	return 0;
}

static int
check_conf(const struct netload_stream_conf *c)
{
	uint32_t i, need;

	if (!netload_port_is_open(c->port_id))
		return netload_fail(NETLOAD_ENODEV, "stream: port %u is not open", c->port_id);
	if (c->n_frames == 0 || c->n_frames > NETLOAD_MAX_FRAMES)
		return netload_fail(NETLOAD_EINVAL, "stream: %u frame templates; give 1 to %d",
				c->n_frames, NETLOAD_MAX_FRAMES);
	if (c->sequence_len == 0 || c->sequence == NULL)
		return netload_fail(NETLOAD_EINVAL, "stream: the frame sequence is empty");
	for (i = 0; i < c->sequence_len; i++)
		if (c->sequence[i] >= c->n_frames)
			return netload_fail(NETLOAD_EINVAL,
					"stream: sequence entry %u names frame %u of %u",
					i, c->sequence[i], c->n_frames);
	if (c->no_signature && (c->n_fields || c->fix_ipv4_csum || c->fix_l4_csum))
		return netload_fail(NETLOAD_EINVAL,
				"stream: frames without a signature are sent as given: no "
				"fields and no checksum fixing");
	if (c->n_fields > NETLOAD_MAX_FIELDS)
		return netload_fail(NETLOAD_EINVAL, "stream: %u fields; at most %d",
				c->n_fields, NETLOAD_MAX_FIELDS);
	if (c->l3_proto != 0 && c->l3_proto != 4 && c->l3_proto != 6)
		return netload_fail(NETLOAD_EINVAL, "stream: l3_proto %u; use 4, 6 or 0",
				c->l3_proto);
	if (c->l4_proto != 0 && c->l4_proto != 6 && c->l4_proto != 17)
		return netload_fail(NETLOAD_EINVAL, "stream: l4_proto %u; use 17, 6 or 0",
				c->l4_proto);
	if ((c->fix_l4_csum || c->fix_ipv4_csum) && c->l3_offset < 0)
		return netload_fail(NETLOAD_EINVAL,
				"stream: checksums asked for a frame without an IP header");
	if (c->fix_l4_csum && (c->l4_offset < 0 || c->l4_proto == 0))
		return netload_fail(NETLOAD_EINVAL,
				"stream: L4 checksum asked for a frame without UDP or TCP");
	if ((c->l3_offset >= 0 && (c->l3_offset & 1)) ||
			(c->l4_offset >= 0 && (c->l4_offset & 1)))
		return netload_fail(NETLOAD_EINVAL,
				"stream: L3/L4 offsets %d/%d must be even", c->l3_offset,
				c->l4_offset);
	need = c->l4_offset >= 0 ? (uint32_t)c->l4_offset + (c->l4_proto == 6 ? 20 : 8) :
		c->l3_offset >= 0 ? (uint32_t)c->l3_offset + (c->l3_proto == 6 ? 40 : 20) : 14;
	for (i = 0; i < c->n_frames; i++) {
		if (c->frames[i] == NULL)
			return netload_fail(NETLOAD_EINVAL, "stream: frame %u is NULL", i);
		if (c->frame_bytes[i] < NETLOAD_MIN_FRAME_BYTES ||
				c->frame_bytes[i] > NETLOAD_MAX_FRAME_BYTES)
			return netload_fail(NETLOAD_EINVAL,
					"stream: frame %u is %u bytes without FCS; give %d to %d",
					i, c->frame_bytes[i], NETLOAD_MIN_FRAME_BYTES,
					NETLOAD_MAX_FRAME_BYTES);
		if (!c->no_signature && c->frame_bytes[i] < need + NETLOAD_SIGNATURE_BYTES)
			return netload_fail(NETLOAD_EINVAL,
					"stream: frame %u (%u bytes) has no room for its headers "
					"(%u bytes) and the %d-byte signature; use a larger frame",
					i, c->frame_bytes[i], need, NETLOAD_SIGNATURE_BYTES);
	}
	for (i = 0; i < c->n_fields; i++) {
		int ret = check_field(c, i);

		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Base L4 sum of frame f: variable bytes zeroed, pseudo-header included. */
static uint32_t
l4_base(const struct netload_stream *s, const struct netload_stream_conf *c,
		const uint8_t *tmpl, uint16_t len)
{
	uint8_t buf[NETLOAD_MAX_FRAME_BYTES];
	uint32_t i, sum, ps, pe;
	uint16_t l4_len = len - s->l4_offset;
	uint8_t ph[4];

	memcpy(buf, tmpl, len);
	buf[s->l4_csum_off] = 0;
	buf[s->l4_csum_off + 1] = 0;
	memset(buf + len - NETLOAD_SIGNATURE_BYTES, 0, NETLOAD_SIGNATURE_BYTES);
	for (i = 0; i < c->n_fields; i++)
		if (c->fields[i].op != NETLOAD_FIELD_SET)
			memset(buf + c->fields[i].offset, 0, c->fields[i].width);
	pseudo_addr_range(s, &ps, &pe);
	sum = sum_at(buf, ps, pe - ps);
	/* The rest of the pseudo-header: zero, protocol, L4 length. */
	ph[0] = 0;
	ph[1] = s->l4_proto;
	ph[2] = l4_len >> 8;
	ph[3] = l4_len & 0xff;
	sum += rte_raw_cksum(ph, 4);
	sum += sum_at(buf, s->l4_offset, l4_len);
	return fold(sum);
}

/* Network-order IPv4 header sum with the per-packet fields zeroed. */
static uint32_t
ip_base(const struct netload_stream *s, const struct netload_stream_conf *c,
		const uint8_t *tmpl)
{
	uint8_t hdr[60];
	uint32_t i, ihl = (tmpl[s->l3_offset] & 0xf) * 4u;

	memcpy(hdr, tmpl + s->l3_offset, ihl);
	hdr[10] = 0;
	hdr[11] = 0;
	for (i = 0; i < c->n_fields; i++) {
		const struct netload_field_conf *fc = &c->fields[i];
		uint32_t a = fc->offset, b = a + fc->width, k;

		if (fc->op == NETLOAD_FIELD_SET)
			continue;
		for (k = a; k < b; k++)
			if (k >= (uint32_t)s->l3_offset && k < s->l3_offset + ihl)
				hdr[k - s->l3_offset] = 0;
	}
	return sum_at(hdr, 0, ihl);
}

void
netload_stream_free(struct netload_stream *s)
{
	uint32_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->n_frames; i++) {
		netload_pool_detach(&s->frames[i]);
		rte_free(s->frames[i].data);
	}
	rte_free(s->sequence);
	if (streams[s->id] == s)
		streams[s->id] = NULL;
	rte_free(s);
}

static int
alloc_id(uint16_t *id)
{
	static uint16_t next;
	uint32_t i;

	for (i = 0; i < NETLOAD_MAX_STREAMS; i++) {
		uint16_t cand = (uint16_t)((next + i) % NETLOAD_MAX_STREAMS);

		if (streams[cand] == NULL) {
			*id = cand;
			next = (uint16_t)((cand + 1) % NETLOAD_MAX_STREAMS);
			return 0;
		}
	}
	return netload_fail(NETLOAD_EINVAL,
			"stream: %d streams are loaded, the most one engine holds; free the "
			"streams no run sends any more, or spread them over several engines",
			NETLOAD_MAX_STREAMS);
}

static void
apply_set_fields(const struct netload_stream_conf *c, uint8_t *frame)
{
	uint32_t i;

	for (i = 0; i < c->n_fields; i++)
		if (c->fields[i].op == NETLOAD_FIELD_SET)
			put_be(frame + c->fields[i].offset, c->fields[i].width, c->fields[i].min);
}

static void
fix_template_csums(const struct netload_stream *s, uint8_t *frame, uint16_t len)
{
	if (s->l3_proto == 4 && s->l3_offset >= 0) {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(frame + s->l3_offset);

		ip->hdr_checksum = 0;
		if (!s->csum_offload)
			ip->hdr_checksum = rte_ipv4_cksum(ip);
	}
	RTE_SET_USED(len);
}

int
netload_stream_create(const struct netload_stream_conf *c, struct netload_stream **out)
{
	struct netload_stream *s;
	uint64_t port_csum;
	uint32_t i;
	int ret, socket;

	if (c == NULL || out == NULL)
		return netload_fail(NETLOAD_EINVAL, "stream: NULL configuration");
	ret = check_conf(c);
	if (ret < 0)
		return ret;
	s = rte_zmalloc("netload_stream", sizeof(*s), RTE_CACHE_LINE_SIZE);
	if (s == NULL)
		return netload_fail(NETLOAD_ENOMEM, "stream: out of memory");
	ret = alloc_id(&s->id);
	if (ret < 0) {
		rte_free(s);
		return ret;
	}
	streams[s->id] = s;
	s->port_id = c->port_id;
	s->l3_offset = c->l3_offset;
	s->l4_offset = c->l4_offset;
	s->l3_proto = c->l3_proto;
	s->l4_proto = c->l4_proto;
	s->fix_l4_csum = c->fix_l4_csum;
	s->seed = c->seed ? c->seed : rte_rdtsc() | 1;
	s->stamp_every = c->stamp_every ? c->stamp_every : 1;
	s->no_signature = c->no_signature != 0;
	if (s->fix_l4_csum)
		s->l4_csum_off = (uint16_t)(c->l4_offset + (c->l4_proto == 6 ? 16 : 6));
	port_csum = netload_port_tx_csum(c->port_id);
	/* bit 0: IPv4 header, bit 1: UDP, bit 2: TCP */
	s->csum_offload = c->fix_l4_csum && (c->l3_proto != 4 || (port_csum & NETLOAD_CSUM_IPV4)) &&
		(port_csum & (c->l4_proto == 6 ? NETLOAD_CSUM_TCP : NETLOAD_CSUM_UDP));

	for (i = 0; i < c->n_fields; i++) {
		const struct netload_field_conf *fc = &c->fields[i];
		struct netload_field_state *fs;
		uint32_t in_sum;

		if (fc->op == NETLOAD_FIELD_SET)
			continue;
		ret = field_in_l4_sum(s, fc, &in_sum);
		if (ret < 0)
			goto fail;
		fs = &s->fields[s->n_fields++];
		fs->offset = fc->offset;
		fs->width = fc->width;
		fs->op = fc->op;
		fs->min = fc->min;
		fs->max = fc->max;
		fs->step = fc->step;
		fs->span = (fc->max - fc->min) / fc->step + 1;  /* wraps to 0 for 2^64 */
		fs->in_l4_sum = (uint8_t)in_sum;
		fs->odd = fc->offset & 1;
		if (c->l3_proto == 4 && c->fix_ipv4_csum &&
				fc->offset < (uint32_t)c->l3_offset + 20 &&
				fc->offset + fc->width > (uint32_t)c->l3_offset) {
			if (fc->offset < (uint32_t)c->l3_offset ||
					fc->offset + fc->width > (uint32_t)c->l3_offset + 20) {
				ret = netload_fail(NETLOAD_EINVAL,
						"field at offset %u width %u straddles the IPv4 "
						"header edge; keep it inside or outside",
						fc->offset, fc->width);
				goto fail;
			}
			fs->in_ip_sum = 1;
			s->fix_ipv4_csum = 1;
		}
	}

	s->sequence = rte_malloc("netload_seq", sizeof(uint16_t) * c->sequence_len, 0);
	if (s->sequence == NULL) {
		ret = netload_fail(NETLOAD_ENOMEM, "stream: sequence of %u entries",
				c->sequence_len);
		goto fail;
	}
	memcpy(s->sequence, c->sequence, sizeof(uint16_t) * c->sequence_len);
	s->sequence_len = c->sequence_len;

	socket = rte_eth_dev_socket_id(c->port_id);
	if (socket < 0)
		socket = (int)rte_socket_id();
	for (i = 0; i < c->n_frames; i++) {
		struct netload_frame *fr = &s->frames[i];
		uint16_t len = c->frame_bytes[i];

		fr->len = len;
		fr->sig_off = len - NETLOAD_SIGNATURE_BYTES;
		fr->data = rte_malloc("netload_tmpl", len, 0);
		if (fr->data == NULL) {
			ret = netload_fail(NETLOAD_ENOMEM, "stream: template copy");
			goto fail;
		}
		s->n_frames = i + 1;
		memcpy(fr->data, c->frames[i], len);
		apply_set_fields(c, fr->data);
		if (!s->no_signature)
			fix_template_csums(s, fr->data, len);
		if (s->fix_l4_csum) {
			fr->l4_len = len - s->l4_offset;
			fr->l4_base = l4_base(s, c, fr->data, len);
		}
		if (s->fix_ipv4_csum)
			fr->ip_base = ip_base(s, c, fr->data);
		fr->sig_odd = fr->sig_off & 1;
		fr->sig_const = NETLOAD_SIGNATURE_MAGIC + s->id;
		ret = netload_pool_attach(fr, s->id, i, socket, c->pool_mbufs);
		if (ret < 0)
			goto fail;
	}
	s->pool = s->frames[0].pool;
	for (i = 1; i < s->n_frames; i++)
		if (s->frames[i].pool != s->pool)
			s->pool = NULL;
	netload_stream_reset(s);
	*out = s;
	return 0;
fail:
	netload_stream_free(s);
	return ret;
}

void
netload_stream_reset(struct netload_stream *s)
{
	uint32_t i;

	s->rng = s->seed;
	s->stamp_left = 0;
	for (i = 0; i < s->n_fields; i++) {
		struct netload_field_state *fs = &s->fields[i];

		fs->cur = fs->op == NETLOAD_FIELD_DEC ? fs->max : fs->min;
	}
}

