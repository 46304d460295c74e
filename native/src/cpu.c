/*
 * cpu.c — what the kernel says about a worker thread: its wall and CPU clocks,
 * its preemptions and sleeps (getrusage) and the time it waited runnable for
 * its CPU (schedstat), marked at a run's start, at each interval's end and at
 * its end; the time off its CPU between two marks is the proof run.c and
 * interval.c give for a lag that another task on the core caused.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE  /* RUSAGE_THREAD */
#endif
#include <stdio.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cpu.h"
#include "internal.h"

/* The second field of /proc/thread-self/schedstat (opened by the thread itself,
 * `fd`): ns spent runnable, waiting on a runqueue (CONFIG_SCHED_INFO). Read at
 * the start, at each interval's end and at the end of a run, never per burst;
 * pread on the kept descriptor costs a few us. */
static int
read_run_delay(int fd, uint64_t *out)
{
	unsigned long long on_cpu, waited;
	char buf[96];
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &on_cpu, &waited) != 2)
		return -1;
	*out = waited;
	return 0;
}

void
netload_cpu_mark(struct netload_cpu_mark *m, int schedstat_fd)
{
	struct timespec ts;
	struct rusage ru;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	m->wall_ns = (uint64_t)ts.tv_sec * NETLOAD_NS_PER_S + (uint64_t)ts.tv_nsec;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	m->cpu_ns = (uint64_t)ts.tv_sec * NETLOAD_NS_PER_S + (uint64_t)ts.tv_nsec;
	if (getrusage(RUSAGE_THREAD, &ru) == 0) {
		m->preemptions = (uint64_t)ru.ru_nivcsw;
		m->sleeps = (uint64_t)ru.ru_nvcsw;
	} else {
		m->preemptions = 0;
		m->sleeps = 0;
	}
	m->has_wait = read_run_delay(schedstat_fd, &m->wait_ns) == 0;
}

void
netload_cpu_since(const struct netload_cpu_mark *start, const struct netload_cpu_mark *end,
		struct netload_cpu_use *out)
{
	uint64_t wall = end->wall_ns - start->wall_ns, cpu = end->cpu_ns - start->cpu_ns;

	out->off_cpu_ns = wall > cpu ? wall - cpu : 0;
	out->wait_cpu_ns = start->has_wait && end->has_wait ?
		end->wait_ns - start->wait_ns : out->off_cpu_ns;
	if (out->wait_cpu_ns > out->off_cpu_ns)
		out->wait_cpu_ns = out->off_cpu_ns;  /* two clocks: never claim more waiting
						       * than time off the CPU */
	out->preemptions = end->preemptions - start->preemptions;
	out->sleeps = end->sleeps - start->sleeps;
}

