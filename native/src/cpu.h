/*
 * cpu.h — a worker thread's CPU use as the kernel tells it (cpu.c).
 */
#ifndef NETLOAD_CPU_H
#define NETLOAD_CPU_H

#include <stdint.h>

/* What the kernel says about a worker thread at one moment (netload_cpu_mark):
 * its wall and CPU clocks, preemptions, sleeps and, where schedstat is read, the
 * time it waited runnable for its CPU. */
struct netload_cpu_mark {
	uint64_t wall_ns;
	uint64_t cpu_ns;
	uint64_t preemptions;
	uint64_t sleeps;
	uint64_t wait_ns;
	int has_wait;             /* schedstat was read */
};

/* A worker thread between two marks: its time off its CPU, of that the time it
 * waited runnable (another task on its CPU), its preemptions and its sleeps. */
struct netload_cpu_use {
	uint64_t off_cpu_ns;
	uint64_t wait_cpu_ns;
	uint64_t preemptions;
	uint64_t sleeps;
};

void netload_cpu_mark(struct netload_cpu_mark *m, int schedstat_fd);
void netload_cpu_since(const struct netload_cpu_mark *start, const struct netload_cpu_mark *end,
		struct netload_cpu_use *out);

#endif /* NETLOAD_CPU_H */
