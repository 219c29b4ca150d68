// SPDX-License-Identifier: GPL-2.0
/*
 * Benchmark module (make bench only): the per-page acomp path of a stock
 * algorithm against the same codec through zbatch, as zswap calls it (one
 * page, crypto_acomp_compress + crypto_wait_req), side by side on the same
 * pages and CPU, rounds alternating which goes first. Results in debugfs
 * zbatch_acomp_bench/results, one line per codec and operation:
 *   codec op stock_ns_per_page zbatch_ns_per_page (medians) min max ...
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/acompress.h>
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/vmalloc.h>

#include "../bench_page.h"

#define NPAGES	256
#define ROUNDS	15

static unsigned int pages = NPAGES;
module_param(pages, uint, 0444);
MODULE_PARM_DESC(pages, "Pages per pass (1..1024)");

static char *report;
static size_t report_len;
static struct dentry *dir;

struct bufs {
	u8 *src[NPAGES * 4];
	u8 *dst[NPAGES * 4];
	unsigned int clen[NPAGES * 4];
	u8 *back[NPAGES * 4];
};

/* One pass: compress (or decompress) every page; ns in total, or < 0. */
static s64 pass(const char *alg, struct bufs *b, bool comp)
{
	struct crypto_acomp *tfm;
	struct acomp_req *req;
	struct crypto_wait wait;
	struct scatterlist in, out;
	unsigned int i;
	u64 t0;
	s64 ret = 0;

	tfm = crypto_alloc_acomp(alg, 0, 0);
	if (IS_ERR(tfm))
		return PTR_ERR(tfm);
	req = acomp_request_alloc(tfm);
	if (!req) {
		crypto_free_acomp(tfm);
		return -ENOMEM;
	}
	crypto_init_wait(&wait);
	acomp_request_set_callback(req, CRYPTO_TFM_REQ_MAY_BACKLOG, crypto_req_done, &wait);
	t0 = ktime_get_ns();
	for (i = 0; i < pages && !ret; i++) {
		if (comp) {
			sg_init_one(&in, b->src[i], PAGE_SIZE);
			sg_init_one(&out, b->dst[i], PAGE_SIZE * 2);
			acomp_request_set_params(req, &in, &out, PAGE_SIZE, PAGE_SIZE);
			ret = crypto_wait_req(crypto_acomp_compress(req), &wait);
			b->clen[i] = req->dlen;
		} else {
			sg_init_one(&in, b->dst[i], b->clen[i]);
			sg_init_one(&out, b->back[i], PAGE_SIZE);
			acomp_request_set_params(req, &in, &out, b->clen[i], PAGE_SIZE);
			ret = crypto_wait_req(crypto_acomp_decompress(req), &wait);
			if (!ret && req->dlen != PAGE_SIZE)
				ret = -EIO;
		}
	}
	if (!ret)
		ret = ktime_get_ns() - t0;
	/* every page checked, outside the timer */
	for (i = 0; i < pages && ret > 0 && !comp; i++)
		if (memcmp(b->back[i], b->src[i], PAGE_SIZE))
			ret = -EIO;
	acomp_request_free(req);
	crypto_free_acomp(tfm);
	return ret;
}

static int cmp_s64(const void *a, const void *b)
{
	s64 x = *(const s64 *)a, y = *(const s64 *)b;

	return x < y ? -1 : x > y;
}

static void out(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report_len += vscnprintf(report + report_len, PAGE_SIZE * 4 - report_len, fmt, ap);
	va_end(ap);
}

/*
 * Round @r of one codec and op: both implementations, order alternating;
 * ns per page into t[impl][slot]. Decompress reads what the same
 * implementation compressed just before.
 */
static s64 round_pair(const char *stock, const char *zb, struct bufs *b,
		      unsigned int op, unsigned int r, s64 t[2][ROUNDS],
		      unsigned int slot)
{
	unsigned int k;

	for (k = 0; k < 2; k++) {
		bool z = (k == 0) == (r % 2 == 0);
		const char *alg = z ? zb : stock;
		s64 ns;

		if (op == 1) {
			ns = pass(alg, b, true);
			if (ns < 0)
				return ns;
		}
		ns = pass(alg, b, op == 0);
		if (ns < 0) {
			pr_err("%s %s: %lld\n", alg, op ? "decompress" : "compress", ns);
			return ns;
		}
		t[z][slot] = ns / pages;
	}
	return 0;
}

static int run(struct bufs *b)
{
	static const char *const codecs[] = { "lzo", "lz4", "deflate", "zstd" };
	unsigned int c, r, op;
	char zb[32];

	out("# codec op stock_ns_per_page zbatch_ns_per_page zbatch/stock %s\n",
	    "stock_min stock_max zbatch_min zbatch_max zbatch/stock_of_mins");
	for (c = 0; c < ARRAY_SIZE(codecs); c++) {
		for (op = 0; op < 2; op++) {
			s64 t[2][ROUNDS];

			snprintf(zb, sizeof(zb), "%s-zbatch", codecs[c]);
			for (r = 0; r < ROUNDS; r++) {
				s64 ns = round_pair(codecs[c], zb, b, op, r, t, r);

				if (ns < 0)
					return ns;
			}
			sort(t[0], ROUNDS, sizeof(s64), cmp_s64, NULL);
			sort(t[1], ROUNDS, sizeof(s64), cmp_s64, NULL);
			out("%s %s %lld %lld %lld.%03lld %lld %lld %lld %lld %lld.%03lld\n",
			    codecs[c], op ? "decompress" : "compress", t[0][ROUNDS / 2],
			    t[1][ROUNDS / 2], t[1][ROUNDS / 2] / t[0][ROUNDS / 2],
			    t[1][ROUNDS / 2] * 1000 / t[0][ROUNDS / 2] % 1000,
			    t[0][0], t[0][ROUNDS - 1], t[1][0], t[1][ROUNDS - 1],
			    t[1][0] / t[0][0], t[1][0] * 1000 / t[0][0] % 1000);
		}
	}
	return 0;
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
	struct bufs *b;
	unsigned int i;
	int ret = -ENOMEM;

	if (!pages || pages > NPAGES * 4)
		return -EINVAL;
	report = kzalloc(PAGE_SIZE * 4, GFP_KERNEL);
	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!report || !b)
		goto out;
	for (i = 0; i < pages; i++) {
		b->src[i] = kmalloc(PAGE_SIZE, GFP_KERNEL);
		b->dst[i] = kmalloc(PAGE_SIZE * 2, GFP_KERNEL);
		b->back[i] = kmalloc(PAGE_SIZE, GFP_KERNEL);
		if (!b->src[i] || !b->dst[i] || !b->back[i])
			goto out;
		zbatch_bench_fill(b->src[i], i);
	}
	ret = run(b);
	if (!ret) {
		dir = debugfs_create_dir("zbatch_acomp_bench", NULL);
		debugfs_create_file("results", 0400, dir, NULL, &results_fops);
	}
out:
	if (b) {
		for (i = 0; i < NPAGES * 4; i++) {
			kfree(b->src[i]);
			kfree(b->dst[i]);
			kfree(b->back[i]);
		}
		kfree(b);
	}
	if (ret)
		kfree(report);
	return ret;
}

static void __exit bench_exit(void)
{
	debugfs_remove_recursive(dir);
	kfree(report);
}

module_init(bench_init);
module_exit(bench_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("zbatch benchmark: stock acomp vs zbatch acomp, per page");
