#include "railsim/core/file.h"

#include <filesystem>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>

#include <fmt/format.h>

#include "railsim/core/error.h"

namespace railsim {

bool PathExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
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

void WriteTextFile(const std::string& path, std::string_view contents, const std::string& where) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    throw Error(where, fmt::format("expected a file path, got directory '{}'", path));
  }
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw Error(where, fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
  size_t written = std::fwrite(contents.data(), 1, contents.size(), f);
  bool failed = written != contents.size();
  if (std::fclose(f) != 0) failed = true;
  if (failed) throw Error(where, fmt::format("cannot write '{}': write failed", path));
}

}  // namespace railsim
