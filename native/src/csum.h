/*
 * csum.h — byte-level helpers that template creation (stream.c) and the
 * per-packet writer (fill.c) share: one's complement sums kept incrementally,
 * and big-endian field writes that return their bytes ready for such a sum.
 */
#ifndef NETLOAD_CSUM_H
#define NETLOAD_CSUM_H

#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>

/* One's complement sum of bytes at frame offset off (odd offsets swap). */
static inline uint32_t
sum_at(const uint8_t *frame, uint32_t off, uint32_t len)
{
	uint32_t sum = rte_raw_cksum(frame + off, len);

	if (off & 1)
		sum = ((sum & 0xff) << 8) | (sum >> 8);
	return sum;
}

static inline uint16_t
fold(uint64_t sum)
{
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

static inline uint16_t
swap16(uint16_t v)
{
	return (uint16_t)((v << 8) | (v >> 8));
}

/* Little-endian 16-bit words of a 64-bit value, summed. */
static inline uint64_t
le_words(uint64_t v)
{
	return (v & 0xffff) + ((v >> 16) & 0xffff) + ((v >> 32) & 0xffff) + (v >> 48);
}

/*
 * Write v big-endian in `width` bytes; returns the bytes as one little-endian
 * word (only its low `width` bytes set), ready for a native-order sum.
 */
static inline uint64_t
put_be(uint8_t *p, uint8_t width, uint64_t v)
{
	uint64_t be = rte_cpu_to_be_64(v << (64 - 8 * width));

	switch (width) {
	case 1: p[0] = (uint8_t)v; break;
	case 2: memcpy(p, &be, 2); break;
	case 4: memcpy(p, &be, 4); break;
	case 6: memcpy(p, &be, 6); break;
	default: memcpy(p, &be, 8); break;
	}
	return be;
}

#endif /* NETLOAD_CSUM_H */
