// SPDX-License-Identifier: GPL-2.0
// Console: where a command's output goes, and the user's conventions for
// it: data (tables, values, JSON) always on stdout; notes about what was
// done on stdout unless --quiet; details on stderr with --verbose; a
// progress line on stderr only when stderr is a terminal; colour only on a
// terminal (and never with NO_COLOR set). Host tests capture it.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/core.h>

namespace zbatch {

enum class Verbosity { Quiet, Normal, Verbose };

class Console {
public:
	enum class Stream { Out, Err };

	// @colour: mark words in colour (status, validate); @progress: draw a
	// progress line (long runs); main() sets both from isatty().
	Console(Verbosity v, bool colour, bool progress)
		: verbosity_(v), colour_(colour), progress_(progress) {}
	virtual ~Console() = default;

	// Data the command was asked for: never suppressed.
	template <typename... T>
	void print(fmt::format_string<T...> f, T &&...a)
	{
		write(Stream::Out, fmt::format(f, std::forward<T>(a)...));
	}
	// What was done ("zbatch loaded"): not with --quiet.
	template <typename... T>
	void note(fmt::format_string<T...> f, T &&...a)
	{
		if (verbosity_ != Verbosity::Quiet)
			write(Stream::Out, fmt::format(f, std::forward<T>(a)...));
	}
	// Not the data, but worth knowing (stderr: the data's stream stays
	// clean for a parser): not with --quiet.
	template <typename... T>
	void warning(fmt::format_string<T...> f, T &&...a)
	{
		if (verbosity_ != Verbosity::Quiet)
			write(Stream::Err, "zbatch: warning: " +
					   fmt::format(f, std::forward<T>(a)...));
	}
	// How it was done (each write, each step): only with --verbose.
	template <typename... T>
	void detail(fmt::format_string<T...> f, T &&...a)
	{
		if (verbosity_ == Verbosity::Verbose)
			write(Stream::Err, fmt::format(f, std::forward<T>(a)...));
	}
	// One line redrawn in place on stderr; end_progress() ends it.
	void progress(std::string_view line);
	void end_progress();
	bool shows_progress() const { return progress_ && verbosity_ != Verbosity::Quiet; }

	// @word in red/green/yellow on a colour terminal, as it is otherwise.
	std::string bad(std::string_view word) const { return paint("31", word); }
	std::string good(std::string_view word) const { return paint("32", word); }
	std::string warn(std::string_view word) const { return paint("33", word); }

	Verbosity verbosity() const { return verbosity_; }
	virtual void flush() {}

protected:
	virtual void write(Stream s, std::string_view text) = 0;

private:
	std::string paint(const char *code, std::string_view word) const;

	Verbosity verbosity_;
	bool colour_;
	bool progress_;
	bool in_progress_ = false;
};

// The terminal: stdout and stderr.
class StdConsole final : public Console {
public:
	explicit StdConsole(Verbosity v);
	void flush() override;

protected:
	void write(Stream s, std::string_view text) override;
};

// Everything kept in two strings (host tests).
class StringConsole final : public Console {
public:
	explicit StringConsole(Verbosity v = Verbosity::Normal, bool tty = false)
		: Console(v, tty, tty) {}
	std::string out, err;

protected:
	void write(Stream s, std::string_view text) override
	{
		(s == Stream::Out ? out : err).append(text);
	}
};

} // namespace zbatch
