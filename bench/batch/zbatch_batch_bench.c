// SPDX-License-Identifier: GPL-2.0
/*
 * Batch benchmark module (make bench; once on tiny inputs in make check):
 * what a user runs today, the stock crypto API one page at a time
 * (crypto_acomp_{,de}compress() + crypto_wait_req(), as zswap calls it),
 * against zbatch batches of 1..32 through the in-kernel API, on the same
 * pages, per codec, operation and sync mode, rounds alternating which side
 * goes first. Beside wall time, CPU time: this thread's plus every zbatch
 * engine thread's, so work moved to other CPUs is never a saving. Every
 * crypto API transform and request is allocated once, before any timed
 * pass (zswap keeps them per CPU): a pass times calls, not allocations.
 * The parallel ceiling of the machine is measured in every round, beside
 * what it bounds: the stock pass on two CPUs at once (a transform each)
 * against one.
 *
 * Each side decompresses what it compressed itself; deflate differs in
 * window only: stock raw deflate level 6 (Z_DEFAULT_COMPRESSION), memLevel
 * 9, 2 KiB window (crypto/deflate.c); zbatch level 6, memLevel 9, 4 KiB
 * window (IAA's limit).
 *
 * Results in debugfs zbatch_batch_bench/results, one record per line:
 *   ceiling CODEC OP MEDIAN MIN MAX               (x, of 2 CPUs)
 *   stock CODEC OP WALL_NS CPU_NS                 (per page, medians)
 *   zbatch CODEC OP MODE BATCH WALL_NS CPU_NS SPEEDUP SMIN SMAX CPU_RATIO ENG_NS
 *   acomp CODEC OP WALL_NS CPU_NS SPEEDUP SMIN SMAX CPU_RATIO
 * "acomp" is zbatch's own acomp algorithm (CODEC-zbatch) called exactly as
 * the stock one, one page at a time: the crypto API's per-call cost with
 * zbatch's codec path, so that what batching adds is told apart from what
 * a cheaper per-call path adds.
 * where SPEEDUP = stock wall / zbatch wall per round (median, min, max)
 * and CPU_RATIO = zbatch CPU / stock CPU per round (median); ENG_NS is the
 * engines' part of CPU_NS. Ratios are in thousandths.
 *
 * With iaa_alg=DRIVER (e.g. deflate-iaa-double, the IAA test double, with
 * zbatch's IAA executor attached to it), one more part: what a user of
 * IAA runs today, DRIVER one page at a time through the crypto API (as
 * zswap calls deflate-iaa), against zbatch deflate batches of 1..32 on the
 * IAA executor, alternating per round:
 *   iaastock DRIVER OP WALL_NS CPU_NS
 *   iaa DRIVER OP MODE BATCH WALL_NS CPU_NS SPEEDUP SMIN SMAX VS_BATCH1
 * SPEEDUP as above (against DRIVER one page at a time), VS_BATCH1 = zbatch
 * batch 1 wall / this batch's wall per round (median). The device's own
 * work (the double's workers) is not CPU_NS: on IAA it is not CPU work.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/acompress.h>
#include <linux/completion.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/vmalloc.h>

#include "../bench_page.h"
#include <linux/zbatch.h>

#define MAX_PAGES	1024
#define MAX_ROUNDS	15

static unsigned int pages = 512;
module_param(pages, uint, 0444);
MODULE_PARM_DESC(pages, "Pages per pass (1..1024)");
static unsigned int rounds = 5;
module_param(rounds, uint, 0444);
MODULE_PARM_DESC(rounds, "Rounds (1..15)");
static char *codecs = "lz4,lzo,zstd,deflate";
module_param(codecs, charp, 0444);
MODULE_PARM_DESC(codecs, "Codecs, comma-separated");
static char *modes = "sync,async,async_irq";
module_param(modes, charp, 0444);
MODULE_PARM_DESC(modes, "zbatch sync modes, comma-separated");

static char *iaa_alg = "";
module_param(iaa_alg, charp, 0444);
MODULE_PARM_DESC(iaa_alg, "Also measure zbatch on IAA against this acomp driver per page");

static const unsigned int batches[] = { 1, 2, 4, 8, 16, 32 };
static const char *const mode_names[] = { "sync", "async", "async_irq" };
static const u32 mode_flags[] = { ZBATCH_KF_SYNC, ZBATCH_KF_ASYNC, ZBATCH_KF_ASYNC_IRQ };
static const struct {
	const char *name;
	unsigned int id;
} codec_tab[] = {
	{ "deflate", ZBATCH_CODEC_DEFLATE }, { "lz4", ZBATCH_CODEC_LZ4 },
	{ "zstd", ZBATCH_CODEC_ZSTD }, { "lzo", ZBATCH_CODEC_LZO },
};

#define REPORT_LEN	(64 * 1024)
static char *report;
static size_t report_len;
static struct dentry *dir;

struct side {
	u8 *cmp[MAX_PAGES];		/* compressed pages (2 pages each) */
	unsigned int clen[MAX_PAGES];
};

struct bench {
	u8 *src[MAX_PAGES];
	u8 *out[MAX_PAGES];		/* decompress output */
	struct side stock, zb;
	struct zbatch_batch batch;
	struct zbatch_req req[ZBATCH_MAX_BATCH];
};

struct sample {
	u64 wall, cpu, engines;
};

static void out(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report_len += vscnprintf(report + report_len, REPORT_LEN - report_len, fmt, ap);
	va_end(ap);
}

/* CPU time so far of this thread and of the engines, exact after a sleep. */
static u64 cpu_now(u64 *engines)
{
	usleep_range(50, 100);
	*engines = zbatch_engines_runtime_ns();
	return current->se.sum_exec_runtime + *engines;
}

/*
 * A crypto API transform and request, allocated once outside every timed
 * pass, as zswap keeps one per CPU: a pass times the calls, not the
 * allocation.
 */
struct stock {
	struct crypto_acomp *tfm;
	struct acomp_req *req;
	struct crypto_wait wait;
};

static void stock_close(struct stock *s)
{
	if (s->req)
		acomp_request_free(s->req);
	if (!IS_ERR_OR_NULL(s->tfm))
		crypto_free_acomp(s->tfm);
	memset(s, 0, sizeof(*s));
}

static int stock_open(struct stock *s, const char *alg)
{
	s->tfm = crypto_alloc_acomp(alg, 0, 0);
	if (IS_ERR(s->tfm)) {
		int ret = PTR_ERR(s->tfm);

		s->tfm = NULL;
		return ret;
	}
	s->req = acomp_request_alloc(s->tfm);
	if (!s->req) {
		stock_close(s);
		return -ENOMEM;
	}
	crypto_init_wait(&s->wait);
	acomp_request_set_callback(s->req, CRYPTO_TFM_REQ_MAY_BACKLOG, crypto_req_done,
				   &s->wait);
	return 0;
}

/* One pass over the pages through the crypto API; 0 or a negative errno. */
static int stock_pass(struct stock *s, struct bench *b, bool comp, unsigned int npages)
{
	struct acomp_req *req = s->req;
	struct scatterlist in, o;
	unsigned int i;
	int ret = 0;

	for (i = 0; i < npages && !ret; i++) {
		if (comp) {
			sg_init_one(&in, b->src[i], PAGE_SIZE);
			sg_init_one(&o, b->stock.cmp[i], PAGE_SIZE * 2);
			acomp_request_set_params(req, &in, &o, PAGE_SIZE, PAGE_SIZE);
			ret = crypto_wait_req(crypto_acomp_compress(req), &s->wait);
			b->stock.clen[i] = req->dlen;
		} else {
			sg_init_one(&in, b->stock.cmp[i], b->stock.clen[i]);
			sg_init_one(&o, b->out[i], PAGE_SIZE);
			acomp_request_set_params(req, &in, &o, b->stock.clen[i], PAGE_SIZE);
			ret = crypto_wait_req(crypto_acomp_decompress(req), &s->wait);
			if (!ret && req->dlen != PAGE_SIZE)
				ret = -EIO;
		}
	}
	return ret;
}

/*
 * One zbatch pass in batches of @bs. Compress keeps incompressible pages
 * (-ENOSPC) raw, as zswap and zram do; decompress skips those.
 */
static int zbatch_pass(unsigned int codec, struct bench *b, bool comp,
		       unsigned int bs, u32 flags)
{
	unsigned int i, j, n;
	int ret;

	for (i = 0; i < pages; i += n) {
		n = min(bs, pages - i);
		zbatch_batch_init(&b->batch, codec, flags);
		for (j = 0; j < n; j++) {
			if (comp)
				zbatch_req_init(&b->req[j], ZBATCH_OP_COMPRESS, b->src[i + j],
						PAGE_SIZE, b->zb.cmp[i + j], PAGE_SIZE);
			else
				zbatch_req_init(&b->req[j], ZBATCH_OP_DECOMPRESS,
						b->zb.cmp[i + j], b->zb.clen[i + j],
						b->out[i + j], PAGE_SIZE);
			zbatch_batch_add(&b->batch, &b->req[j]);
		}
		ret = zbatch_submit(&b->batch);
		if (ret == -EINPROGRESS)
			ret = zbatch_wait(&b->batch);
		for (j = 0; j < n; j++) {
			struct zbatch_req *r = &b->req[j];

			if (comp && r->status == -ENOSPC) {
				memcpy(b->zb.cmp[i + j], b->src[i + j], PAGE_SIZE);
				b->zb.clen[i + j] = PAGE_SIZE;
			} else if (r->status) {
				return r->status;
			} else if (comp) {
				b->zb.clen[i + j] = r->produced;
			} else if (r->produced != PAGE_SIZE) {
				return -EIO;
			}
		}
	}
	return 0;
}

static int check_output(struct bench *b)
{
	unsigned int i;

	for (i = 0; i < pages; i++)
		if (memcmp(b->out[i], b->src[i], PAGE_SIZE))
			return -EIO;
	return 0;
}

/* Time one pass: through @st when given, else zbatch with @bs and @flags. */
static int timed(struct sample *sm, struct stock *st, unsigned int codec,
		 struct bench *b, bool comp, unsigned int bs, u32 flags)
{
	unsigned int i;
	u64 c0, t0, e0, e1;
	int ret;

	if (!comp)
		for (i = 0; i < pages; i++)
			memset(b->out[i], 0, PAGE_SIZE);
	c0 = cpu_now(&e0);
	t0 = ktime_get_ns();
	ret = st ? stock_pass(st, b, comp, pages) : zbatch_pass(codec, b, comp, bs, flags);
	sm->wall = ktime_get_ns() - t0;
	sm->cpu = cpu_now(&e1) - c0;
	sm->engines = e1 - e0;
	if (!ret && !comp)
		ret = check_output(b);
	return ret;
}

/* ---- the parallel ceiling: the stock pass on two CPUs against one ---- */
struct par {
	struct stock *st;
	struct bench *b;
	bool comp;
	struct completion go, done;
	u64 ns;
	int ret;
};

static int par_fn(void *data)
{
	struct par *p = data;
	u64 t0;

	wait_for_completion(&p->go);
	t0 = ktime_get_ns();
	p->ret = stock_pass(p->st, p->b, p->comp, pages);
	p->ns = ktime_get_ns() - t0;
	complete(&p->done);
	return 0;
}

/*
 * 2 * T(one) / T(two at once), in thousandths; < 0 on error. @st: a
 * transform for each CPU.
 */
static s64 ceiling_once(struct stock *st, struct bench *b, struct bench *b2, bool comp)
{
	struct par p[2] = {};
	unsigned int i;
	u64 t0, one;
	int ret;

	t0 = ktime_get_ns();
	ret = stock_pass(&st[0], b, comp, pages);
	one = ktime_get_ns() - t0;
	if (ret)
		return ret;
	for (i = 0; i < 2; i++) {
		struct task_struct *t;

		p[i] = (struct par){ .st = &st[i], .b = i ? b2 : b, .comp = comp };
		init_completion(&p[i].go);
		init_completion(&p[i].done);
		t = kthread_create(par_fn, &p[i], "zbbench/%u", i);
		if (IS_ERR(t))
			return PTR_ERR(t);
		kthread_bind(t, i % num_online_cpus());
		wake_up_process(t);
	}
	t0 = ktime_get_ns();
	complete(&p[0].go);
	complete(&p[1].go);
	wait_for_completion(&p[0].done);
	wait_for_completion(&p[1].done);
	if (p[0].ret || p[1].ret)
		return p[0].ret ?: p[1].ret;
	return div64_u64(2000 * one, max(p[0].ns, p[1].ns));
}

static int cmp_s64(const void *a, const void *b)
{
	s64 x = *(const s64 *)a, y = *(const s64 *)b;

	return x < y ? -1 : x > y;
}

static s64 median(s64 *v, unsigned int n)
{
	sort(v, n, sizeof(*v), cmp_s64, NULL);
	return v[n / 2];
}

/* Median of the rounds' values of @x, and their min and max when asked. */
static s64 med(const s64 *x, s64 *lo, s64 *hi)
{
	s64 v[MAX_ROUNDS];

	memcpy(v, x, rounds * sizeof(*v));
	sort(v, rounds, sizeof(*v), cmp_s64, NULL);
	if (lo)
		*lo = v[0];
	if (hi)
		*hi = v[rounds - 1];
	return v[rounds / 2];
}

static bool listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;

	while ((p = strstr(p, name))) {
		if ((p == list || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return true;
		p += n;
	}
	return false;
}

#define NB	ARRAY_SIZE(batches)
#define NM	ARRAY_SIZE(mode_names)

struct results {
	s64 ceil[MAX_ROUNDS];
	s64 s_wall[MAX_ROUNDS], s_cpu[MAX_ROUNDS];
	s64 z_wall[NM][NB][MAX_ROUNDS], z_cpu[NM][NB][MAX_ROUNDS], z_eng[NM][NB][MAX_ROUNDS];
	s64 speed[NM][NB][MAX_ROUNDS], cpur[NM][NB][MAX_ROUNDS];
	s64 a_wall[MAX_ROUNDS], a_cpu[MAX_ROUNDS], a_speed[MAX_ROUNDS], a_cpur[MAX_ROUNDS];
};

/*
 * @sk: two transforms of the stock algorithm (the ceiling runs one per
 * CPU), @zk: one of zbatch's acomp algorithm; all opened before any
 * timed pass.
 */
static int bench_rounds(struct bench *b, struct bench *b2, unsigned int c, bool comp,
			struct results *r, struct stock *sk, struct stock *zk)
{
	const char *alg = codec_tab[c].name, *op = comp ? "compress" : "decompress";
	unsigned int id = codec_tab[c].id, rd, m, k, i;
	struct sample st, z, a;
	s64 v[MAX_ROUNDS];
	int ret;

	/* decompress needs both sides' compressed pages */
	if (!comp) {
		ret = stock_pass(&sk[0], b, true, pages);
		if (!ret)
			ret = zbatch_pass(id, b, true, 16, ZBATCH_KF_ASYNC_IRQ);
		if (ret)
			return ret;
		for (i = 0; i < pages; i++) {
			memcpy(b2->stock.cmp[i], b->stock.cmp[i], b->stock.clen[i]);
			b2->stock.clen[i] = b->stock.clen[i];
		}
	}
	for (rd = 0; rd < rounds; rd++) {
		bool stock_first = !(rd & 1);
		/* the machine's ceiling, in the same rounds as what it bounds */
		s64 x = ceiling_once(sk, b, b2, comp);

		if (x < 0)
			return x;
		r->ceil[rd] = x;

		/*
		 * zbatch's acomp (it reads and writes the stock side's
		 * buffers) right beside the stock pass, before or after it
		 */
		if (stock_first) {
			ret = timed(&st, &sk[0], 0, b, comp, 0, 0);
			if (!ret)
				ret = timed(&a, zk, 0, b, comp, 0, 0);
			if (ret)
				return ret;
		}
		for (m = 0; m < NM; m++) {
			if (!listed(modes, mode_names[m]))
				continue;
			for (k = 0; k < NB; k++) {
				ret = timed(&z, NULL, id, b, comp, batches[k], mode_flags[m]);
				if (ret) {
					pr_err("%s %s %s batch %u: %d\n", alg, op,
					       mode_names[m], batches[k], ret);
					return ret;
				}
				r->z_wall[m][k][rd] = z.wall;
				r->z_cpu[m][k][rd] = z.cpu;
				r->z_eng[m][k][rd] = z.engines;
			}
		}
		if (!stock_first) {
			ret = timed(&a, zk, 0, b, comp, 0, 0);
			if (!ret)
				ret = timed(&st, &sk[0], 0, b, comp, 0, 0);
			if (ret)
				return ret;
		}
		r->s_wall[rd] = st.wall;
		r->s_cpu[rd] = st.cpu;
		r->a_wall[rd] = a.wall;
		r->a_cpu[rd] = a.cpu;
		r->a_speed[rd] = div64_u64(1000 * st.wall, max_t(u64, a.wall, 1));
		r->a_cpur[rd] = div64_u64(1000 * a.cpu, max_t(u64, st.cpu, 1));
		for (m = 0; m < NM; m++)
			for (k = 0; k < NB; k++) {
				r->speed[m][k][rd] = div64_u64(1000 * st.wall,
							       max_t(s64, r->z_wall[m][k][rd], 1));
				r->cpur[m][k][rd] = div64_u64(1000 * r->z_cpu[m][k][rd],
							      max_t(u64, st.cpu, 1));
			}
	}
	memcpy(v, r->ceil, sizeof(v));
	out("ceiling %s %s %lld", alg, op, median(v, rounds));
	out(" %lld %lld\n", v[0], v[rounds - 1]);
	memcpy(v, r->s_wall, sizeof(v));
	out("stock %s %s %lld", alg, op, median(v, rounds) / pages);
	memcpy(v, r->s_cpu, sizeof(v));
	out(" %lld\n", median(v, rounds) / pages);
	memcpy(v, r->a_wall, sizeof(v));
	out("acomp %s %s %lld", alg, op, median(v, rounds) / pages);
	memcpy(v, r->a_cpu, sizeof(v));
	out(" %lld", median(v, rounds) / pages);
	memcpy(v, r->a_speed, sizeof(v));
	out(" %lld", median(v, rounds));
	out(" %lld %lld", v[0], v[rounds - 1]);
	memcpy(v, r->a_cpur, sizeof(v));
	out(" %lld\n", median(v, rounds));
	for (m = 0; m < NM; m++) {
		if (!listed(modes, mode_names[m]))
			continue;
		for (k = 0; k < NB; k++) {
			s64 lo, hi, sp = med(r->speed[m][k], &lo, &hi);

			out("zbatch %s %s %s %u %lld %lld %lld %lld %lld %lld %lld\n", alg, op,
			    mode_names[m], batches[k], med(r->z_wall[m][k], NULL, NULL) / pages,
			    med(r->z_cpu[m][k], NULL, NULL) / pages, sp, lo, hi,
			    med(r->cpur[m][k], NULL, NULL), med(r->z_eng[m][k], NULL, NULL) / pages);
		}
	}
	return 0;
}

static int bench_codec(struct bench *b, struct bench *b2, unsigned int c,
		       bool comp, struct results *r)
{
	struct stock sk[2] = {}, zk = {};
	char zalg[32];
	int ret;

	snprintf(zalg, sizeof(zalg), "%s-zbatch", codec_tab[c].name);
	ret = stock_open(&sk[0], codec_tab[c].name) ?:
	      stock_open(&sk[1], codec_tab[c].name) ?: stock_open(&zk, zalg);
	if (!ret)
		ret = bench_rounds(b, b2, c, comp, r, sk, &zk);
	stock_close(&zk);
	stock_close(&sk[1]);
	stock_close(&sk[0]);
	return ret;
}

/* zbatch deflate on the IAA executor against @iaa_alg (@sk) a page at a time. */
static int bench_iaa_rounds(struct bench *b, bool comp, struct results *r, struct stock *sk)
{
	const char *op = comp ? "compress" : "decompress";
	unsigned int rd, m, k;
	struct sample st, z;
	s64 v[MAX_ROUNDS];
	int ret;

	if (!comp) {
		ret = stock_pass(sk, b, true, pages);
		if (!ret)
			ret = zbatch_pass(ZBATCH_CODEC_DEFLATE, b, true, 16, ZBATCH_KF_ASYNC_IRQ);
		if (ret)
			return ret;
	}
	for (rd = 0; rd < rounds; rd++) {
		bool stock_first = !(rd & 1);

		if (stock_first) {
			ret = timed(&st, sk, 0, b, comp, 0, 0);
			if (ret)
				return ret;
		}
		for (m = 0; m < NM; m++) {
			if (!listed(modes, mode_names[m]))
				continue;
			for (k = 0; k < NB; k++) {
				ret = timed(&z, NULL, ZBATCH_CODEC_DEFLATE, b, comp, batches[k],
					    mode_flags[m]);
				if (ret) {
					pr_err("iaa %s %s batch %u: %d\n", op, mode_names[m],
					       batches[k], ret);
					return ret;
				}
				r->z_wall[m][k][rd] = z.wall;
				r->z_cpu[m][k][rd] = z.cpu;
			}
		}
		if (!stock_first) {
			ret = timed(&st, sk, 0, b, comp, 0, 0);
			if (ret)
				return ret;
		}
		r->s_wall[rd] = st.wall;
		r->s_cpu[rd] = st.cpu;
		for (m = 0; m < NM; m++)
			for (k = 0; k < NB; k++) {
				r->speed[m][k][rd] = div64_u64(1000 * st.wall,
							       max_t(s64, r->z_wall[m][k][rd], 1));
				/* against batch 1 of the same round */
				r->cpur[m][k][rd] = div64_u64(1000 * r->z_wall[m][0][rd],
							      max_t(s64, r->z_wall[m][k][rd], 1));
			}
	}
	memcpy(v, r->s_wall, sizeof(v));
	out("iaastock %s %s %lld", iaa_alg, op, median(v, rounds) / pages);
	memcpy(v, r->s_cpu, sizeof(v));
	out(" %lld\n", median(v, rounds) / pages);
	for (m = 0; m < NM; m++) {
		if (!listed(modes, mode_names[m]))
			continue;
		for (k = 0; k < NB; k++) {
			s64 lo, hi, sp = med(r->speed[m][k], &lo, &hi);

			out("iaa %s %s %s %u %lld %lld %lld %lld %lld %lld\n", iaa_alg, op,
			    mode_names[m], batches[k], med(r->z_wall[m][k], NULL, NULL) / pages,
			    med(r->z_cpu[m][k], NULL, NULL) / pages, sp, lo, hi,
			    med(r->cpur[m][k], NULL, NULL));
		}
	}
	return 0;
}

static int bench_iaa(struct bench *b, bool comp, struct results *r)
{
	struct stock sk = {};
	int ret = stock_open(&sk, iaa_alg);

	if (!ret)
		ret = bench_iaa_rounds(b, comp, r, &sk);
	stock_close(&sk);
	return ret;
}

static struct bench *bench_alloc(void)
{
	struct bench *b = vzalloc(sizeof(*b));
	unsigned int i;

	if (!b)
		return NULL;
	for (i = 0; i < pages; i++) {
		b->src[i] = kmalloc(PAGE_SIZE, GFP_KERNEL);
		b->out[i] = kmalloc(PAGE_SIZE, GFP_KERNEL);
		b->stock.cmp[i] = kmalloc(PAGE_SIZE * 2, GFP_KERNEL);
		b->zb.cmp[i] = kmalloc(PAGE_SIZE * 2, GFP_KERNEL);
		if (!b->src[i] || !b->out[i] || !b->stock.cmp[i] || !b->zb.cmp[i])
			return b;	/* bench_free() checks */
		zbatch_bench_fill(b->src[i], i);
	}
	return b;
}

static bool bench_ok(struct bench *b)
{
	return b && b->zb.cmp[pages - 1];
}

static void bench_free(struct bench *b)
{
	unsigned int i;

	if (!b)
		return;
	for (i = 0; i < pages; i++) {
		kfree(b->src[i]);
		kfree(b->out[i]);
		kfree(b->stock.cmp[i]);
		kfree(b->zb.cmp[i]);
	}
	vfree(b);
}

static ssize_t results_read(struct file *f, char __user *buf, size_t len, loff_t *pos)
{
	return simple_read_from_buffer(buf, len, pos, report, report_len);
}

static const struct file_operations results_fops = {
	.owner = THIS_MODULE,
	.read = results_read,
};

static int __init bench_init(void)
{
	struct bench *b = NULL, *b2 = NULL;
	struct results *r = NULL;
	unsigned int c, op;
	int ret = -ENOMEM;

	if (!pages || pages > MAX_PAGES || !rounds || rounds > MAX_ROUNDS)
		return -EINVAL;
	report = kvzalloc(REPORT_LEN, GFP_KERNEL);
	r = vzalloc(sizeof(*r));
	b = bench_alloc();
	b2 = bench_alloc();
	if (!report || !r || !bench_ok(b) || !bench_ok(b2))
		goto out;
	out("# zbatch batch bench: %u pages, %u rounds, %u CPUs\n", pages, rounds,
	    num_online_cpus());
	ret = 0;
	for (c = 0; c < ARRAY_SIZE(codec_tab) && !ret; c++) {
		if (!listed(codecs, codec_tab[c].name))
			continue;
		for (op = 0; op < 2 && !ret; op++)
			ret = bench_codec(b, b2, c, op == 0, r);
	}
	for (op = 0; op < 2 && !ret && iaa_alg[0]; op++) {
		memset(r, 0, sizeof(*r));
		ret = bench_iaa(b, op == 0, r);
	}
	if (!ret) {
		dir = debugfs_create_dir("zbatch_batch_bench", NULL);
		debugfs_create_file("results", 0400, dir, NULL, &results_fops);
	}
out:
	bench_free(b2);
	bench_free(b);
	vfree(r);
	if (ret)
		kvfree(report);
	return ret;
}

static void __exit bench_exit(void)
{
	debugfs_remove_recursive(dir);
	kvfree(report);
}

module_init(bench_init);
module_exit(bench_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("zbatch benchmark: stock crypto API per page vs zbatch batches");
