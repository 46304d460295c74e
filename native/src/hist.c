/*
 * hist.c — log-linear histograms (the HdrHistogram layout): values below
 * 2^SUB_BITS have a bucket each; above, every power of two is split into
 * 2^(SUB_BITS-1) equal buckets, so a bucket is never wider than 1/64 of the
 * values it holds.
 */
#include <stdlib.h>

#include <rte_cycles.h>

#include "internal.h"

int
netload_hist_index(uint64_t v)
{
	return netload_hist_index_inline(v);
}

uint32_t
netload_hist_buckets(uint32_t bits)
{
	if (bits < NETLOAD_HIST_MIN_SUB_BITS || bits > NETLOAD_HIST_MAX_SUB_BITS)
		return 0;
	/* Values up to 2^45 ns: the powers of two past 2^bits, 2^(bits-1) buckets each. */
	return (1u << bits) + (45 - bits) * (1u << (bits - 1));
}

int
netload_hist_lower_bounds_bits(uint32_t bits, uint64_t *lower, uint32_t n)
{
	uint32_t i, sub = 1u << bits, half = sub / 2;

	if (netload_hist_buckets(bits) == 0)
		return netload_fail(NETLOAD_EINVAL,
				"histogram: %u sub-bucket bits; give %d to %d", bits,
				NETLOAD_HIST_MIN_SUB_BITS, NETLOAD_HIST_MAX_SUB_BITS);
	if (lower == NULL || n > netload_hist_buckets(bits))
		return netload_fail(NETLOAD_EINVAL, "histogram: %u buckets asked, %u exist",
				n, netload_hist_buckets(bits));
	for (i = 0; i < n; i++) {
		if (i < sub) {
			lower[i] = i;
		} else {
			uint32_t b = (i - sub) / half + 1, s = (i - sub) % half + half;

			lower[i] = (uint64_t)s << b;
		}
	}
	return 0;
}

int
netload_hist_lower_bounds(uint64_t *lower, uint32_t n)
{
	return netload_hist_lower_bounds_bits(NETLOAD_HIST_SUB_BITS, lower, n);
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
