// SPDX-License-Identifier: GPL-2.0
// ScopeExit: put back on every path what a command changed on the system.
//
//	auto thp = ScopeExit([&] { (void)tree.write(path, old); });
//
// runs the lambda when it goes out of scope, whatever returned or threw;
// release() keeps the change (nothing to undo). Guards unwind in reverse
// order of their construction, as goto labels do in the kernel: declare
// the one that must run last first.
#pragma once

#include <utility>

namespace zbatch {

template <class F>
class [[nodiscard]] ScopeExit {
public:
	explicit ScopeExit(F f) : f_(std::move(f)) {}
	~ScopeExit()
	{
		if (armed_)
			f_();
	}
	ScopeExit(const ScopeExit &) = delete;
	ScopeExit &operator=(const ScopeExit &) = delete;

	void release() { armed_ = false; }

private:
	F f_;
	bool armed_ = true;
};

} // namespace zbatch
