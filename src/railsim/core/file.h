// Reading and writing whole files at railsim's edges, with errors that name
// the file and the flag it came from.
#pragma once

#include <cstdio>
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
/// True if `path` names an existing directory.
bool IsDirectory(const std::string& path);

/// Creates the directory `path` and its parents if missing. Throws
/// Error(where, ...) when it cannot, or when `path` is not a directory.
void MakeDirectory(const std::string& path, const std::string& where);

/// Throws Error(where, ...) unless MakeDirectory(path) would succeed: the
/// nearest existing ancestor of `path` (or `path` itself) is a writable
/// directory. For commands that make a folder only after long work.
void CheckDirectoryCanBeMade(const std::string& path, const std::string& where);

/// A file written whole or not at all: text goes to a temporary file in the
/// same folder, renamed over `path` by Commit(). Until then an error, the
/// destructor or SIGINT/SIGTERM removes the temporary, so that no reader
/// ever finds a truncated output (a full disk, Ctrl-C). Not copyable.
class AtomicFile {
 public:
  /// Throws Error(where, ...) when `path` is a directory or its folder is
  /// not writable.
  AtomicFile(std::string path, std::string where);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  /// Appends; throws Error(where, ...) when the write fails (a full disk).
  void Write(std::string_view text);
  /// Flushes and renames the temporary into place; throws on failure.
  void Commit();

 private:
  void Discard() noexcept;
  std::string path_, where_, temp_;
  std::FILE* file_ = nullptr;
  int slot_ = -1;  ///< in the signal handler's list of temporaries
};

/// Writes `contents` to `path` through an AtomicFile. Throws Error(where, ...)
/// on failure, leaving any previous file at `path` as it was.
void WriteTextFile(const std::string& path, std::string_view contents, const std::string& where);

}  // namespace railsim
