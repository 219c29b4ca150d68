// SPDX-License-Identifier: GPL-2.0
// KmodModules: the Modules interface on libkmod.
#include "zbatch/kmod.hpp"

#include <cerrno>
#include <cstring>
#include <sstream>

#include <fmt/core.h>
#include <libkmod.h>

namespace zbatch {

namespace {

class KmodModules : public Modules {
public:
	KmodModules() : ctx_(kmod_new(nullptr, nullptr))
	{
		if (ctx_)
			kmod_load_resources(ctx_);
	}
	~KmodModules() override
	{
		if (ctx_)
			kmod_unref(ctx_);
	}

	bool loaded(const std::string &name) override
	{
		struct kmod_module *m = nullptr;
		if (!ctx_ || kmod_module_new_from_name(ctx_, name.c_str(), &m) < 0)
			return false;
		int st = kmod_module_get_initstate(m);
		kmod_module_unref(m);
		return st == KMOD_MODULE_LIVE || st == KMOD_MODULE_COMING;
	}

	Result<void> load(const std::string &module, const std::string &params) override
	{
		if (!ctx_)
			return fail(ENOMEM, "libkmod: cannot create a context");
		bool is_path = module.find('/') != std::string::npos ||
			       module.ends_with(".ko");
		if (!is_path)
			return probe(module, params);
		struct kmod_module *m = nullptr;
		int r = kmod_module_new_from_path(ctx_, module.c_str(), &m);
		if (r < 0)
			return fail(-r, fmt::format("{}: {}", module, std::strerror(-r)));
		// a module given by path is not in modules.dep: load its
		// 'depends' by name first
		for (const auto &dep : depends(m)) {
			if (auto d = probe(dep, ""); !d) {
				kmod_module_unref(m);
				return d;
			}
		}
		r = kmod_module_insert_module(m, 0, params.empty() ? nullptr : params.c_str());
		kmod_module_unref(m);
		if (r < 0)
			return fail(-r, fmt::format("loading {}{}: {}", module,
						    params.empty() ? "" : " " + params,
						    std::strerror(-r)) +
					(r == -EINVAL ? " (a parameter out of range? see dmesg)" : ""));
		return {};
	}

	Result<void> unload(const std::string &name) override
	{
		struct kmod_module *m = nullptr;
		int r = kmod_module_new_from_name(ctx_, name.c_str(), &m);
		if (r < 0)
			return fail(-r, fmt::format("{}: {}", name, std::strerror(-r)));
		r = kmod_module_remove_module(m, 0);
		kmod_module_unref(m);
		if (r < 0)
			return fail(-r, fmt::format("unloading {}: {}", name, std::strerror(-r)));
		return {};
	}

	int refcount(const std::string &name) override
	{
		struct kmod_module *m = nullptr;
		if (kmod_module_new_from_name(ctx_, name.c_str(), &m) < 0)
			return -1;
		int n = kmod_module_get_refcnt(m);
		kmod_module_unref(m);
		return n;
	}

	std::vector<std::string> holders(const std::string &name) override
	{
		std::vector<std::string> out;
		struct kmod_module *m = nullptr;
		if (kmod_module_new_from_name(ctx_, name.c_str(), &m) < 0)
			return out;
		struct kmod_list *l = kmod_module_get_holders(m), *it;
		kmod_list_foreach(it, l) {
			struct kmod_module *h = kmod_module_get_module(it);
			out.push_back(kmod_module_get_name(h));
			kmod_module_unref(h);
		}
		kmod_module_unref_list(l);
		kmod_module_unref(m);
		return out;
	}

private:
	Result<void> probe(const std::string &name, const std::string &params)
	{
		struct kmod_list *list = nullptr, *it;
		int r = kmod_module_new_from_lookup(ctx_, name.c_str(), &list);
		if (r < 0 || !list)
			return fail(ENOENT, fmt::format("module {} not found in /lib/modules", name));
		r = 0;
		kmod_list_foreach(it, list) {
			struct kmod_module *m = kmod_module_get_module(it);
			r = kmod_module_probe_insert_module(m, KMOD_PROBE_IGNORE_LOADED,
							    params.empty() ? nullptr : params.c_str(),
							    nullptr, nullptr, nullptr);
			kmod_module_unref(m);
			if (r < 0)
				break;
		}
		kmod_module_unref_list(list);
		if (r < 0)
			return fail(-r, fmt::format("loading {}: {}", name, std::strerror(-r)));
		return {};
	}

	std::vector<std::string> depends(struct kmod_module *m)
	{
		std::vector<std::string> out;
		struct kmod_list *info = nullptr, *it;
		if (kmod_module_get_info(m, &info) < 0)
			return out;
		kmod_list_foreach(it, info) {
			if (std::string(kmod_module_info_get_key(it)) != "depends")
				continue;
			std::stringstream ss(kmod_module_info_get_value(it));
			std::string d;
			while (std::getline(ss, d, ','))
				if (!d.empty())
					out.push_back(d);
		}
		kmod_module_info_free_list(info);
		return out;
	}

	struct kmod_ctx *ctx_;
};

} // namespace

std::unique_ptr<Modules> make_kmod_modules()
{
	return std::make_unique<KmodModules>();
}

} // namespace zbatch
