/* eal.c — library-wide state: errors, logging, EAL start and stop, clocks. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* fopencookie: the log tap */
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>

#include <rte_version.h>

#include "internal.h"

int netload_logtype = RTE_LOGTYPE_USER1;

static RTE_DEFINE_PER_LCORE(char, last_error)[512];
static FILE *log_stream;
static int eal_ready;

/*
 * DPDK's log goes through a stream of ours (the "tap") into the engine log, or
 * stderr. While a caller listens (netload_log_tap_start), the tap keeps the text
 * of DPDK's error-level messages, so that a failure reports DPDK's own reason
 * ("Too many memory regions", "Failed to accept initial client connection"),
 * including where a driver logs an error and still returns success. Only the
 * control thread listens, at port open and EAL start.
 */
static FILE *log_tap;
static int tap_listening;
static char tap_text[768];
static size_t tap_len;

static ssize_t
tap_write(void *cookie, const char *buf, size_t size)
{
	FILE *out = log_stream != NULL ? log_stream : stderr;
	int level = rte_log_cur_msg_loglevel();
	size_t i;

	(void)cookie;
	fwrite(buf, 1, size, out);
	if (!tap_listening || level <= 0 || level > (int)RTE_LOG_ERR ||
			(eal_ready && rte_log_cur_msg_logtype() == netload_logtype))
		return (ssize_t)size;
	/* one line per message: newlines become " / ", the last one dropped */
	for (i = 0; i < size && tap_len + 4 < sizeof(tap_text); i++) {
		if (buf[i] == '\n') {
			if (i + 1 < size || tap_len == 0)
				continue;
			memcpy(tap_text + tap_len, " / ", 3);
			tap_len += 3;
		} else {
			tap_text[tap_len++] = buf[i];
		}
	}
	tap_text[tap_len] = '\0';
	return (ssize_t)size;
}

static int
tap_install(void)
{
	cookie_io_functions_t io = { .write = tap_write };

	if (log_tap != NULL)
		return 0;
	log_tap = fopencookie(NULL, "w", io);
	if (log_tap == NULL)
		return -1;
	setvbuf(log_tap, NULL, _IOLBF, 0);
	return rte_openlog_stream(log_tap);
}

void
netload_log_tap_start(void)
{
	tap_install();
	tap_len = 0;
	tap_text[0] = '\0';
	tap_listening = 1;
}

const char *
netload_log_tap_text(void)
{
	size_t n = tap_len;

	fflush(log_tap);
	while (n >= 3 && memcmp(tap_text + n - 3, " / ", 3) == 0)
		n -= 3;
	tap_text[n] = '\0';
	return tap_text;
}

size_t
netload_log_tap_mark(void)
{
	if (log_tap != NULL)
		fflush(log_tap);
	return tap_len;
}

void
netload_log_tap_stop(void)
{
	tap_listening = 0;
}

static const char *const status_text[] = {
	[0] = "success",
	[1] = "invalid argument",
	[2] = "out of memory (mbufs, rings or heap)",
	[3] = "no such device or port",
	[4] = "the port refused the operation",
	[5] = "busy: a run is active or the object is in use",
	[6] = "called in the wrong state",
	[7] = "no worker lcore available",
	[8] = "EAL initialisation failed",
	[9] = "not supported by the device",
	[10] = "timed out: the peer did not answer",
};

const char *
netload_dpdk_version(void)
{
	return rte_version();
}

int
netload_abi_version(void)
{
	return NETLOAD_ABI_VERSION;
}

const char *
netload_strerror(int status)
{
	if (status > 0 || status < NETLOAD_STATUS_MIN)
		return "unknown netload status";
	return status_text[-status];
}

const char *
netload_last_error(void)
{
	return RTE_PER_LCORE(last_error);
}

int
netload_fail(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(RTE_PER_LCORE(last_error), sizeof(RTE_PER_LCORE(last_error)),
			fmt, ap);
	va_end(ap);
	if (eal_ready)
		NETLOAD_LOG(ERR, "%s\n", RTE_PER_LCORE(last_error));
	return status;
}

int
netload_log_open(const char *path)
{
	FILE *f = fopen(path, "a");

	if (f == NULL)
		return netload_fail(NETLOAD_EINVAL, "cannot open log file %s: %s",
				path, strerror(errno));
	setvbuf(f, NULL, _IOLBF, 0);
	if (log_stream != NULL)
		fclose(log_stream);
	log_stream = f;
	if (tap_install() != 0)
		return netload_fail(NETLOAD_EINVAL, "rte_openlog_stream refused %s", path);
	return 0;
}

int
netload_eal_init(int argc, char **argv)
{
	int ret;

	if (eal_ready)
		return netload_fail(NETLOAD_ESTATE, "EAL already initialised in this process");
	netload_log_tap_start();
	ret = rte_eal_init(argc, argv);
	netload_log_tap_stop();
	if (ret < 0)
		return netload_fail(NETLOAD_EEAL, "rte_eal_init failed: %s%s%s",
				rte_strerror(rte_errno), tap_len ? "; DPDK said: " : "",
				netload_log_tap_text());
	netload_logtype = rte_log_register_type_and_pick_level("netload", RTE_LOG_INFO);
	if (netload_logtype < 0)
		netload_logtype = RTE_LOGTYPE_USER1;
	eal_ready = 1;
	NETLOAD_LOG(INFO, "EAL ready: %u worker lcores, TSC %" PRIu64 " Hz\n",
			rte_lcore_count() - 1, rte_get_tsc_hz());
	return 0;
}

int
netload_eal_cleanup(void)
{
	if (!eal_ready)
		return 0;
	eal_ready = 0;
	if (rte_eal_cleanup() != 0)
		return netload_fail(NETLOAD_EEAL, "rte_eal_cleanup failed: %s",
				rte_strerror(rte_errno));
	return 0;
}

unsigned int
netload_worker_count(void)
{
	return eal_ready ? rte_lcore_count() - 1 : 0;
}

/* CPU of the main lcore, then of each worker lcore; returns how many. */
int
netload_lcore_cpus(int32_t *cpus, uint32_t n)
{
	unsigned int lcore;
	uint32_t i = 0;

	if (!eal_ready)
		return netload_fail(NETLOAD_ESTATE, "lcore_cpus: the EAL is not running");
	if (n == 0 || cpus == NULL)
		return netload_fail(NETLOAD_EINVAL, "lcore_cpus: no room");
	cpus[i++] = rte_lcore_to_cpu_id(rte_get_main_lcore());
	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (i == n)
			break;
		cpus[i++] = rte_lcore_to_cpu_id(lcore);
	}
	return (int)i;
}

uint64_t
netload_tsc_hz(void)
{
	return rte_get_tsc_hz();
}

uint64_t
netload_tsc_now(void)
{
	return rte_rdtsc();
}

int
netload_time_scale(uint64_t value, uint64_t mul, uint64_t div, uint64_t *out)
{
	if (out == NULL)
		return netload_fail(NETLOAD_EINVAL, "time_scale: NULL result");
	if (netload_scale(value, mul, div, out) < 0)
		return netload_fail(NETLOAD_EINVAL, "time_scale: %" PRIu64 " * %" PRIu64 " / %"
				PRIu64 " does not fit 64 bits", value, mul, div);
	return 0;
}
