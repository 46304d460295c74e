/*
 * pool.c — the mbuf pools TX frames are built in, and the engine's memory.
 *
 * Streams share pools: one per NUMA socket and data-room class (frame sizes
 * rounded up to a power of two from 128 bytes, then the jumbo maximum),
 * counted by the frames that use them and freed with the last. So 10,000
 * streams cost their templates, not 10,000 pools of 8,191 mbufs.
 *
 * Each mbuf carries in a dynamic field the serial of the frame template it
 * holds; serials are unique for the engine's lifetime (never reused, so a
 * freed stream's template never passes for a new one's). fill.c copies the
 * template only when the serial differs: one stream keeps the pre-filled
 * speed (its mbufs come back holding its own template), many streams pay a
 * copy of the frame. A dynamic field, not the mbuf's private area: it sits
 * in the mbuf's second cache line, which allocation touches anyway, where the
 * private area would add a third line per packet.
 *
 * A stream may still ask for private pools (pool_mbufs): pre-filled once,
 * tagged with its serial, as before sharing.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_mbuf_dyn.h>
#include <rte_memory.h>

#include "internal.h"

int netload_tmpl_offset = -1;

/* Data-room classes: 128 .. 8192 bytes by powers of two, then the jumbo maximum. */
#define N_CLASSES 8
#define JUMBO_ROOM RTE_ALIGN_CEIL(NETLOAD_MAX_FRAME_BYTES, 64)

struct shared_pool {
	struct rte_mempool *mp;
	uint32_t refs;            /* frames that use it */
};

static struct shared_pool shared[RTE_MAX_NUMA_NODES][N_CLASSES];
static uint64_t next_serial = 1;    /* 0: an mbuf that holds no template */
static uint32_t private_pools;

static uint32_t
room_class(uint16_t len, uint32_t *room)
{
	uint32_t c = 0, r = 128;

	while (r < len && c < N_CLASSES - 2) {
		r <<= 1;
		c++;
	}
	if (r < len) {
		r = JUMBO_ROOM;
		c = N_CLASSES - 1;
	}
	*room = r;
	return c;
}

/*
 * Mbufs of a shared pool: enough that ports and workers at line rate never
 * find it empty: every TX queue's descriptors (1,024 by default, a ring
 * vdev's frames in flight as many again), the per-lcore caches (up to 1.5
 * times their 256 each) and the bursts refused and held. Larger rooms get
 * fewer, so that a jumbo class stays under 100 MB.
 */
uint32_t
netload_pool_shared_mbufs(uint16_t len)
{
	uint32_t room;

	room_class(len, &room);
	return room <= 2048 ? 32767 : room <= 4096 ? 16383 : 8191;
}

static int
register_tag(void)
{
	static const struct rte_mbuf_dynfield desc = {
		.name = "netload_tmpl_serial",
		.size = sizeof(uint64_t),
		.align = __alignof__(uint64_t),
	};

	if (netload_tmpl_offset >= 0)
		return 0;
	netload_tmpl_offset = rte_mbuf_dynfield_register(&desc);
	if (netload_tmpl_offset < 0)
		return netload_fail(NETLOAD_ENOMEM,
				"stream: no room for the template tag in the mbuf's dynamic "
				"fields: %s", rte_strerror(rte_errno));
	return 0;
}

struct tag_arg {
	const uint8_t *tmpl;
	uint16_t len;
	uint64_t serial;
};

static void
prefill(struct rte_mempool *mp, void *opaque, void *obj, unsigned int idx)
{
	const struct tag_arg *ta = opaque;
	struct rte_mbuf *m = obj;

	RTE_SET_USED(mp);
	RTE_SET_USED(idx);
	memcpy((uint8_t *)m->buf_addr + m->data_off, ta->tmpl, ta->len);
	*netload_mbuf_tmpl(m) = ta->serial;
}

int
netload_pool_attach(struct netload_frame *fr, uint16_t stream_id, uint32_t index,
		int socket, uint32_t private_mbufs)
{
	char name[RTE_MEMPOOL_NAMESIZE];
	struct shared_pool *sp;
	uint32_t room, c, mbufs;
	int ret;

	ret = register_tag();
	if (ret < 0)
		return ret;
	fr->serial = next_serial++;
	c = room_class(fr->len, &room);
	if (private_mbufs) {
		struct tag_arg ta = { fr->data, fr->len, fr->serial };

		/* by serial: a retired pool of an earlier stream may still hold its name */
		snprintf(name, sizeof(name), "nls%" PRIu64, fr->serial);
		RTE_SET_USED(stream_id);
		RTE_SET_USED(index);
		/* DPDK refuses a cache above 2/3 of the pool: small pools get a smaller one. */
		fr->pool = rte_pktmbuf_pool_create(name, private_mbufs,
				RTE_MIN((uint32_t)NETLOAD_POOL_CACHE, private_mbufs * 2 / 3), 0,
				RTE_PKTMBUF_HEADROOM + RTE_ALIGN_CEIL(fr->len, 64), socket);
		if (fr->pool == NULL)
			return netload_fail(NETLOAD_ENOMEM,
					"stream: private pool of %u mbufs for the %u-byte frame: "
					"%s; give the engine more memory, or pool_mbufs=0 to "
					"share the engine's pools", private_mbufs, fr->len,
					rte_strerror(rte_errno));
		rte_mempool_obj_iter(fr->pool, prefill, &ta);
		fr->private_pool = 1;
		private_pools++;
		return 0;
	}
	if (socket < 0 || socket >= RTE_MAX_NUMA_NODES)
		socket = 0;
	sp = &shared[socket][c];
	if (sp->mp == NULL) {
		mbufs = netload_pool_shared_mbufs(fr->len);
		snprintf(name, sizeof(name), "nlsh%d_%u", socket, room);
		sp->mp = rte_pktmbuf_pool_create(name, mbufs, NETLOAD_POOL_CACHE, 0,
				RTE_PKTMBUF_HEADROOM + room, socket);
		if (sp->mp == NULL)
			return netload_fail(NETLOAD_ENOMEM,
					"stream: shared pool of %u mbufs of %u bytes on socket "
					"%d: %s; give the engine more memory (memory_mb)",
					mbufs, room, socket, rte_strerror(rte_errno));
	}
	sp->refs++;
	fr->pool = sp->mp;
	fr->private_pool = 0;
	return 0;
}

/*
 * A pool is freed only when every one of its mbufs is back in it. A port may
 * still hold some after the last frame that used the pool was freed: PMDs free
 * sent mbufs lazily (virtio at its next transmit, NICs past a threshold), so
 * freeing the pool then would hand its memory to the next pool while the port
 * still points into it, and its late frees would corrupt that pool's mbufs
 * (frames sent twice, sequence numbers overwritten). First the ports are asked
 * to give back what they sent (between runs only); a shared pool that is still
 * not full stays for the next stream of its class, a private one waits in
 * `retired` and is freed once full, at the latest when the ports close.
 */
#define MAX_RETIRED 256
static struct rte_mempool *retired[MAX_RETIRED];

/* How the ports give back what they sent: port.c's, set at its first open (the
 * ports sit above the pools, so the pools ask through this pointer). */
static void (*reclaim_sent)(void);

void
netload_pool_set_reclaim(void (*reclaim)(void))
{
	reclaim_sent = reclaim;
}

void
netload_pool_collect(void)
{
	uint32_t i, s, c;

	if (reclaim_sent != NULL)
		reclaim_sent();
	for (i = 0; i < MAX_RETIRED; i++)
		if (retired[i] != NULL && rte_mempool_full(retired[i])) {
			rte_mempool_free(retired[i]);
			retired[i] = NULL;
		}
	for (s = 0; s < RTE_MAX_NUMA_NODES; s++)
		for (c = 0; c < N_CLASSES; c++) {
			struct shared_pool *sp = &shared[s][c];

			if (sp->mp != NULL && sp->refs == 0 && rte_mempool_full(sp->mp)) {
				rte_mempool_free(sp->mp);
				sp->mp = NULL;
			}
		}
}

static void
retire(struct rte_mempool *mp)
{
	uint32_t i;

	netload_pool_collect();
	if (rte_mempool_full(mp)) {
		rte_mempool_free(mp);
		return;
	}
	for (i = 0; i < MAX_RETIRED; i++)
		if (retired[i] == NULL) {
			retired[i] = mp;
			return;
		}
	/* no room: the pool stays allocated (memory, never a use after free) */
	NETLOAD_LOG(WARNING, "pool %s kept: a port still holds %u of its mbufs\n",
			mp->name, mp->size - rte_mempool_avail_count(mp));
}

void
netload_pool_detach(struct netload_frame *fr)
{
	uint32_t s, c;

	if (fr->pool == NULL)
		return;
	if (fr->private_pool) {
		retire(fr->pool);
		private_pools--;
		fr->pool = NULL;
		return;
	}
	for (s = 0; s < RTE_MAX_NUMA_NODES; s++)
		for (c = 0; c < N_CLASSES; c++) {
			struct shared_pool *sp = &shared[s][c];

			if (sp->mp != fr->pool)
				continue;
			if (--sp->refs == 0)
				netload_pool_collect();  /* freed when full, else kept for the next */
			fr->pool = NULL;
			return;
		}
}

int
netload_mem_stats(struct netload_mem_stats *st)
{
	uint32_t s, c;

	if (st == NULL)
		return netload_fail(NETLOAD_EINVAL, "memory stats: NULL");
	memset(st, 0, sizeof(*st));
	for (s = 0; s < RTE_MAX_NUMA_NODES; s++) {
		struct rte_malloc_socket_stats ms;

		if (rte_malloc_get_socket_stats((int)s, &ms) == 0) {
			st->heap_bytes += ms.heap_totalsz_bytes;
			st->heap_used_bytes += ms.heap_allocsz_bytes;
			if (ms.greatest_free_size > st->heap_largest_free_bytes)
				st->heap_largest_free_bytes = ms.greatest_free_size;
		}
		for (c = 0; c < N_CLASSES; c++) {
			const struct rte_mempool *mp = shared[s][c].mp;

			if (mp == NULL)
				continue;
			st->shared_pools++;
			st->shared_pool_mbufs += mp->size;
			st->shared_pool_bytes += (uint64_t)mp->size *
				(mp->header_size + mp->elt_size + mp->trailer_size);
		}
	}
	st->private_pools = private_pools;
	st->template_serials = next_serial - 1;
	return 0;
}
