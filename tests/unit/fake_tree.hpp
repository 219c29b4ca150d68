// SPDX-License-Identifier: GPL-2.0
// A throw-away directory standing in for the root of sysfs/debugfs.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

class FakeTree {
public:
	FakeTree()
	{
		std::string tmpl = (std::filesystem::temp_directory_path() / "zbatch-fake.XXXXXX").string();
		root_ = ::mkdtemp(tmpl.data());
	}
	~FakeTree()
	{
		std::error_code ec;
		std::filesystem::remove_all(root_, ec);
	}
	FakeTree(const FakeTree &) = delete;
	FakeTree &operator=(const FakeTree &) = delete;

	const std::filesystem::path &root() const { return root_; }

	void put(const std::string &path, const std::string &content)
	{
		auto full = root_ / path.substr(path.find_first_not_of('/'));
		std::filesystem::create_directories(full.parent_path());
		std::ofstream(full) << content;
	}

	// The path becomes a directory: reading it fails as an unreadable
	// attribute does.
	void unreadable(const std::string &path)
	{
		auto full = root_ / path.substr(path.find_first_not_of('/'));
		std::filesystem::remove(full);
		std::filesystem::create_directories(full);
	}

private:
	std::filesystem::path root_;
};
