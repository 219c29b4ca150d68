#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""zbatch stats --prometheus, the real binary on a fake sysfs/debugfs tree,
read back by Prometheus's own parser (Debian's python3-prometheus-client):
every family parses, counters end in _total, the values are the tree's,
--output replaces its file whole, and without the module the output still
says so (zbatch_module_loaded 0). Usage: test_prometheus.py ZBATCH_BINARY"""
import os
import subprocess
import sys
import tempfile
import unittest

from prometheus_client.parser import text_string_to_metric_families

ZBATCH = None

STATS = ("compress_calls 10\ndecompress_calls 5\ncompress_bytes_in 40960\n"
         "compress_bytes_out 9000\ncompletions 12\nerr_nospc 3\nhandoffs 7\n"
         "sw_fallbacks 2\nsome_new_counter 4\ndevice_errors 6\n")


def put(root, path, text):
    full = os.path.join(root, path.lstrip("/"))
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        f.write(text)


def fake_tree(root, module=True):
    if module:
        put(root, "/sys/module/zbatch/refcnt", "0\n")
        d = "/sys/kernel/debug/zbatch"
        put(root, d + "/stats", STATS)
        put(root, d + "/dev0/stats", "compress_calls 6\nerr_badmsg 1\n")
        put(root, d + "/dev0/wq1/stats", "compress_calls 4\n")
        put(root, d + "/batch_hist", "# batch_size count\n1 5\n2 0\n16 3\n")
        put(root, d + "/latency", "# op samples p50_ns p95_ns p99_ns\n"
            "compress 10 1000 2000 3000\n")
        put(root, d + "/engines", "# engine cpu slices descriptors stolen cpu_time_ns home\n"
            "0.0 1 3 9 0 1500000000 1\ntotal - - - - 2500000000\n")
        put(root, "/sys/kernel/zbatch/swapdev/hot_add", "1\n")
        b = "/sys/block/zbatchswap0/zbatch"
        put(root, b + "/disksize", "1073741824\n")
        put(root, b + "/codec", "deflate [lz4] zstd lzo\n")
        put(root, b + "/unit", "4k [16k] 64k\n")
        put(root, b + "/algorithm_params", "algo=lz4 level=5\nalgo=zstd level=9 priority=1\n")
        put(root, b + "/recomp_algorithm", "#1: deflate lz4 [zstd] lzo\n")
        put(root, b + "/recomp_budget", "10\n")
        put(root, b + "/recomp_interval", "5\n")
        put(root, b + "/recomp_stat", "     100      150      110       40   409600  2500000000\n")
        put(root, b + "/mem_limit", "0\n")
        put(root, b + "/mm_stat", "8192000 3000000 3100000 0 3200000 12 0 2 0\n")
        put(root, b + "/io_stat", "1 0 0 40\n")
        put(root, b + "/unit_stat", "units 100\npartial_reads 9\ndirect_reads 30\n"
            "writeback_failed 2\nsecondary_reads 7\ncopy_ns_per_4k 310\n")
        put(root, b + "/backing_dev", "/dev/vdb\n")
        put(root, b + "/bd_stat", "      50       10       70\n")
        put(root, b + "/batch_stat", "# requests_per_batch write_batches read_batches\n"
            "1 4 30\n4 50 20\n")
        put(root, "/proc/swaps", "Filename Type Size Used Priority\n"
            "/dev/zbatchswap0 partition 1048572 0 100\n")


def run(root, *args):
    return subprocess.run([ZBATCH, "--root", root, "stats", "--prometheus", *args],
                          capture_output=True, text=True)


def samples(text):
    out = {}
    fams = {}
    for fam in text_string_to_metric_families(text):
        fams[fam.name] = fam
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return fams, out


class Prometheus(unittest.TestCase):
    def test_every_family_parses_with_the_tree_values(self):
        with tempfile.TemporaryDirectory() as root:
            fake_tree(root)
            r = run(root)
            self.assertEqual(r.returncode, 0, r.stderr)
            fams, s = samples(r.stdout)
            self.assertEqual(s[("zbatch_module_loaded", ())], 1)
            self.assertEqual(s[("zbatch_stats_readable", ())], 1)
            self.assertEqual(s[("zbatch_requests_total", (("op", "compress"),))], 10)
            self.assertEqual(s[("zbatch_request_bytes_total",
                                (("direction", "out"), ("op", "compress")))], 9000)
            self.assertEqual(s[("zbatch_errors_total", (("kind", "nospc"),))], 3)
            self.assertEqual(s[("zbatch_handoffs_total", ())], 7)
            self.assertEqual(s[("zbatch_some_new_counter_total", ())], 4)
            self.assertEqual(s[("zbatch_dev_errors_total",
                                (("device", "0"), ("kind", "badmsg")))], 1)
            self.assertEqual(s[("zbatch_device_errors_total", ())], 6)
            self.assertEqual(s[("zbatch_wq_requests_total",
                                (("device", "0"), ("op", "compress"), ("wq", "1")))], 4)
            # the histogram: cumulative, +Inf = count, sum = 1*5 + 16*3
            self.assertEqual(fams["zbatch_batch_requests"].type, "histogram")
            self.assertEqual(s[("zbatch_batch_requests_bucket", (("le", "1"),))], 5)
            self.assertEqual(s[("zbatch_batch_requests_bucket", (("le", "8"),))], 5)
            self.assertEqual(s[("zbatch_batch_requests_bucket", (("le", "16"),))], 8)
            self.assertEqual(s[("zbatch_batch_requests_bucket", (("le", "+Inf"),))], 8)
            self.assertEqual(s[("zbatch_batch_requests_sum", ())], 53)
            self.assertEqual(fams["zbatch_request_latency_seconds"].type, "summary")
            self.assertAlmostEqual(s[("zbatch_request_latency_seconds",
                                      (("op", "compress"), ("quantile", "0.99")))], 3e-6)
            self.assertEqual(s[("zbatch_request_latency_seconds_count",
                                (("op", "compress"),))], 10)
            self.assertEqual(s[("zbatch_engine_cpu_seconds_total", ())], 2.5)
            dev = (("device", "zbatchswap0"),)
            self.assertEqual(s[("zbatch_swapdev_info", (("codec", "lz4"), ("device", "zbatchswap0"),
                                                        ("level", "5"), ("recomp_codec", "zstd"),
                                                        ("recomp_level", "9"), ("unit", "16k")))], 1)
            self.assertEqual(s[("zbatch_swapdev_orig_data_bytes", dev)], 8192000)
            self.assertEqual(s[("zbatch_swapdev_mem_used_max_bytes", dev)], 3200000)
            self.assertEqual(s[("zbatch_swapdev_swap_active", dev)], 1)
            self.assertEqual(s[("zbatch_swapdev_failed_reads_total", dev)], 1)
            self.assertEqual(s[("zbatch_swapdev_units", dev)], 100)
            self.assertEqual(s[("zbatch_swapdev_partial_reads_total", dev)], 9)
            self.assertEqual(s[("zbatch_swapdev_bd_pages", dev)], 50)
            self.assertEqual(s[("zbatch_swapdev_bd_reads_total", dev)], 10)
            self.assertEqual(s[("zbatch_swapdev_bd_writes_total", dev)], 70)
            self.assertEqual(s[("zbatch_swapdev_writeback_failed_total", dev)], 2)
            # recompression: recomp_budget as a ratio, recomp_stat, unit_stat's
            # secondary_reads
            self.assertEqual(s[("zbatch_swapdev_recomp_budget_ratio", dev)], 0.1)
            self.assertEqual(s[("zbatch_swapdev_recomp_interval_seconds", dev)], 5)
            self.assertEqual(fams["zbatch_swapdev_recomp_pages"].type, "gauge")
            self.assertEqual(s[("zbatch_swapdev_recomp_pages", dev)], 100)
            self.assertEqual(s[("zbatch_swapdev_recomp_tried_pages_total", dev)], 150)
            self.assertEqual(s[("zbatch_swapdev_recomp_recompressed_pages_total", dev)], 110)
            self.assertEqual(s[("zbatch_swapdev_recomp_incompressible_pages_total", dev)], 40)
            self.assertEqual(s[("zbatch_swapdev_recomp_saved_bytes_total", dev)], 409600)
            self.assertEqual(s[("zbatch_swapdev_recomp_cpu_seconds_total", dev)], 2.5)
            self.assertEqual(s[("zbatch_swapdev_secondary_reads_total", dev)], 7)
            # an estimate, not a count
            self.assertEqual(fams["zbatch_swapdev_copy_ns_per_4k"].type, "gauge")
            self.assertEqual(s[("zbatch_swapdev_copy_ns_per_4k", dev)], 310)
            self.assertEqual(s[("zbatch_swapdev_batches_total",
                                (("device", "zbatchswap0"), ("op", "read"), ("requests", "4")))], 20)
            # conventions: a counter's samples end in _total, every family has help,
            # one meaning per family (its samples share their label names)
            for fam in fams.values():
                names = {tuple(sorted(k for k in x.labels if k not in ("le", "quantile")))
                         for x in fam.samples}
                self.assertEqual(len(names), 1, f"{fam.name}: label sets {names}")
                self.assertTrue(fam.documentation, fam.name)
                if fam.type == "counter":
                    self.assertTrue(all(x.name.endswith("_total") or x.name.endswith("_created")
                                        for x in fam.samples), fam.name)
            self.assertNotIn("# TYPE zbatch_requests_total counter\n# TYPE",
                             r.stdout)  # one HELP/TYPE per family
            self.assertEqual(r.stdout.count("# TYPE zbatch_requests_total "), 1)

    def test_recompression_only_with_a_secondary_codec(self):
        # a device without one (or a module without recompression): no
        # recomp_* families, empty recomp_codec in zbatch_swapdev_info
        with tempfile.TemporaryDirectory() as root:
            fake_tree(root)
            b = "/sys/block/zbatchswap0/zbatch"
            put(root, b + "/recomp_algorithm", "")
            put(root, b + "/algorithm_params", "algo=lz4 level=5\n")
            r = run(root)
            self.assertEqual(r.returncode, 0, r.stderr)
            fams, s = samples(r.stdout)
            self.assertFalse([f for f in fams if f.startswith("zbatch_swapdev_recomp_")])
            self.assertEqual(s[("zbatch_swapdev_info", (("codec", "lz4"), ("device", "zbatchswap0"),
                                                        ("level", "5"), ("recomp_codec", ""),
                                                        ("recomp_level", "0"), ("unit", "16k")))], 1)

    def test_output_file_replaced_whole(self):
        with tempfile.TemporaryDirectory() as root, tempfile.TemporaryDirectory() as out:
            fake_tree(root)
            path = os.path.join(out, "zbatch.prom")
            with open(path, "w") as f:
                f.write("stale\n")
            r = run(root, "--output", path)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, "")
            with open(path) as f:
                fams, s = samples(f.read())
            self.assertEqual(s[("zbatch_module_loaded", ())], 1)
            self.assertEqual(os.listdir(out), ["zbatch.prom"])  # no temporary left
            self.assertEqual(os.stat(path).st_mode & 0o777, 0o644)  # node_exporter reads it

    def test_output_into_a_missing_directory_names_it(self):
        with tempfile.TemporaryDirectory() as root:
            fake_tree(root)
            r = run(root, "--output", os.path.join(root, "no", "such", "x.prom"))
            self.assertEqual(r.returncode, 1)
            self.assertIn("no/such", r.stderr)

    def test_without_the_module_it_says_so(self):
        with tempfile.TemporaryDirectory() as root:
            fake_tree(root, module=False)
            r = run(root)
            self.assertEqual(r.returncode, 0, r.stderr)
            fams, s = samples(r.stdout)
            self.assertEqual(s, {("zbatch_module_loaded", ()): 0,
                                 ("zbatch_stats_readable", ()): 0})
            self.assertIn("missing", r.stderr)

    def test_loaded_but_not_readable_says_which(self):
        # debugfs needs root: the module is loaded, its devices are listed
        with tempfile.TemporaryDirectory() as root:
            fake_tree(root)
            import shutil
            shutil.rmtree(os.path.join(root, "sys/kernel/debug"))
            r = run(root)
            self.assertEqual(r.returncode, 0, r.stderr)
            fams, s = samples(r.stdout)
            self.assertEqual(s[("zbatch_module_loaded", ())], 1)
            self.assertEqual(s[("zbatch_stats_readable", ())], 0)
            self.assertEqual(s[("zbatch_swapdev_units", (("device", "zbatchswap0"),))], 100)

    def test_output_needs_prometheus(self):
        with tempfile.TemporaryDirectory() as root:
            r = subprocess.run([ZBATCH, "--root", root, "stats", "--output", "x"],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 2)


if __name__ == "__main__":
    ZBATCH = sys.argv.pop(1)
    unittest.main()
