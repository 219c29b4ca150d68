// SPDX-License-Identifier: GPL-2.0
// Error type shared by the library: an errno-style code and a message that
// names the file or value at fault.
#pragma once

#include <expected>
#include <string>

namespace zbatch {

// Exit codes of every zbatch command (Documentation/cli.md).
enum ExitCode : int {
	kExitOk = 0,
	kExitFailure = 1,
	kExitUsage = 2,
	kExitSkipped = 77,	// no hardware, no module or not root
};

struct Error {
	int code = 0;		// positive errno value, 0 when none applies
	std::string message;
	int exit = kExitFailure;	// what the CLI exits with
};

template <typename T>
using Result = std::expected<T, Error>;

inline std::unexpected<Error> fail(int code, std::string message)
{
	return std::unexpected<Error>(Error{code, std::move(message)});
}

// A condition that makes the command not applicable here (exit 77).
inline std::unexpected<Error> skip(int code, std::string message)
{
	return std::unexpected<Error>(Error{code, std::move(message), kExitSkipped});
}

} // namespace zbatch
