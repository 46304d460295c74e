/*
 * conf.c — a run's configuration checked and loaded before any worker starts:
 * the bounds of every count and duration, each stream's pacing phases in
 * fixed-point cycles, the delay lines, and which worker lcore owns which task.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "run.h"

/* Delay lines: FIFOs, jitter in cycles, the loss threshold on a 64-bit random. */
int
netload_run_load_forwarders(struct netload_run *run, const struct netload_run_conf *c)
{
	uint32_t i, k;

	if (c->n_fwd == 0)
		return 0;
	if (c->fwd == NULL)
		return netload_fail(NETLOAD_EINVAL, "run: %u forwarders but no table", c->n_fwd);
	run->fwd = rte_zmalloc("netload_fwd", sizeof(*run->fwd) * c->n_fwd, RTE_CACHE_LINE_SIZE);
	if (run->fwd == NULL)
		return netload_fail(NETLOAD_ENOMEM, "run: forwarders");
	run->n_fwd = c->n_fwd;
	for (i = 0; i < c->n_fwd; i++) {
		const struct netload_fwd_conf *fc = &c->fwd[i];
		struct fwd_task *f = &run->fwd[i];

		if (!netload_port_is_open(fc->rx_port) || !netload_port_is_open(fc->tx_port))
			return netload_fail(NETLOAD_ENODEV, "run: forwarder %u: port %u or %u is not open",
					i, fc->rx_port, fc->tx_port);
		for (k = 0; k < c->n_rx; k++)
			if (c->rx[k].port_id == fc->rx_port && c->rx[k].queue == fc->rx_queue)
				return netload_fail(NETLOAD_EINVAL,
						"run: port %u queue %u is both an RX queue and forwarder "
						"%u's input; a queue has one reader", fc->rx_port,
						fc->rx_queue, i);
		if (fc->loss_ppm > 1000000)
			return netload_fail(NETLOAD_EINVAL,
					"run: forwarder %u: loss %u ppm; give 0 to 1000000", i,
					fc->loss_ppm);
		if (fc->n_jitter > NETLOAD_MAX_GAPS || (fc->n_jitter && fc->jitter_ps == NULL))
			return netload_fail(NETLOAD_EINVAL, "run: forwarder %u: %u jitter entries",
					i, fc->n_jitter);
		f->rx_port = fc->rx_port;
		f->rx_queue = fc->rx_queue;
		f->tx_port = fc->tx_port;
		f->tx_queue = fc->tx_queue;
		if (fc->delay_ns > NETLOAD_MAX_RUN_NS)
			return netload_fail(NETLOAD_EINVAL, "run: forwarder %u: delay %" PRIu64
					" ns; at most %d s", i, fc->delay_ns, NETLOAD_MAX_RUN_S);
		netload_scale(fc->delay_ns, run->hz, NETLOAD_NS_PER_S, &f->delay);
		f->loss_threshold = fc->loss_ppm == 1000000 ? UINT64_MAX :
			(uint64_t)((double)fc->loss_ppm / 1e6 * 18446744073709551616.0);
		f->rng = fc->seed ? fc->seed : rte_rdtsc() | 1;
		f->slots = rte_zmalloc("netload_fwd_slots",
				sizeof(*f->slots) * NETLOAD_FWD_SLOTS, RTE_CACHE_LINE_SIZE);
		f->release = rte_malloc("netload_fwd_release",
				sizeof(*f->release) * NETLOAD_FWD_SLOTS, RTE_CACHE_LINE_SIZE);
		if (f->slots == NULL || f->release == NULL)
			return netload_fail(NETLOAD_ENOMEM, "run: forwarder %u line", i);
		if (fc->n_jitter) {
			f->jitter = rte_malloc("netload_fwd_jitter", sizeof(uint64_t) * fc->n_jitter, 0);
			if (f->jitter == NULL)
				return netload_fail(NETLOAD_ENOMEM, "run: forwarder %u jitter", i);
			for (k = 0; k < fc->n_jitter; k++)
				if (fc->jitter_ps[k] > NETLOAD_MAX_RUN_NS * 1000 || netload_scale(
						fc->jitter_ps[k], run->hz, NETLOAD_NS_PER_S * 1000,
						&f->jitter[k]) < 0)
					return netload_fail(NETLOAD_EINVAL, "run: forwarder %u: jitter "
							"entry %u is %" PRIu64 " ps; at most %d s", i, k,
							fc->jitter_ps[k], NETLOAD_MAX_RUN_S);
			f->n_jitter = fc->n_jitter;
		}
	}
	return 0;
}

/*
 * Gap tables in picoseconds -> TSC cycles << NETLOAD_FP_SHIFT, phase ends
 * relative to the start. Each gap's rounding remainder is carried into the
 * next, so a table's deadlines add up to its period within one fixed-point
 * unit, and the mean rate does not drift over a 24 h run.
 */
int
netload_run_load_phases(struct netload_run *run, struct tx_task *t, const struct netload_tx_conf *c,
		uint32_t index)
{
	const uint64_t fp_hz = run->hz << NETLOAD_FP_SHIFT;
	const uint64_t ps_per_s = NETLOAD_NS_PER_S * 1000;
	uint64_t end_ns = 0, end_fp, sum;
	uint32_t p, k;

	if (c->n_phases == 0) {
		if (c->start_ns)
			return netload_fail(NETLOAD_EINVAL, "run: TX entry %u starts %" PRIu64
					" ns late but is not paced; give it a pacing phase",
					index, c->start_ns);
		return 0;
	}
	if (c->start_ns > NETLOAD_MAX_RUN_NS ||
			netload_scale(c->start_ns, fp_hz, NETLOAD_NS_PER_S, &t->next_fp) < 0)
		return netload_fail(NETLOAD_EINVAL, "run: TX entry %u starts %" PRIu64 " ns after "
				"the start; at most %d s (24 h)", index, c->start_ns,
				NETLOAD_MAX_RUN_S);
	if (c->n_phases > NETLOAD_MAX_PHASES || c->phases == NULL)
		return netload_fail(NETLOAD_EINVAL, "run: TX entry %u has %u phases; give 1 to %d",
				index, c->n_phases, NETLOAD_MAX_PHASES);
	t->phases = rte_zmalloc("netload_phases", sizeof(*t->phases) * c->n_phases, 0);
	if (t->phases == NULL)
		return netload_fail(NETLOAD_ENOMEM, "run: phases of TX entry %u", index);
	t->n_phases = c->n_phases;
	for (p = 0; p < c->n_phases; p++) {
		const struct netload_phase_conf *pc = &c->phases[p];
		struct tx_phase *ph = &t->phases[p];

		if (pc->n_gaps > NETLOAD_MAX_GAPS || (pc->n_gaps && pc->gaps_ps == NULL))
			return netload_fail(NETLOAD_EINVAL,
					"run: TX entry %u phase %u has %u gaps; at most %d",
					index, p, pc->n_gaps, NETLOAD_MAX_GAPS);
		if (pc->duration_ns == 0 && p + 1 < c->n_phases)
			return netload_fail(NETLOAD_EINVAL,
					"run: TX entry %u phase %u has no duration, but phases follow it",
					index, p);
		if (pc->duration_ns) {
			end_ns += pc->duration_ns;
			if (pc->duration_ns > NETLOAD_MAX_RUN_NS || end_ns > NETLOAD_MAX_RUN_NS ||
					netload_scale(end_ns, fp_hz, NETLOAD_NS_PER_S, &end_fp) < 0)
				return netload_fail(NETLOAD_EINVAL, "run: TX entry %u: its phases "
						"up to phase %u last more than %d s (24 h); give shorter "
						"phases", index, p, NETLOAD_MAX_RUN_S);
			ph->end_fp = end_fp;
		}
		ph->n_gaps = pc->n_gaps;
		if (pc->n_gaps == 0)
			continue;
		ph->gaps_fp = rte_malloc("netload_gaps", sizeof(uint64_t) * pc->n_gaps, 0);
		if (ph->gaps_fp == NULL)
			return netload_fail(NETLOAD_ENOMEM, "run: gap table of %u entries", pc->n_gaps);
		{
			unsigned __int128 carry = 0, x;

			sum = 0;
			for (k = 0; k < pc->n_gaps; k++) {
				if (pc->gaps_ps[k] == 0 || pc->gaps_ps[k] > NETLOAD_MAX_RUN_NS * 1000)
					return netload_fail(NETLOAD_EINVAL,
							"run: TX entry %u phase %u gap %u is %" PRIu64
							" ps; give 1 ps to %d s (a phase without gaps "
							"sends at the maximum rate)", index, p, k,
							pc->gaps_ps[k], NETLOAD_MAX_RUN_S);
				x = (unsigned __int128)pc->gaps_ps[k] * fp_hz + carry;
				ph->gaps_fp[k] = (uint64_t)(x / ps_per_s);
				carry = x % ps_per_s;
				if (ph->gaps_fp[k] == 0)
					ph->gaps_fp[k] = 1;
				sum += ph->gaps_fp[k];
			}
			ph->mean_gap_fp = sum / pc->n_gaps;
		}
	}
	return 0;
}

int
netload_run_check_conf(const struct netload_run_conf *c)
{
	uint8_t seen[NETLOAD_MAX_STREAMS / 8] = {0};  /* stream ids listed so far */
	uint32_t i, j;

	if (c->n_tx == 0 && c->n_rx == 0 && c->n_fwd == 0)
		return netload_fail(NETLOAD_EINVAL, "run: no TX stream, RX queue or forwarder");
	if (c->duration_ns > NETLOAD_MAX_RUN_NS || c->drain_ns > NETLOAD_MAX_RUN_NS ||
			c->start_delay_ns > NETLOAD_MAX_RUN_NS)
		return netload_fail(NETLOAD_EINVAL, "run: duration %" PRIu64 " ns, drain %" PRIu64
				" ns, start delay %" PRIu64 " ns; each at most %d s (24 h)",
				c->duration_ns, c->drain_ns, c->start_delay_ns, NETLOAD_MAX_RUN_S);
	if (c->burst > NETLOAD_MAX_BURST)
		return netload_fail(NETLOAD_EINVAL, "run: burst %u; at most %d",
				c->burst, NETLOAD_MAX_BURST);
	if (c->n_tx > NETLOAD_MAX_STREAMS)
		return netload_fail(NETLOAD_EINVAL,
				"run: %u TX entries; at most %d streams in one run: split them "
				"over several runs or engines", c->n_tx, NETLOAD_MAX_STREAMS);
	if (c->duration_ns == 0)
		for (i = 0; i < c->n_tx; i++)
			if (c->tx[i].count == 0 && !c->tx[i].expect_only &&
					(c->tx[i].n_phases == 0 || c->tx[i].phases == NULL ||
					 c->tx[i].phases[c->tx[i].n_phases - 1].duration_ns == 0))
				return netload_fail(NETLOAD_EINVAL,
						"run: TX entry %u has no count and the run no "
						"duration; give one of them", i);
	for (i = 0; i < c->n_tx; i++) {
		const struct netload_stream *s = c->tx[i].stream;

		if (s == NULL || netload_stream_by_id(s->id) != s)
			return netload_fail(NETLOAD_EINVAL, "run: TX entry %u has no live stream", i);
		if (!netload_port_is_open(s->port_id))
			return netload_fail(NETLOAD_ENODEV, "run: TX entry %u: port %u is closed",
					i, s->port_id);
		if (seen[s->id / 8] & (1u << (s->id % 8))) {
			for (j = 0; j < i && c->tx[j].stream != s; j++)
				;
			return netload_fail(NETLOAD_EINVAL,
					"run: stream %u is listed twice (entries %u and %u)",
					s->id, j, i);
		}
		seen[s->id / 8] |= 1u << (s->id % 8);
	}
	for (i = 0; i < c->n_rx; i++) {
		if (!netload_port_is_open(c->rx[i].port_id))
			return netload_fail(NETLOAD_ENODEV, "run: RX entry %u: port %u is not open",
					i, c->rx[i].port_id);
		for (j = 0; j < i; j++)
			if (c->rx[j].port_id == c->rx[i].port_id &&
					c->rx[j].queue == c->rx[i].queue)
				return netload_fail(NETLOAD_EINVAL,
						"run: RX port %u queue %u is listed twice",
						c->rx[i].port_id, c->rx[i].queue);
	}
	return 0;
}

/* Queue-owning tasks go to workers round-robin; a TX queue stays on one worker. */
/*
 * Who sends a port's ARP/ND replies in this run: the worker of a TX task on the
 * port (its queue), else of a forwarder sending on it, else of the port's first
 * RX task (queue 0, which nothing else sends on then). One owner per port, so
 * a TX queue is only ever used by one thread.
 */
static void
assign_replies(struct netload_run *run)
{
	uint8_t done[RTE_MAX_ETHPORTS] = { 0 };
	uint32_t i, k, j;

	for (i = 0; i < run->n_rx; i++) {
		uint16_t p = run->rx[i].port_id;
		struct worker *owner = NULL;
		uint16_t queue = 0;

		if (done[p] || netload_nd_ports[p] == NULL)
			continue;
		done[p] = 1;
		for (k = 0; k < run->n_workers && owner == NULL; k++)
			for (j = 0; j < run->workers[k].n_tx && owner == NULL; j++)
				if (run->tx[run->workers[k].tx[j]].port_id == p) {
					owner = &run->workers[k];
					queue = run->tx[run->workers[k].tx[j]].queue;
				}
		for (k = 0; k < run->n_workers && owner == NULL; k++)
			for (j = 0; j < run->workers[k].n_fwd && owner == NULL; j++)
				if (run->fwd[run->workers[k].fwd[j]].tx_port == p) {
					owner = &run->workers[k];
					queue = run->fwd[run->workers[k].fwd[j]].tx_queue;
				}
		for (k = 0; k < run->n_workers && owner == NULL; k++)
			for (j = 0; j < run->workers[k].n_rx && owner == NULL; j++)
				if (run->workers[k].rx[j] == i)
					owner = &run->workers[k];
		if (owner == NULL)
			continue;
		owner->ctl_port[owner->n_ctl] = p;
		owner->ctl_queue[owner->n_ctl++] = queue;
	}
}

int
netload_run_assign(struct netload_run *run, unsigned int n_lcores)
{
	uint32_t i, j, n_tasks = 0, k = 0;
	uint32_t *tx_worker;
	unsigned int lcore;

	tx_worker = calloc(run->n_tx ? run->n_tx : 1, sizeof(*tx_worker));
	if (tx_worker == NULL)
		return netload_fail(NETLOAD_ENOMEM, "run: worker table");
	for (i = 0; i < run->n_tx; i++) {
		if (run->tx[i].done)
			continue;
		for (j = 0; j < i; j++)
			if (!run->tx[j].done && run->tx[j].port_id == run->tx[i].port_id &&
					run->tx[j].queue == run->tx[i].queue)
				break;
		tx_worker[i] = j < i ? tx_worker[j] : n_tasks++;
	}
	n_tasks += run->n_rx + run->n_fwd;
	run->n_workers = RTE_MIN(n_lcores, n_tasks);
	run->workers = rte_zmalloc("netload_workers", sizeof(struct worker) * run->n_workers,
			RTE_CACHE_LINE_SIZE);
	if (run->workers == NULL) {
		free(tx_worker);
		return netload_fail(NETLOAD_ENOMEM, "run: workers");
	}
	i = 0;
	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (i == run->n_workers)
			break;
		run->workers[i].lcore = lcore;
		run->workers[i].tx = rte_zmalloc(NULL, sizeof(uint32_t) * (run->n_tx + 1), 0);
		run->workers[i].rx = rte_zmalloc(NULL, sizeof(uint32_t) * (run->n_rx + 1), 0);
		run->workers[i].fwd = rte_zmalloc(NULL, sizeof(uint32_t) * (run->n_fwd + 1), 0);
		if (run->workers[i].tx == NULL || run->workers[i].rx == NULL ||
				run->workers[i].fwd == NULL) {
			free(tx_worker);
			return netload_fail(NETLOAD_ENOMEM, "run: worker task lists");
		}
		i++;
	}
	for (i = 0; i < run->n_tx; i++) {
		struct worker *w = &run->workers[tx_worker[i] % run->n_workers];

		if (run->tx[i].done)
			continue;
		w->tx[w->n_tx++] = i;
		k = tx_worker[i] + 1 > k ? tx_worker[i] + 1 : k;
	}
	for (i = 0; i < run->n_rx; i++) {
		struct worker *w = &run->workers[(k + i) % run->n_workers];

		w->rx[w->n_rx++] = i;
	}
	for (i = 0; i < run->n_fwd; i++) {
		struct worker *w = &run->workers[(k + run->n_rx + i) % run->n_workers];

		w->fwd[w->n_fwd++] = i;
	}
	for (i = 0; i < run->n_workers; i++)
		if (run->workers[i].n_tx)
			__atomic_add_fetch(&run->tx_running, 1, __ATOMIC_RELAXED);
	free(tx_worker);
	assign_replies(run);
	return 0;
}

