// Reading and writing whole files at railsim's edges, with errors that name
// the file and the flag it came from.
#pragma once

#include <string>
#include <string_view>

namespace railsim {

/// Spec files are hand-written JSON; anything bigger than this is a mistake
/// (a log or a binary given by accident) and is refused before it is read.
constexpr size_t kMaxInputFileBytes = 16 << 20;

/// Returns the contents of the regular file at `path`. Throws
/// Error(where, ...) if it is missing, a directory, unreadable or larger than
/// kMaxInputFileBytes.
std::string ReadTextFile(const std::string& path, const std::string& where);

/// True if `path` names an existing filesystem entry (file or not).
bool PathExists(const std::string& path);

/// Creates the directory `path` and its parents if missing. Throws
/// Error(where, ...) when it cannot, or when `path` is not a directory.
void MakeDirectory(const std::string& path, const std::string& where);

/// Writes `contents` to `path`, replacing it. Throws Error(where, ...) on failure.
void WriteTextFile(const std::string& path, std::string_view contents, const std::string& where);

}  // namespace railsim
