// SPDX-License-Identifier: GPL-2.0
#include "zbatch/console.hpp"

#include <cstdlib>
#include <unistd.h>

namespace zbatch {

void Console::progress(std::string_view line)
{
	if (!shows_progress())
		return;
	write(Stream::Err, fmt::format("\r{}\033[K", line));
	in_progress_ = true;
}

void Console::end_progress()
{
	if (in_progress_)
		write(Stream::Err, "\n");
	in_progress_ = false;
}

std::string Console::paint(const char *code, std::string_view word) const
{
	if (!colour_)
		return std::string(word);
	return fmt::format("\033[{}m{}\033[0m", code, word);
}

static bool colour_wanted()
{
	const char *no = std::getenv("NO_COLOR");	// no-color.org
	const char *term = std::getenv("TERM");
	return isatty(STDOUT_FILENO) && !(no && *no) && !(term && std::string_view(term) == "dumb");
}

StdConsole::StdConsole(Verbosity v) : Console(v, colour_wanted(), isatty(STDERR_FILENO)) {}

void StdConsole::write(Stream s, std::string_view text)
{
	std::FILE *f = s == Stream::Out ? stdout : stderr;
	std::fwrite(text.data(), 1, text.size(), f);
	if (s == Stream::Err)
		std::fflush(f);
}

void StdConsole::flush()
{
	std::fflush(stdout);
}

} // namespace zbatch
