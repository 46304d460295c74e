/*
 * hist.c — log-linear histograms (the HdrHistogram layout): values below
 * 2^SUB_BITS have a bucket each; above, every power of two is split into
 * 2^(SUB_BITS-1) equal buckets, so a bucket is never wider than 1/64 of the
 * values it holds.
 */
#include <stdlib.h>

#include <rte_cycles.h>

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

/*
 * TSC cycles to record n latencies (spread over 1 us .. 1 ms, as a loaded
 * path gives them) into a histogram as the RX loop does: the benchmark of
 * what the histogram costs per packet. The values are drawn before timing.
 */
uint64_t
netload_hist_bench(uint64_t n, uint64_t seed)
{
	uint64_t *hist = calloc(NETLOAD_HIST_BUCKETS, sizeof(uint64_t));
	uint64_t *values = malloc(sizeof(uint64_t) * (n ? n : 1));
	uint64_t i, x = seed | 1, start, cycles, sink = 0;

	if (hist == NULL || values == NULL) {
		free(hist);
		free(values);
		return 0;
	}
	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		values[i] = 1000 + x % 999000;
	}
	start = rte_rdtsc();
	for (i = 0; i < n; i++)
		hist[netload_hist_index_inline(values[i])]++;
	cycles = rte_rdtsc() - start;
	for (i = 0; i < NETLOAD_HIST_BUCKETS; i++)
		sink += hist[i];
	free(hist);
	free(values);
	return sink == n ? cycles : 0;
}
