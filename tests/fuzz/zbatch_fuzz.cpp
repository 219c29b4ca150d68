// SPDX-License-Identifier: GPL-2.0
// Hostile input for the module, run in the guest as root (make check runs
// it for about a minute; make fuzz SECONDS=N for longer):
//
//   dev    random and mutated ZBATCH_IOC_SUBMIT batches: bad sizes and
//          counts, unknown ops, codecs and flags, NULL, unmapped, kernel
//          and misaligned pointers, buffers ending at a guard page,
//          overlapping buffers, garbage, truncated and bit-flipped streams
//          in every codec; valid requests in the same batches must still
//          round trip, and nothing may be written past a destination.
//   sysfs  random strings, huge and negative numbers, half-valid words,
//          from two threads at once, into every writable file of
//          /sys/kernel/zbatch and /sys/kernel/debug/zbatch (except the
//          self-test trigger); every value is put back afterwards.
//
// Reproducible: the seed is printed first; --seed S replays it. Exit 0
// when the module kept its contract (the guest's kernel log is checked by
// scripts/vm-run), 1 with each violation printed.
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <fcntl.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <linux/zbatch.h>

#include "zbatch/pattern.hpp"
#include "zbatch/refcodec.hpp"

namespace {

std::atomic<int> violations{0};

void violation(const std::string &what)
{
	violations++;
	std::fprintf(stderr, "zbatch_fuzz: VIOLATION: %s\n", what.c_str());
}

using Clock = std::chrono::steady_clock;

// A page-aligned buffer whose end touches a PROT_NONE guard page.
struct Guarded {
	uint8_t *base = nullptr;
	size_t map = 0;
	uint8_t *p = nullptr;	// p + len is the guard page
	size_t len = 0;
	explicit Guarded(size_t n)
	{
		size_t pages = (n + 4095) / 4096 + 1;
		map = pages * 4096;
		base = static_cast<uint8_t *>(mmap(nullptr, map, PROT_READ | PROT_WRITE,
						   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
		if (base == MAP_FAILED) {
			base = nullptr;
			return;
		}
		mprotect(base + map - 4096, 4096, PROT_NONE);
		len = n;
		p = base + map - 4096 - n;
	}
	~Guarded()
	{
		if (base)
			munmap(base, map);
	}
	Guarded(const Guarded &) = delete;
	Guarded &operator=(const Guarded &) = delete;
};

int submit(int fd, uint32_t op, uint32_t codec, uint32_t flags, zbatch_ioc_req *r, uint32_t n,
	   uint32_t size = sizeof(zbatch_ioc_batch))
{
	zbatch_ioc_batch b{};
	b.size = size;
	b.req_size = sizeof(zbatch_ioc_req);
	b.op = op;
	b.codec = codec;
	b.flags = flags;
	b.nr_reqs = n;
	b.reqs = reinterpret_cast<uintptr_t>(r);
	return ioctl(fd, ZBATCH_IOC_SUBMIT, &b) ? errno : 0;
}

const std::set<int> kBatchErrnos = {EINVAL, EFAULT, E2BIG, ENOMEM};
const std::set<int> kReqStatus = {0, -EINVAL, -ENOSPC, -EBADMSG, -EIO, -ETIMEDOUT, -ENOMEM};

// ---- dev ----
void fuzz_dev(std::mt19937_64 &rng, double seconds)
{
	int fd = open("/dev/zbatch", O_RDWR);
	if (fd < 0) {
		violation(std::string("open /dev/zbatch: ") + std::strerror(errno));
		return;
	}
	// an unmapped address: map a page and give it back
	void *gone = mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(gone, 4096);
	const uint64_t bad_ptrs[] = {0, 1, reinterpret_cast<uintptr_t>(gone),
				     0xffff888000000000ull, 0xffffffffffffffffull, 4095};
	auto end = Clock::now() + std::chrono::duration<double>(seconds);
	unsigned long iters = 0, ok_trips = 0;

	while (Clock::now() < end) {
		iters++;
		uint32_t codec = 1 + rng() % (ZBATCH_CODEC_NR - 1);
		unsigned n = 1 + rng() % 16;
		// plant valid pages in the batch; they must round trip
		std::vector<std::vector<uint8_t>> in(n);
		std::vector<std::unique_ptr<Guarded>> cmp, out;
		std::vector<zbatch_ioc_req> r(n);
		std::vector<bool> valid(n, true);
		for (unsigned i = 0; i < n; i++) {
			size_t len = 1 + rng() % 8192;
			in[i] = zbatch::generate(static_cast<zbatch::Pattern>(rng() % 4), len, rng());
			cmp.push_back(std::make_unique<Guarded>(len + len / 2 + 64));
			r[i].src = reinterpret_cast<uintptr_t>(in[i].data());
			r[i].src_len = static_cast<uint32_t>(len);
			r[i].dst = reinterpret_cast<uintptr_t>(cmp[i]->p);
			r[i].dst_len = static_cast<uint32_t>(cmp[i]->len);
			// one request in three is broken in some way
			if (rng() % 3 == 0) {
				valid[i] = false;
				switch (rng() % 7) {
				case 0: r[i].src = bad_ptrs[rng() % 6]; break;
				case 1: r[i].dst = bad_ptrs[rng() % 6]; break;
				case 2: r[i].src_len = rng() % 2 ? 0 : 0xffffffffu; break;
				case 3: r[i].dst_len = rng() % 2 ? 0 : ZBATCH_MAX_LEN + 1 + rng() % 100; break;
				case 4: r[i].reserved = 1 + rng() % 100; break;
				case 5:	// overlapping: the output lands on the input
					r[i].dst = r[i].src;
					r[i].dst_len = r[i].src_len;
					break;
				default: r[i].dst_len = 1 + rng() % 16; break;	// tiny room
				}
			}
		}
		// the batch itself broken sometimes
		uint32_t op = ZBATCH_OP_COMPRESS, flags = rng() % 4;	/* valid ZBATCH_F_* */
		uint32_t size = sizeof(zbatch_ioc_batch), nr = n, cd = codec;
		switch (rng() % 16) {
		case 0: nr = 0; break;
		case 1: nr = ZBATCH_MAX_BATCH + 1 + rng() % 1000; break;
		case 2: cd = ZBATCH_CODEC_NR + rng() % 100; break;
		case 3: op = 2 + rng() % 100; break;
		case 4: size = rng() % 2 ? 8 : 4096; break;
		default: break;
		}
		int e = submit(fd, op, cd, flags, r.data(), nr, size);
		bool batch_ok = nr == n && cd == codec && op == ZBATCH_OP_COMPRESS &&
				size == sizeof(zbatch_ioc_batch);
		if (e && !kBatchErrnos.count(e))
			violation("submit returned errno " + std::to_string(e));
		if (batch_ok && e && e != EFAULT && e != EINVAL)
			violation("a well-formed batch failed: errno " + std::to_string(e));
		if (e)
			continue;
		// decompress what compressed, and garbage beside it
		std::vector<zbatch_ioc_req> d;
		std::vector<unsigned> which;
		std::vector<std::vector<uint8_t>> junk;
		for (unsigned i = 0; i < n; i++) {
			if (!kReqStatus.count(r[i].status) && r[i].status != -EFAULT)
				violation("request status " + std::to_string(r[i].status));
			if (r[i].dst_len > cmp[i]->len)
				violation("produced " + std::to_string(r[i].dst_len) + " > capacity");
			if (!valid[i] || r[i].status)
				continue;
			out.push_back(std::make_unique<Guarded>(in[i].size()));
			zbatch_ioc_req q{};
			q.src = reinterpret_cast<uintptr_t>(cmp[i]->p);
			q.src_len = r[i].dst_len;
			q.dst = reinterpret_cast<uintptr_t>(out.back()->p);
			q.dst_len = static_cast<uint32_t>(in[i].size());
			d.push_back(q);
			which.push_back(i);
			// a damaged copy of the same stream: truncated, flipped or random
			std::vector<uint8_t> bad(cmp[i]->p, cmp[i]->p + r[i].dst_len);
			switch (rng() % 3) {
			case 0: bad.resize(bad.size() / 2 + 1); break;
			case 1: bad[rng() % bad.size()] ^= static_cast<uint8_t>(1 + rng() % 255); break;
			default: for (auto &c : bad) c = static_cast<uint8_t>(rng()); break;
			}
			junk.push_back(bad);
		}
		if (d.empty())
			continue;
		std::vector<std::unique_ptr<Guarded>> jout;
		size_t real = d.size();
		for (auto &j : junk) {
			if (d.size() >= ZBATCH_MAX_BATCH)
				break;
			jout.push_back(std::make_unique<Guarded>(4096 + rng() % 4096));
			zbatch_ioc_req q{};
			q.src = reinterpret_cast<uintptr_t>(j.data());
			q.src_len = static_cast<uint32_t>(j.size());
			q.dst = reinterpret_cast<uintptr_t>(jout.back()->p);
			q.dst_len = static_cast<uint32_t>(jout.back()->len);
			d.push_back(q);
		}
		e = submit(fd, ZBATCH_OP_DECOMPRESS, codec, 0, d.data(), static_cast<uint32_t>(d.size()));
		if (e) {
			violation("decompress batch failed: errno " + std::to_string(e));
			continue;
		}
		for (size_t k = 0; k < d.size(); k++) {
			if (!kReqStatus.count(d[k].status))
				violation("decompress status " + std::to_string(d[k].status));
			if (d[k].dst_len > (k < real ? in[which[k]].size() : jout[k - real]->len))
				violation("decompress produced more than its room");
		}
		for (size_t k = 0; k < real; k++) {
			unsigned i = which[k];
			if (d[k].status || d[k].dst_len != in[i].size() ||
			    std::memcmp(out[k]->p, in[i].data(), in[i].size()))
				violation("codec " + std::to_string(codec) + ": a valid page did not round trip (status " +
					  std::to_string(d[k].status) + ")");
			else
				ok_trips++;
		}
		// unknown flag bits and nonzero reserved fields are refused
		if (rng() % 8 == 0) {
			zbatch_ioc_req one = r[0];
			one.reserved = 0;
			if (submit(fd, ZBATCH_OP_COMPRESS, codec, 0x80000000u, &one, 1) != EINVAL)
				violation("unknown flags accepted");
		}
	}
	close(fd);
	std::printf("dev: %lu batches, %lu valid pages round-tripped among them\n", iters, ok_trips);
	if (!ok_trips)
		violation("no valid page ever round-tripped: the fuzzer tested nothing");
}

// ---- sysfs / debugfs ----
std::vector<std::string> writable_files()
{
	std::vector<std::string> v;
	for (const char *root : {"/sys/kernel/zbatch", "/sys/kernel/debug/zbatch"}) {
		std::error_code ec;
		for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
		     !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
			if (!it->is_regular_file())
				continue;
			auto p = it->path().string();
			auto perm = it->status().permissions();
			if ((perm & std::filesystem::perms::owner_write) == std::filesystem::perms::none)
				continue;
			// running the self-tests is not input handling; hot_remove
			// would take swap devices in use by other tests (none here)
			if (p.ends_with("/selftest"))
				continue;
			v.push_back(p);
		}
	}
	return v;
}

// The file's value, or "" when it cannot be read (write-only files).
std::string read_file(const std::string &p)
{
	int fd = open(p.c_str(), O_RDONLY);
	if (fd < 0)
		return "";
	std::string s;
	char buf[4096];
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		s.append(buf, static_cast<size_t>(n));
	close(fd);
	while (!s.empty() && s.back() == '\n')
		s.pop_back();
	return s;
}

int write_file(const std::string &p, const std::string &v)
{
	int fd = open(p.c_str(), O_WRONLY);
	if (fd < 0)
		return errno;
	ssize_t n = write(fd, v.data(), v.size());
	int e = n < 0 ? errno : 0;
	close(fd);
	return e;
}

// What to write back: the bracketed choice of a list, else the value.
std::string restorable(const std::string &v)
{
	auto l = v.find('['), r = v.find(']');
	return l != std::string::npos && r != std::string::npos && r > l ? v.substr(l + 1, r - l - 1)
									   : v;
}

std::string random_value(std::mt19937_64 &rng)
{
	static const char *words[] = {"0", "1", "-1", "lz4", "zstd", "deflate", "sync", "async_irq",
				      "always", "none", "full", "status 0x04 0 1", "corrupt 1",
				      "99999999999999999999999", "0x7fffffff", "4294967296", "-0",
				      "1 2 3", "lz4\nzstd", "on", "off", "yes", "%s%s%n", "../../x",
				      "64k", "16k", "4k", "1G", "deflate-iaa-double", ""};
	std::string v;
	switch (rng() % 4) {
	case 0:
		v = words[rng() % (sizeof(words) / sizeof(*words))];
		break;
	case 1: {
		v.resize(rng() % 300);
		for (auto &c : v)
			c = static_cast<char>(rng());
		break;
	}
	case 2:
		v = std::to_string(static_cast<int64_t>(rng()));
		break;
	default:
		v = std::string(words[rng() % (sizeof(words) / sizeof(*words))]) +
		    std::string(1, static_cast<char>(rng() % 128));
	}
	return v;
}

void fuzz_sysfs(uint64_t seed, double seconds)
{
	auto files = writable_files();
	std::map<std::string, std::string> saved;
	for (auto &f : files)
		saved[f] = read_file(f);
	std::printf("sysfs: %zu writable files\n", files.size());
	std::atomic<unsigned long> writes{0};
	auto worker = [&](uint64_t s) {
		std::mt19937_64 rng(s);
		auto end = Clock::now() + std::chrono::duration<double>(seconds);
		while (Clock::now() < end) {
			const auto &f = files[rng() % files.size()];
			// hot_add creates a device on read, never on write; a
			// fault or a nomem injection is fine for the module, but
			// keep the fuzzer's own traffic flowing
			int e = write_file(f, random_value(rng));
			if (e && e != EINVAL && e != EBUSY && e != ERANGE && e != ENODEV &&
			    e != ENOENT && e != EPERM && e != ENOSPC && e != E2BIG && e != EIO)
				violation(f + ": errno " + std::to_string(e));
			writes++;
		}
	};
	std::thread a(worker, seed + 1), b(worker, seed + 2);
	a.join();
	b.join();
	// put everything back: choices, values; fault injection off first
	for (auto &f : files)
		if (f.ends_with("/fault"))
			write_file(f, "none");
	write_file("/sys/kernel/debug/zbatch/fault_nomem", "0");
	for (auto &[f, v] : saved) {
		if (f.ends_with("/reset") || f.ends_with("hot_add") || f.ends_with("hot_remove") ||
		    f.ends_with("/fault") || f.ends_with("/driver") || v.empty())
			continue;
		if (int e = write_file(f, restorable(v)))
			violation(f + ": cannot put back '" + v + "': errno " + std::to_string(e));
	}
	for (auto &[f, v] : saved)
		if (f.ends_with("/iaa/driver"))
			write_file(f, v.empty() ? "\n" : v);
	std::printf("sysfs: %lu writes from 2 threads\n", writes.load());
}

// The module still works: one page per codec, both ways.
void still_works()
{
	int fd = open("/dev/zbatch", O_RDWR);
	if (fd < 0) {
		violation("open /dev/zbatch after fuzzing failed");
		return;
	}
	for (uint32_t codec = 1; codec < ZBATCH_CODEC_NR; codec++) {
		auto in = zbatch::generate(zbatch::Pattern::Text, 4096, codec);
		std::vector<uint8_t> c(8192), o(4096);
		zbatch_ioc_req r{reinterpret_cast<uintptr_t>(in.data()), reinterpret_cast<uintptr_t>(c.data()),
				 4096, 8192, 0, 0};
		if (submit(fd, ZBATCH_OP_COMPRESS, codec, 0, &r, 1) || r.status) {
			violation("after fuzzing, compress fails in codec " + std::to_string(codec));
			continue;
		}
		zbatch_ioc_req d{reinterpret_cast<uintptr_t>(c.data()), reinterpret_cast<uintptr_t>(o.data()),
				 r.dst_len, 4096, 0, 0};
		if (submit(fd, ZBATCH_OP_DECOMPRESS, codec, 0, &d, 1) || d.status || o != in)
			violation("after fuzzing, a round trip fails in codec " + std::to_string(codec));
	}
	close(fd);
}

} // namespace

int main(int argc, char **argv)
{
	double seconds = 30;
	uint64_t seed = std::random_device{}();
	std::string what = "all";
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		if (a == "--seconds" && i + 1 < argc)
			seconds = std::stod(argv[++i]);
		else if (a == "--seed" && i + 1 < argc)
			seed = std::stoull(argv[++i]);
		else if (a == "dev" || a == "sysfs" || a == "all")
			what = a;
		else {
			std::fprintf(stderr, "usage: zbatch_fuzz [dev|sysfs|all] [--seconds N] [--seed S]\n");
			return 2;
		}
	}
	std::printf("zbatch_fuzz: seed %llu (replay: --seed %llu), %s, %.0f s\n",
		    static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed),
		    what.c_str(), seconds);
	std::fflush(stdout);
	std::mt19937_64 rng(seed);
	double dev_s = what == "all" ? seconds * 2 / 3 : seconds;
	if (what != "sysfs")
		fuzz_dev(rng, dev_s);
	if (what != "dev")
		fuzz_sysfs(seed, what == "all" ? seconds - dev_s : seconds);
	still_works();
	std::printf("zbatch_fuzz: %d violation(s)\n", violations.load());
	return violations ? 1 : 0;
}
