/* eal.c — library-wide state: errors, logging, EAL start and stop, clocks. */
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
	if (rte_openlog_stream(f) != 0) {
		fclose(f);
		return netload_fail(NETLOAD_EINVAL, "rte_openlog_stream refused %s", path);
	}
	if (log_stream != NULL)
		fclose(log_stream);
	log_stream = f;
	return 0;
}

int
netload_eal_init(int argc, char **argv)
{
	int ret;

	if (eal_ready)
		return netload_fail(NETLOAD_ESTATE, "EAL already initialised in this process");
	ret = rte_eal_init(argc, argv);
	if (ret < 0)
		return netload_fail(NETLOAD_EEAL, "rte_eal_init failed: %s",
				rte_strerror(rte_errno));
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
