/*
 * rx_expect.c — expected frames: a stream of a run may carry an RX expectation
 * (struct netload_expect_conf: up to NETLOAD_EXPECT_RULES rules of value and
 * mask over the frame's first NETLOAD_EXPECT_BYTES), and each of its frames is
 * compared to them right after the RX classifier has read the burst's trailers
 * (rx.c netload_rx_burst), while the mbufs are at hand: the deferred accounting
 * pass (rx_account.c) needs nothing of them, and a run without expectations
 * pays one test a burst. Per stream and RX queue: frames per first matching
 * rule, unmatched frames, and the first NETLOAD_EXPECT_KEEP unmatched frames'
 * first bytes for a diff.
 */
#include <string.h>

#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "run.h"

/* A stream's rules as the run holds them: values masked, the span of each. */
static int
load_rules(struct rx_expect *e, const struct netload_expect_conf *c, uint32_t index)
{
	uint32_t r, k;

	if (c->n_rules == 0 || c->n_rules > NETLOAD_EXPECT_RULES)
		return netload_fail(NETLOAD_EINVAL, "run: TX entry %u expects frames with %u "
				"rules; give 1 to %d", index, c->n_rules, NETLOAD_EXPECT_RULES);
	e->n_rules = c->n_rules;
	e->bytes = 0;
	for (r = 0; r < c->n_rules; r++) {
		const struct netload_expect_rule *in = &c->rules[r];
		struct rx_expect_rule *out = &e->rules[r];
		uint8_t value[NETLOAD_EXPECT_BYTES];

		out->need = 0;
		for (k = 0; k < NETLOAD_EXPECT_BYTES; k++) {
			value[k] = in->value[k] & in->mask[k];
			if (in->mask[k] != 0)
				out->need = k + 1;
		}
		memcpy(out->value, value, sizeof(out->value));
		memcpy(out->mask, in->mask, sizeof(out->mask));
		out->words = (out->need + 7) / 8;
		e->bytes = RTE_MAX(e->bytes, out->words * 8);
	}
	return 0;
}

/* The run's expectations (before its RX tasks, which size their counters on them). */
int
netload_expect_init(struct netload_run *run, const struct netload_run_conf *c)
{
	uint32_t i, n = 0;
	int ret;

	RTE_BUILD_BUG_ON(NETLOAD_EXPECT_BYTES % 8 != 0);
	RTE_BUILD_BUG_ON(sizeof(((struct netload_expect_rule *)0)->value) != NETLOAD_EXPECT_BYTES);
	RTE_BUILD_BUG_ON(sizeof(((struct netload_expect_conf *)0)->rules) !=
			NETLOAD_EXPECT_RULES * sizeof(struct netload_expect_rule));
	RTE_BUILD_BUG_ON(sizeof(((struct netload_expect_stats *)0)->kept) !=
			NETLOAD_EXPECT_KEEP * NETLOAD_EXPECT_BYTES);
	for (i = 0; i < c->n_tx; i++)
		n += c->tx[i].expect != NULL;
	run->n_expect = 0;
	if (n == 0)
		return 0;
	run->expect_of = rte_malloc("netload_expect", sizeof(uint16_t) * c->n_tx, 0);
	run->expect = rte_zmalloc("netload_expect", sizeof(struct rx_expect) * n,
			RTE_CACHE_LINE_SIZE);
	if (run->expect_of == NULL || run->expect == NULL)
		return netload_fail(NETLOAD_ENOMEM, "run: expected frames of %u streams", n);
	n = 0;
	for (i = 0; i < c->n_tx; i++) {
		run->expect_of[i] = NETLOAD_NO_SLOT;
		if (c->tx[i].expect == NULL)
			continue;
		ret = load_rules(&run->expect[n], c->tx[i].expect, i);
		if (ret < 0)
			return ret;
		run->expect_of[i] = (uint16_t)n++;
	}
	run->n_expect = n;
	return 0;
}

/* An RX queue's counters of the run's expectations (netload_rx_task_free frees them). */
int
netload_expect_task_init(const struct netload_run *run, struct rx_task *t)
{
	if (run->n_expect == 0)
		return 0;
	t->expect = rte_zmalloc("netload_expect_rx",
			sizeof(struct rx_expect_state) * run->n_expect, RTE_CACHE_LINE_SIZE);
	if (t->expect == NULL)
		return netload_fail(NETLOAD_ENOMEM, "run: expected-frame counters of %u streams "
				"on RX queue %u of port %u", run->n_expect, t->queue, t->port_id);
	return 0;
}

void
netload_expect_free(struct netload_run *run)
{
	rte_free(run->expect_of);
	rte_free(run->expect);
	run->expect_of = NULL;
	run->expect = NULL;
	run->n_expect = 0;
}

/* The first bytes of an unmatched frame, for the host's diff. */
static void
keep(struct rx_expect_state *s, const struct rte_mbuf *m, uint32_t seq)
{
	uint32_t k = s->n_kept++, n = RTE_MIN(m->pkt_len, (uint32_t)NETLOAD_EXPECT_BYTES);
	const void *p = rte_pktmbuf_read(m, 0, n, s->kept[k]);

	if (p != NULL && p != s->kept[k])
		memcpy(s->kept[k], p, n);
	s->kept_len[k] = m->pkt_len;
	s->kept_seq[k] = seq;
}

/*
 * Frame m of the run's expectation x (a signed frame of a stream that has one,
 * at least 14 bytes before its trailer) on RX queue t: counted for the first
 * rule it matches, or kept as unmatched. Only the bytes before the trailer are
 * compared; a rule that reaches past them does not match. The words are read in
 * place where the first segment holds every word a rule reads (a rule's last
 * word ends at most 7 bytes past its last masked byte, before the trailer's
 * end; its bytes there are masked out), else from a copy.
 */
static void
expect_frame(const struct netload_run *run, struct rx_task *t, const struct rte_mbuf *m,
		uint32_t x, uint32_t seq)
{
	const struct rx_expect *e = &run->expect[x];
	struct rx_expect_state *s = &t->expect[x];
	uint64_t buf[NETLOAD_EXPECT_WORDS];
	uint32_t body = m->pkt_len - NETLOAD_SIGNATURE_BYTES, r, w;
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);

	if (unlikely(m->data_len < e->bytes)) {
		/* Several segments, or a frame shorter than the rules: a zero-padded copy. */
		uint32_t n = RTE_MIN(body, e->bytes);
		const void *q;

		memset(buf, 0, sizeof(buf));
		q = rte_pktmbuf_read(m, 0, n, buf);
		if (q != NULL && q != (const void *)buf)
			memcpy(buf, q, n);
		p = (const uint8_t *)buf;
	}
	for (r = 0; r < e->n_rules; r++) {
		const struct rx_expect_rule *rule = &e->rules[r];

		if (rule->need > body)
			continue;
		for (w = 0; w < rule->words; w++) {
			uint64_t word;

			memcpy(&word, p + 8 * w, sizeof(word));
			if ((word & rule->mask[w]) != rule->value[w])
				break;
		}
		if (w == rule->words) {
			s->matched[r]++;
			return;
		}
	}
	s->unmatched++;
	if (s->n_kept < NETLOAD_EXPECT_KEEP)
		keep(s, m, seq);
}

/* The frames of one burst, classified into runs f[0..n_runs) (rx.c), each of a stream
 * with an expectation compared: bufs[k] is the k-th frame of the runs in turn. */
void
netload_expect_burst(const struct netload_run *run, struct rx_task *t,
		struct rte_mbuf *const *bufs, const struct rx_frame *f, uint16_t n_runs)
{
	uint16_t i, j, k = 0;

	for (i = 0; i < n_runs; k += f[i].n, i++) {
		uint16_t x;

		if (f[i].slot == NETLOAD_NO_SLOT)
			continue;
		x = run->expect_of[f[i].slot];
		if (x != NETLOAD_NO_SLOT)
			for (j = 0; j < f[i].n; j++)
				expect_frame(run, t, bufs[k + j], x, f[i].seq + j);
	}
}
