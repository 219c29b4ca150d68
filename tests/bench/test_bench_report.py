#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""scripts/bench-report on fixtures (tests/bench/): the swap device table,
the codec share and two-CPU limit, medians over boots, and
Documentation/performance.md's every marked block filled (the real file,
copied), with results.json beside it. Standard library only."""
import importlib.machinery
import importlib.util
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

# no scripts/__pycache__ left beside the shell scripts (make check's shell
# lint greps that directory while this test may be running)
sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(TOP, "scripts", "bench-report")
loader = importlib.machinery.SourceFileLoader("bench_report", SCRIPT)
spec = importlib.util.spec_from_loader("bench_report", loader)
br = importlib.util.module_from_spec(spec)
loader.exec_module(br)
RUN = os.path.join(HERE, "run")


class Swapdev(unittest.TestCase):
    def test_one_boot_row(self):
        t = br.swapdev_table([os.path.join(HERE, "swapdev-runs.txt")])
        self.assertIn("| lz4 | 16k | 64kB mTHP | 1 | whole | 2.00 [2.00-2.00] | - | "
                      "0.50 [0.50-0.50] | - | - | 0.75 [0.75-0.75] | 0.450 | -10.0% |", t)

    def test_median_of_boots(self):
        p = os.path.join(HERE, "swapdev-runs.txt")
        self.assertIn("**2.00** (2.00, 2.00)", br.swapdev_table([p, p]))

    def test_codec_share_and_limit(self):
        # the boot's cost lines: 8192 pages x 61035 ns over zram's 1 s
        # swap-out: f 0.50, limit 1.33, zbatch 1.25x reaches 94% of it;
        # x 30517 ns over its 1 s swap-in: f 0.25, limit 1.14, and 1.25x is
        # above it
        t = br.swapdev_table([os.path.join(RUN, "swapdev-runs-1.txt")])
        self.assertIn("| 1.25 [1.25-1.25] | 1.33 (f 0.50, 94%) | "
                      "1.25 [1.25-1.25] | 1.14 (f 0.25, 109%: above the limit) |", t)

    def boot(self, text):
        f = tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False)
        self.addCleanup(os.unlink, f.name)
        f.write(text)
        f.close()
        return f.name

    ZRAM = "zram lz4 - 64kB real 1 whole 1 {out} 1.0 1.0 0.0 33554432 16777216 17000000 0 0 192 0 0\n"
    ZB = "zbatch lz4 4k 64kB real 1 whole 1 {out} 1.0 1.0 0.0 33554432 16777216 17000000 0 0 192 0 0\n"

    def test_each_boot_against_its_own_limit(self):
        # boot 1: f 0.50 (limit 1.33), 1.25x: 94%; boot 2: f 0.82 (limit
        # 1.69), 1.50x: 89%. Medians: limit 1.51, f 0.66, share 91%
        b1 = self.boot(self.ZRAM.format(out=1.0) + self.ZB.format(out=0.8) +
                       "cost lz4 real compress 61035\n")
        b2 = self.boot(self.ZRAM.format(out=1.0) + self.ZB.format(out=1 / 1.5) +
                       "cost lz4 real compress 100000\n")
        t = br.swapdev_table([b1, b2])
        self.assertIn("| **1.38** (1.25, 1.50) [1.25-1.50] | 1.51 (f 0.66, 91% (94, 89)) |", t)

    def test_f_of_one_or_more_is_no_limit(self):
        b = self.boot(self.ZRAM.format(out=1.0) + self.ZB.format(out=0.8) +
                      "cost lz4 real compress 200000\n")
        self.assertIn("| 1.25 [1.25-1.25] | invalid: f 1.64, not between 0 and 1 |",
                      br.swapdev_table([b]))

    SAME = "zram lz4 - 64kB same 1 whole 1 {out} {inn} 1.0 0.0 0 0 0 0 0 8192 0 0\n"

    def test_f_from_zrams_same_filled_pages(self):
        # zram's same-filled run of the round takes 0.5 s of its 1 s out
        # (f 0.50, limit 1.33: 1.25x is 94%) and 0.75 s of its 1 s in
        # (f 0.25, limit 1.14); the cost line (f 1.64) is not used
        b = self.boot(self.ZRAM.format(out=1.0) + self.ZB.format(out=0.8) +
                      self.SAME.format(out=0.5, inn=0.75) + "cost lz4 real compress 200000\n")
        self.assertIn("| 1.25 [1.25-1.25] | 1.33 (f 0.50, 94%) | 1.00 [1.00-1.00] | "
                      "1.14 (f 0.25, 88%) |", br.swapdev_table([b]))

    def test_f_from_same_filled_pages_round_by_round(self):
        # round 1: f 0.5; round 2: zram's real run 2 s, its same run 0.5 s:
        # f 0.75; a round without a same run gives none. Median f 0.625
        def rnd(line, r):
            return line.replace(" whole 1 ", f" whole {r} ")
        b = self.boot(self.ZRAM.format(out=1.0) + self.ZB.format(out=0.8) +
                      self.SAME.format(out=0.5, inn=0.75) +
                      rnd(self.ZRAM.format(out=2.0), 2) + rnd(self.ZB.format(out=1.6), 2) +
                      rnd(self.SAME.format(out=0.5, inn=0.75), 2) +
                      rnd(self.ZRAM.format(out=9.0), 3) + rnd(self.ZB.format(out=7.2), 3))
        self.assertIn("(f 0.62, ", br.swapdev_table([b]))

    def test_same_filled_slower_than_real_is_no_limit(self):
        b = self.boot(self.ZRAM.format(out=1.0) + self.ZB.format(out=0.8) +
                      self.SAME.format(out=1.5, inn=1.5))
        self.assertIn("| invalid: f -0.50, not between 0 and 1 |", br.swapdev_table([b]))

    def test_same_filled_runs_are_not_rows(self):
        # zram's and zbatch's same-filled runs: no row of their own
        b = self.boot(self.ZRAM.format(out=1.0) + self.ZB.format(out=0.8) +
                      self.SAME.format(out=0.5, inn=0.75) +
                      self.SAME.format(out=0.5, inn=0.75).replace("zram lz4 -", "zbatch lz4 16k"))
        self.assertEqual(br.swapdev_table([b]).count("| lz4 |"), 1)

    def test_folio_sizes_named(self):
        # 4k: no large folio; 2MB: the default THP, out whole, in 4 KiB a page
        b = self.boot("".join(
            (self.ZRAM.format(out=1.0) + self.ZB.format(out=0.8)).replace(" 64kB ", f" {m} ")
            for m in ("4k", "2MB", "64kB")))
        t = br.swapdev_table([b])
        for label in ("| 4k pages |", "| 2 MiB THP (in: 4k) |", "| 64kB mTHP |"):
            self.assertIn(label, t)

    def test_a_boot_without_the_configuration(self):
        # boot 1 has only zram's run: its cell is '-', not a crash
        b1 = self.boot(self.ZRAM.format(out=1.0))
        b2 = self.boot(self.ZRAM.format(out=1.0) + self.ZB.format(out=0.8))
        self.assertIn("| **1.25** (-, 1.25) [1.25-1.25] |", br.swapdev_table([b1, b2]))

    def test_range_is_every_round_of_every_boot(self):
        # boot 1: rounds at 1.25x and 1.75x (median 1.50); boot 2: 1.00x.
        # The bracket spans the rounds (1.00-1.75), not the boots' medians
        def rnd(line, r):
            return line.replace(" whole 1 ", f" whole {r} ")
        b1 = self.boot(self.ZRAM.format(out=1.0) + self.ZB.format(out=0.8) +
                       rnd(self.ZRAM.format(out=1.0), 2) + rnd(self.ZB.format(out=1 / 1.75), 2))
        b2 = self.boot(self.ZRAM.format(out=1.0) + self.ZB.format(out=1.0))
        self.assertIn("| **1.25** (1.50, 1.00) [1.00-1.75] |", br.swapdev_table([b1, b2]))

    def test_empty_boot_is_named(self):
        b1 = self.boot("# nothing\n")
        b2 = self.boot(self.ZRAM.format(out=1.0) + self.ZB.format(out=0.8))
        t = br.swapdev_table([b1, b2])
        self.assertIn("**No runs in " + os.path.basename(b1), t)
        self.assertIn("(no runs:", br.swapdev_table([b1]))

    def test_stored_against_the_codec_on_blocks(self):
        # 16k units stored 15000000 of 33554432 bytes; lz4 alone on 16 KiB
        # blocks gives 15099494: 0.7% less; 10% less than on 4 KiB blocks
        t = br.swapdev_table([os.path.join(RUN, "swapdev-runs-1.txt")],
                             br.load_blocks(os.path.join(RUN, "blocks.txt")))
        self.assertIn("| 0.456 | -10.0% | -0.7% |", t)
        self.assertIn("against 4 KiB blocks: 16k blocks -10.0%", t)

    def test_recompression(self):
        # saving 1 - 12 MB / 16 MiB against zram zstd's the same: 1.00x;
        # CPU: (8192 - 192 pages) x (30517 + 100000 ns) = 1.04 s over 0.5 s;
        # background: swap-out 0.84 / 0.8, swap-in 0.8 / 0.8
        t = br.recomp_table([os.path.join(RUN, "swapdev-runs-1.txt")])
        self.assertIn("| lz4 -> zstd | 4k | every page, `recompress` | estimated | "
                      "28.47 [28.47-28.47] | "
                      "28.47 [28.47-28.47] | 1.00 [1.00-1.00] | 2.09 [2.09-2.09] | "
                      "0.60 [0.60-0.60] | - |", t)
        self.assertIn("| lz4 -> zstd | 16k | background, another device | - | - | - | - | - | - | "
                      "out 1.05 [1.05-1.05], in 1.00 [1.00-1.00]; 1500 pages tried meanwhile |", t)
        self.assertEqual(br.recomp_table([os.path.join(HERE, "swapdev-runs.txt")]),
                         "(not measured)")
        # recompression's rows stay out of the device table
        self.assertNotIn("recomp", br.swapdev_table([os.path.join(RUN, "swapdev-runs-1.txt")]))

    def test_recompression_against_zram_measured(self):
        # zram built with recompression ran it: its own saving, 1 - 14 MB
        # / 16 MiB = 16.55%, and its writer's CPU, 0.75 s over zbatch's
        # 0.5 s; not the estimate (zram zstd's 28.47%, 2.09x)
        whole = "{} lz4 {} 64kB real 1 whole 1 1.0 1.0 1.0 0.0 33554432 16777216 17000000 " \
                "0 0 192 0 0 0 0 0 0\n"
        b = self.boot(whole.format("zram", "-") + whole.format("zbatch", "4k")
                      + "zram zstd - 64kB real 1 whole 1 2.0 1.5 2.0 0.0 33554432 12000000 "
                      "12500000 0 0 192 0 0 0 0 0 0\n"
                      "zram lz4 - 64kB real 1 recomp 1 1.0 1.0 1.0 0.0 33554432 14000000 "
                      "14500000 0 0 192 0 0 0 0.9 0.75 0\n"
                      "zbatch lz4 4k 64kB real 1 recomp 1 1.0 1.0 1.0 0.0 33554432 12000000 "
                      "13000000 0 0 192 0 0 0 0.6 0.5 0\n"
                      "cost zstd real compress 100000\ncost lz4 real decompress 30517\n")
        t = br.recomp_table([b])
        self.assertIn("| lz4 -> zstd | 4k | every page, `recompress` | measured | "
                      "28.47 [28.47-28.47] | 16.55 [16.55-16.55] | 1.72 [1.72-1.72] | "
                      "1.50 [1.50-1.50] | 0.60 [0.60-0.60] | - |", t)
        # zram's recompression run is not a device row
        self.assertNotIn("recomp", br.swapdev_table([b]))
        # a boot without zram's run beside one with it: measured figures
        # only (that boot's zram cells empty), never mixed with estimates
        t = br.recomp_table([b, os.path.join(RUN, "swapdev-runs-1.txt")])
        self.assertIn("| lz4 -> zstd | 4k | every page, `recompress` | measured | "
                      "**28.47** (28.47, 28.47) | **16.55** (16.55, -) |", t)

    def test_wrong_field_count_names_the_line(self):
        p = self.boot("zram lz4 - 64kB real 1 whole 1 1.0\n")
        with self.assertRaises(SystemExit) as e:
            br.load_swap(p)
        self.assertIn(":1: 9 fields", str(e.exception))

    def test_not_a_number_names_the_line(self):
        p = self.boot(self.ZRAM.format(out="null"))
        with self.assertRaises(SystemExit) as e:
            br.load_swap(p)
        self.assertIn(":1: pageout_s is 'null'", str(e.exception))


class Doc(unittest.TestCase):
    def setUp(self):
        self.top = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.top)
        os.makedirs(os.path.join(self.top, "Documentation"))
        os.makedirs(os.path.join(self.top, "bench"))
        shutil.copy(os.path.join(TOP, "Documentation", "performance.md"),
                    os.path.join(self.top, "Documentation"))
        self.doc = os.path.join(self.top, "Documentation", "performance.md")

    def run_doc(self, run=RUN):
        with redirect_stdout(io.StringIO()):
            br.doc(run, self.top)
        with open(self.doc, encoding="utf-8") as f:
            return f.read()

    def test_every_block_filled(self):
        text = self.run_doc()
        self.assertNotIn("(not measured)", text)
        self.assertNotIn("(not run yet)", text)
        # batch 16: 1.80 and 1.90 in two boots against a 1.50 ceiling
        self.assertIn("| lz4 | compress | sync | 1.50 (1.50, 1.50) | 1.85 (1.80, 1.90) | "
                      "123% (120, 127) | 80% | 1.00 (1.00, 1.00) | 1.85 (1.80, 1.90) | "
                      "1.87 (1.87, 1.87) | 1.10 (1.10, 1.10) | no: over ceiling, cpu |", text)
        # zswap: write 1200/1000, read 400/500, system CPU 1.8/2.0; stored
        # 204800 and 184320 bytes for 100 pages
        self.assertIn("| lz4 | 1.20 | 0.80 | 0.90 | 0.500 | 0.450 |", text)
        self.assertIn("(every part ran)", text)
        self.assertIn("7.25 (7.20, 7.30) | yes |", text)
        self.assertIn("| -10.0% | -0.7% |", text)
        # filled twice: the same document (the blocks replace, never append)
        self.assertEqual(text, self.run_doc())
        with open(os.path.join(self.top, "bench", "results.json"), encoding="utf-8") as f:
            res = json.load(f)
        z16 = [r for r in res["zbatch"] if r["batch"] == 16][0]
        self.assertEqual(z16["speedup_per_boot"], [1.8, 1.9])
        self.assertEqual(res["boots"], 2)

    def test_unknown_marker_is_an_error(self):
        with open(self.doc, "a", encoding="utf-8") as f:
            f.write("\n<!-- bench:nosuch -->\nx\n<!-- /bench -->\n")
        with self.assertRaises(SystemExit) as e:
            self.run_doc()
        self.assertIn("bench:nosuch", str(e.exception))

    def test_document_unchanged_after_an_error(self):
        with open(self.doc, "a", encoding="utf-8") as f:
            f.write("\n<!-- bench:nosuch -->\nx\n<!-- /bench -->\n")
        with open(self.doc, encoding="utf-8") as f:
            before = f.read()
        with self.assertRaises(SystemExit):
            self.run_doc()
        with open(self.doc, encoding="utf-8") as f:
            self.assertEqual(f.read(), before)

    def test_unclosed_block_is_an_error(self):
        with open(self.doc, encoding="utf-8") as f:
            text = f.read()
        with open(self.doc, "w", encoding="utf-8") as f:
            f.write(re.sub(r"(<!-- bench:took -->[^<]*)<!-- /bench -->", r"\1", text, count=1))
        with self.assertRaises(SystemExit) as e:
            self.run_doc()
        self.assertIn("'bench:took' has no '<!-- /bench -->'", str(e.exception))

    def test_each_failed_part_on_its_own(self):
        run = os.path.join(self.top, "run")
        shutil.copytree(RUN, run)
        with open(os.path.join(run, "meta"), "a", encoding="utf-8") as f:
            f.write("failed=the batch-2 part (vm-run status 1, guest console in x; y): "
                    "its figures are missing or partial\n"
                    "failed=the run stopped before its end\n")
        text = self.run_doc(run)
        self.assertIn("**FAILED: the batch-2 part (vm-run status 1, guest console in x; y): "
                      "its figures are missing or partial.**\n\n**FAILED: the run stopped "
                      "before its end.**", text)
        self.assertNotIn("(every part ran)", text)

    def test_without_the_batch_part_only_what_ran(self):
        # BENCH_NO_BATCH=1: the swap device's and zswap's blocks are
        # replaced; the batch part's blocks and results.json are kept
        run = os.path.join(self.top, "run")
        shutil.copytree(RUN, run)
        for b in ("batch-1", "batch-2"):
            shutil.rmtree(os.path.join(run, b))
        with open(os.path.join(self.top, "bench", "results.json"), "w", encoding="utf-8") as f:
            f.write("{}\n")
        with open(self.doc, encoding="utf-8") as f:
            before = f.read()
        batch = re.search(r"<!-- bench:batch-detail -->.*?<!-- /bench -->", before, re.S).group(0)
        earlier = (re.search(r"parts from the run of (\d{4}-\d{2}-\d{2})", before) or
                   re.search(r"<!-- bench:run -->(\d{4}-\d{2}-\d{2})", before)).group(1)
        text = self.run_doc(run)
        self.assertIn(batch, text)
        self.assertIn("<!-- bench:run -->2026-12-02 for the swap device and zswap parts "
                      f"(3 minutes), the other parts from the run of {earlier}; "
                      "host: 2 cores, test; guest: test guest<!-- /bench -->", text)
        self.assertIn("| lz4 | 1.20 | 0.80 | 0.90 | 0.500 | 0.450 |", text)
        self.assertIn("| -10.0% | -0.7% |", text)
        with open(os.path.join(self.top, "bench", "results.json"), encoding="utf-8") as f:
            self.assertEqual(f.read(), "{}\n")
        # again: the other parts keep their date (not this run's)
        self.assertEqual(text, self.run_doc(run))

    def test_only_the_parts_the_run_measured(self):
        # meta's parts: an earlier run's batch-N/ and zswap runs left in the
        # directory are not this run's, and keep their blocks
        run = os.path.join(self.top, "run")
        shutil.copytree(RUN, run)
        with open(os.path.join(run, "meta"), "a", encoding="utf-8") as f:
            f.write("parts=swapdev\n")
        with open(self.doc, encoding="utf-8") as f:
            before = f.read()
        zswap = re.search(r"<!-- bench:zswap -->.*?<!-- /bench -->", before, re.S).group(0)
        batch = re.search(r"<!-- bench:batch-detail -->.*?<!-- /bench -->", before, re.S).group(0)
        text = self.run_doc(run)
        self.assertIn(zswap, text)
        self.assertIn(batch, text)
        self.assertIn("<!-- bench:run -->2026-12-02 for the swap device part (3 minutes)", text)
        self.assertIn("| -10.0% | -0.7% |", text)

    def test_a_run_of_no_part_is_named(self):
        run = os.path.join(self.top, "run")
        shutil.copytree(RUN, run)
        with open(os.path.join(run, "meta"), "a", encoding="utf-8") as f:
            f.write("parts=\n")
        with self.assertRaises(SystemExit) as e:
            self.run_doc(run)
        self.assertIn("the run measured no part", str(e.exception))

    def test_no_results_at_all_is_an_error(self):
        run = os.path.join(self.top, "run")
        os.makedirs(run)
        with self.assertRaises(SystemExit) as e:
            self.run_doc(run)
        self.assertIn("no results in", str(e.exception))

    def test_missing_marker_is_an_error(self):
        with open(self.doc, encoding="utf-8") as f:
            text = f.read()
        with open(self.doc, "w", encoding="utf-8") as f:
            f.write(text.replace("<!-- bench:zswap -->", "<!-- zswap -->"))
        with self.assertRaises(SystemExit) as e:
            self.run_doc()
        self.assertIn("no marker for bench:zswap", str(e.exception))


class Demo(unittest.TestCase):
    def test_demo_summary(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        shutil.copy(os.path.join(RUN, "batch-1", "batch.txt"), d)
        shutil.copy(os.path.join(HERE, "swapdev-runs.txt"), os.path.join(d, "demo-runs.txt"))
        out = subprocess.run([sys.executable, SCRIPT, "demo", d], check=True,
                             capture_output=True, text=True).stdout
        self.assertIn("lz4   compress      1.80x   [1.80-1.80]    1.00x  1.10x   1.50x", out)
        self.assertIn("| lz4 | 16k | 64kB mTHP | 1 | whole | 2.00 [2.00-2.00]", out)


if __name__ == "__main__":
    unittest.main()
