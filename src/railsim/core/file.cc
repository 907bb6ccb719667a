#include "railsim/core/file.h"

#include <filesystem>

#include <cassert>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
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

namespace {

// This thread's innermost InputFileRecord.
thread_local InputFileRecord* g_inputs = nullptr;

FileId IdOf(const struct stat& st) { return {uint64_t(st.st_dev), uint64_t(st.st_ino)}; }

}  // namespace

InputFileRecord::InputFileRecord() : outer_(g_inputs) { g_inputs = this; }
InputFileRecord::~InputFileRecord() { g_inputs = outer_; }
const InputFileRecord* InputFileRecord::Current() { return g_inputs; }

std::optional<FileId> FileIdOf(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return IdOf(st);
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
  if (g_inputs) g_inputs->inputs_.push_back({IdOf(st), path, where});
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
  if (path == "-") throw Error(where, "expected a directory name, got '-' (a folder cannot be standard output)");
  std::filesystem::path p(path);
  for (; !p.empty(); p = p.parent_path()) {
    struct stat st;
    if (::stat(p.c_str(), &st) != 0) continue;
    if (!S_ISDIR(st.st_mode)) {
      throw Error(where, fmt::format("cannot make the directory '{}': '{}' is not a directory", path, p.string()));
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

// The folder a file at `path` goes into ("." for a bare name).
std::string FolderOf(const std::string& path) {
  const std::string folder = std::filesystem::path(path).parent_path().string();
  return folder.empty() ? "." : folder;
}

// Refuses to replace a file this thread read as an input of another flag.
void CheckNotAnInput(const FileId& id, const std::string& path, const std::string& where) {
  if (!g_inputs) return;
  for (const InputFileRecord::Input& input : g_inputs->inputs()) {
    if (input.id == id && input.where != where) {
      throw Error(where, fmt::format("'{}' is an input of this command ({}); an output must not replace it",
                                     path, input.where));
    }
  }
}

// True when `st` is the regular file or pipe standard output already writes
// to (a terminal or /dev/null is a device, written into as any other).
bool IsStandardOutput(const struct stat& st) {
  struct stat out;
  if (::fstat(STDOUT_FILENO, &out) != 0) return false;
  return (S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode)) && IdOf(out) == IdOf(st);
}

}  // namespace

OutputTarget CheckOutputPath(const std::string& path, const std::string& where) {
  if (path.empty()) throw Error(where, "expected a file name, got ''");
  if (path == "-") return {OutputKind::kStdout, path, std::nullopt};
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) throw Error(where, fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
    const std::string folder = FolderOf(path);
    if (::access(folder.c_str(), W_OK | X_OK) != 0) {
      throw Error(where, fmt::format("cannot write '{}': folder '{}': {}", path, folder, std::strerror(errno)));
    }
    return {OutputKind::kFile, path, std::nullopt};
  }
  const bool link = S_ISLNK(st.st_mode);
  if (link && ::stat(path.c_str(), &st) != 0) {
    throw Error(where, fmt::format("'{}' is a symbolic link to nothing ({}); expected a file or a link to one", path,
                                   std::strerror(errno)));
  }
  const FileId id = IdOf(st);
  if (S_ISDIR(st.st_mode)) throw Error(where, fmt::format("expected a file path, got directory '{}'", path));
  if (S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode)) {
    if (IsStandardOutput(st)) return {OutputKind::kStdout, path, id};
  }
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return {OutputKind::kStream, path, id};
  if (!S_ISREG(st.st_mode)) {
    const char* what = S_ISBLK(st.st_mode) ? "a block device" : S_ISSOCK(st.st_mode) ? "a socket" : "not a file";
    throw Error(where, fmt::format("'{}' is {}; expected a file, a character device or a FIFO", path, what));
  }
  CheckNotAnInput(id, path, where);
  std::string target = path;
  if (link) {
    std::error_code ec;
    target = std::filesystem::canonical(path, ec).string();
    if (ec) throw Error(where, fmt::format("cannot write '{}': {}", path, ec.message()));
  }
  return {OutputKind::kFile, target, id};
}

OutputFile::OutputFile(std::string path, std::string where)
    : path_(std::move(path)), where_(std::move(where)), target_(CheckOutputPath(path_, where_)) {
  if (target_.kind == OutputKind::kStdout) {
    file_ = stdout;
    return;
  }
  int fd = -1;
  if (target_.kind == OutputKind::kStream) {
    // No O_CREAT, no O_TRUNC: into the device or pipe that is there.
    fd = ::open(target_.path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  } else {
    // O_EXCL: a file (or a planted link) already at the temporary's name is
    // never written through; the next name is tried.
    const std::string base = fmt::format("{}.tmp{}", target_.path, static_cast<long>(::getpid()));
    for (int attempt = 0; fd < 0 && attempt < 100; ++attempt) {
      temp_ = attempt == 0 ? base : fmt::format("{}.{}", base, attempt);
      fd = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd < 0 && errno != EEXIST) break;
    }
    if (fd >= 0) slot_ = RegisterTemporary(temp_);
  }
  if (fd < 0) {
    const int error = errno;
    temp_.clear();
    throw Error(where_, fmt::format("cannot write '{}': {}", path_, std::strerror(error)));
  }
  file_ = ::fdopen(fd, "wb");
  if (!file_) {
    const int error = errno;
    ::close(fd);
    Discard();
    throw Error(where_, fmt::format("cannot write '{}': {}", path_, std::strerror(error)));
  }
}

OutputFile::~OutputFile() { Discard(); }

void OutputFile::Discard() noexcept {
  if (file_ && file_ != stdout) std::fclose(file_);
  file_ = nullptr;
  if (!committed_ && !temp_.empty()) ::unlink(temp_.c_str());
  temp_.clear();
  if (slot_ >= 0) {
    g_in_use[slot_] = 0;
    slot_ = -1;
  }
}

void OutputFile::Fail(int error) {
  Discard();
  throw Error(where_, fmt::format("cannot write '{}': {}", path_, std::strerror(error)));
}

void OutputFile::Write(std::string_view text) {
  assert(file_ && "Write after a failure");
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size()) Fail(errno);
}

void OutputFile::Flush() {
  assert(file_ && "Flush after a failure");
  if (std::fflush(file_) != 0) Fail(errno);
}

void OutputFile::Commit() {
  assert(file_ && !committed_ && "Commit once");
  Flush();
  if (target_.kind == OutputKind::kFile) {
    if (std::rename(temp_.c_str(), target_.path.c_str()) != 0) Fail(errno);
    temp_.clear();
    if (slot_ >= 0) {
      g_in_use[slot_] = 0;
      slot_ = -1;
    }
  }
  committed_ = true;
}

void WriteTextFile(const std::string& path, std::string_view contents, const std::string& where) {
  OutputFile file(path, where);
  file.Write(contents);
  file.Commit();
}

OutputFolder::OutputFolder(std::string path, std::string where) : path_(std::move(path)), where_(std::move(where)) {
  CheckDirectoryCanBeMade(path_, where_);
  // The missing folders, outermost first.
  std::vector<std::filesystem::path> missing;
  for (std::filesystem::path p = path_; !p.empty() && !PathExists(p.string()); p = p.parent_path()) {
    missing.insert(missing.begin(), p);
  }
  for (const std::filesystem::path& p : missing) {
    if (::mkdir(p.c_str(), 0777) != 0) {
      const int error = errno;
      for (auto it = made_.rbegin(); it != made_.rend(); ++it) ::rmdir(it->c_str());
      throw Error(where_, fmt::format("cannot create directory '{}': {}", path_, std::strerror(error)));
    }
    made_.push_back(p.string());
  }
  if (!IsDirectory(path_)) throw Error(where_, fmt::format("expected a directory, got '{}'", path_));
}

OutputFolder::~OutputFolder() {
  if (committed_) return;
  for (auto it = made_.rbegin(); it != made_.rend(); ++it) std::remove(it->c_str());
}

void OutputFolder::Write(const std::string& name, std::string_view contents) {
  const std::string path = path_ + "/" + name;
  const bool existed = PathExists(path);
  WriteTextFile(path, contents, where_);
  if (!existed) made_.push_back(path);
}

}  // namespace railsim
