#include "railsim/core/file.h"

#include <filesystem>

#include <cassert>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "railsim/core/error.h"

namespace railsim {

bool PathExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string ReadTextFile(const std::string& path, const std::string& where) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    throw Error(where, fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  }
  if (S_ISDIR(st.st_mode)) throw Error(where, fmt::format("expected a file, got directory '{}'", path));
  if (!S_ISREG(st.st_mode)) throw Error(where, fmt::format("expected a regular file, got '{}'", path));
  if (static_cast<size_t>(st.st_size) > kMaxInputFileBytes) {
    throw Error(where, fmt::format("'{}' is {} bytes; expected at most {} bytes", path, st.st_size,
                                   kMaxInputFileBytes));
  }
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw Error(where, fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  std::string contents;
  char buffer[65536];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) {
    contents.append(buffer, n);
    if (contents.size() > kMaxInputFileBytes) break;
  }
  bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) throw Error(where, fmt::format("cannot read '{}': read error", path));
  if (contents.size() > kMaxInputFileBytes) {
    throw Error(where, fmt::format("'{}' is larger than {} bytes", path, kMaxInputFileBytes));
  }
  return contents;
}

void MakeDirectory(const std::string& path, const std::string& where) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) throw Error(where, fmt::format("cannot create directory '{}': {}", path, ec.message()));
  if (!std::filesystem::is_directory(path, ec)) {
    throw Error(where, fmt::format("expected a directory, got '{}'", path));
  }
}

void CheckDirectoryCanBeMade(const std::string& path, const std::string& where) {
  std::filesystem::path p(path);
  for (; !p.empty(); p = p.parent_path()) {
    struct stat st;
    if (::stat(p.c_str(), &st) != 0) continue;
    if (!S_ISDIR(st.st_mode)) {
      throw Error(where, fmt::format("cannot make the directory '{}': '{}' is a file", path, p.string()));
    }
    if (::access(p.c_str(), W_OK | X_OK) != 0) {
      throw Error(where, fmt::format("cannot make the directory '{}': '{}' is not writable", path, p.string()));
    }
    return;
  }
}

namespace {

// Temporaries being written, for the signal handler: fixed storage, because
// a handler may only call async-signal-safe functions (unlink, raise).
constexpr int kMaxTemporaries = 16;
constexpr size_t kMaxTempPath = 4096;
char g_temporaries[kMaxTemporaries][kMaxTempPath];
volatile std::sig_atomic_t g_in_use[kMaxTemporaries];

extern "C" void RemoveTemporariesAndDie(int signal_number) {
  for (int i = 0; i < kMaxTemporaries; ++i) {
    if (g_in_use[i]) ::unlink(g_temporaries[i]);
  }
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

int RegisterTemporary(const std::string& path) {
  static const bool installed = [] {
    // Only over the default action (death): an embedder's handler stays
    // (Python's raises KeyboardInterrupt, and unwinding then removes the
    // temporary), and so does an ignored signal.
    for (int s : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old {};
      if (::sigaction(s, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) std::signal(s, RemoveTemporariesAndDie);
    }
    return true;
  }();
  (void)installed;
  if (path.size() >= kMaxTempPath) return -1;
  for (int i = 0; i < kMaxTemporaries; ++i) {
    if (!g_in_use[i]) {
      std::memcpy(g_temporaries[i], path.c_str(), path.size() + 1);
      g_in_use[i] = 1;
      return i;
    }
  }
  return -1;  // more than kMaxTemporaries at once: still removed on error, not on a signal
}

}  // namespace

AtomicFile::AtomicFile(std::string path, std::string where) : path_(std::move(path)), where_(std::move(where)) {
  struct stat st;
  if (::stat(path_.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    throw Error(where_, fmt::format("expected a file path, got directory '{}'", path_));
  }
  temp_ = fmt::format("{}.tmp{}", path_, static_cast<long>(::getpid()));
  slot_ = RegisterTemporary(temp_);
  file_ = std::fopen(temp_.c_str(), "wb");
  if (!file_) {
    const int error = errno;
    Discard();
    throw Error(where_, fmt::format("cannot write '{}': {}", path_, std::strerror(error)));
  }
}

AtomicFile::~AtomicFile() { Discard(); }

void AtomicFile::Discard() noexcept {
  if (file_) {
    std::fclose(file_);
    file_ = nullptr;
    ::unlink(temp_.c_str());
  }
  if (slot_ >= 0) {
    g_in_use[slot_] = 0;
    slot_ = -1;
  }
}

void AtomicFile::Write(std::string_view text) {
  assert(file_ && "Write after Commit");
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size()) {
    const int error = errno;
    Discard();
    throw Error(where_, fmt::format("cannot write '{}': {}", path_, std::strerror(error)));
  }
}

void AtomicFile::Commit() {
  assert(file_ && "Commit twice");
  bool ok = std::fflush(file_) == 0;
  int error = errno;
  if (std::fclose(file_) != 0 && ok) {
    ok = false;
    error = errno;
  }
  file_ = nullptr;
  if (ok && std::rename(temp_.c_str(), path_.c_str()) != 0) {
    ok = false;
    error = errno;
  }
  if (!ok) ::unlink(temp_.c_str());
  Discard();
  if (!ok) throw Error(where_, fmt::format("cannot write '{}': {}", path_, std::strerror(error)));
}

void WriteTextFile(const std::string& path, std::string_view contents, const std::string& where) {
  AtomicFile file(path, where);
  file.Write(contents);
  file.Commit();
}

}  // namespace railsim
