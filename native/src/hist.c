/*
 * hist.c — log-linear histograms (the HdrHistogram layout): values below
 * 2^SUB_BITS have a bucket each; above, every power of two is split into
 * 2^(SUB_BITS-1) equal buckets, so a bucket is never wider than 1/64 of the
 * values it holds.
 */
#include "internal.h"

#define SUB (1u << NETLOAD_HIST_SUB_BITS)
#define HALF (SUB / 2)

int
netload_hist_index(uint64_t v)
{
	return netload_hist_index_inline(v);
}

int
netload_hist_lower_bounds(uint64_t *lower, uint32_t n)
{
	uint32_t i;

	if (lower == NULL || n > NETLOAD_HIST_BUCKETS)
		return netload_fail(NETLOAD_EINVAL, "histogram: %u buckets asked, %d exist",
				n, NETLOAD_HIST_BUCKETS);
	for (i = 0; i < n; i++) {
		if (i < SUB) {
			lower[i] = i;
		} else {
			uint32_t b = (i - SUB) / HALF + 1, sub = (i - SUB) % HALF + HALF;

			lower[i] = (uint64_t)sub << b;
		}
	}
	return 0;
}
