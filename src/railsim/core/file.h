// Reading and writing whole files at railsim's edges, with errors that name
// the file and the flag it came from.
//
// Every output of every command goes through OutputFile (or WriteTextFile,
// or OutputFolder for a folder of them), which never destroys anything that
// is not the output itself:
// - a regular file, or a path where nothing is yet, is written to a
//   temporary beside it and renamed into place: a reader never finds half a
//   file, and an error leaves the old file as it was. A symbolic link to a
//   regular file keeps the link: the file it names is the one replaced;
// - "-" is standard output, as for Unix tools, and so is the regular file or
//   pipe that standard output already is (--out /dev/stdout > file);
// - a character device or FIFO (or a link to one: /dev/null, /dev/full, a
//   terminal, a named pipe) is written into as the shell's `>` would,
//   never replaced by a rename;
// - a directory, a block device, a socket or a link to nothing is refused;
// - and so is a file this command read as an input (InputFileRecord), or a
//   folder that is missing or not writable.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace railsim {

/// Spec files are hand-written JSON; anything bigger than this is a mistake
/// (a log or a binary given by accident) and is refused before it is read.
constexpr size_t kMaxInputFileBytes = 16 << 20;

/// Returns the contents of the regular file at `path`. Throws
/// Error(where, ...) if it is missing, a directory, unreadable or larger than
/// kMaxInputFileBytes. Records the file in this thread's InputFileRecord.
std::string ReadTextFile(const std::string& path, const std::string& where);

/// True if `path` names an existing filesystem entry (file or not).
bool PathExists(const std::string& path);
/// True if `path` names an existing directory.
bool IsDirectory(const std::string& path);

/// A file's identity, whatever the path that reaches it: hard links, "./x"
/// and symbolic links to one file all have the same (device, inode).
struct FileId {
  uint64_t device = 0, inode = 0;
  bool operator==(const FileId&) const = default;
};

/// The identity of what `path` names (links followed); nullopt when nothing
/// is there.
std::optional<FileId> FileIdOf(const std::string& path);

/// While one lives, every file ReadTextFile reads on its thread is recorded
/// with the flag it was read for, and an OutputFile of another flag refuses
/// to replace it: `sweep --config c.json --out c.json`, or a model file named
/// inside a sweep's config. An output may replace the file it read itself
/// (`sweep --resume` reads --out). The innermost record of a thread is the
/// one in force. Not copyable.
class InputFileRecord {
 public:
  struct Input {
    FileId id;
    std::string path, where;
  };

  InputFileRecord();
  ~InputFileRecord();
  InputFileRecord(const InputFileRecord&) = delete;
  InputFileRecord& operator=(const InputFileRecord&) = delete;

  const std::vector<Input>& inputs() const { return inputs_; }

  /// This thread's innermost record, or null.
  static const InputFileRecord* Current();

 private:
  friend std::string ReadTextFile(const std::string& path, const std::string& where);
  std::vector<Input> inputs_;
  InputFileRecord* outer_;
};

/// Creates the directory `path` and its parents if missing. Throws
/// Error(where, ...) when it cannot, or when `path` is not a directory.
void MakeDirectory(const std::string& path, const std::string& where);

/// Throws Error(where, ...) unless MakeDirectory(path) would succeed: the
/// nearest existing ancestor of `path` (or `path` itself) is a writable
/// directory, and `path` is not "-" (a folder cannot be standard output).
/// For commands that make a folder only after long work.
void CheckDirectoryCanBeMade(const std::string& path, const std::string& where);

/// What an output path leads to (see the top of this file).
enum class OutputKind {
  kFile,    ///< a regular file, or nothing yet: written whole, renamed into place
  kStdout,  ///< "-", or the regular file or pipe standard output is
  kStream,  ///< a character device or a FIFO: written into, never replaced
};

/// Where an output goes, once checked.
struct OutputTarget {
  OutputKind kind = OutputKind::kFile;
  /// kFile: the file renamed onto, symbolic links resolved; else the path.
  std::string path;
  /// What is there now; nullopt for a new file or standard output.
  std::optional<FileId> id;
};

/// Checks `path` as the output of flag `where` and says where it leads,
/// creating nothing, so that a command can refuse a bad output before any
/// work. Throws Error(where, ...) for an empty path, a directory, a block
/// device, a socket, a link to nothing, a missing or unwritable folder, and
/// a file this thread's InputFileRecord holds under another flag.
OutputTarget CheckOutputPath(const std::string& path, const std::string& where);

/// One output, written as CheckOutputPath says. For a regular file, text
/// goes to a temporary in the same folder, renamed onto the file by
/// Commit(); until then an error, the destructor or SIGINT/SIGTERM/SIGHUP
/// removes the temporary, so that no reader ever finds a truncated output
/// (a full disk, Ctrl-C). Text written after Commit() is appended to the
/// committed file in place (the rows of a sweep, each flushed). Not
/// copyable; not thread-safe.
class OutputFile {
 public:
  /// Checks as CheckOutputPath and opens. Opening a FIFO waits for a
  /// reader, as the shell's `>` does. Throws Error(where, ...).
  OutputFile(std::string path, std::string where);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  /// Appends (buffered); throws Error(where, "cannot write 'PATH': <reason>")
  /// when the write fails (a full disk: "No space left on device").
  void Write(std::string_view text);
  /// Pushes what Write buffered to the file; throws as Write does.
  void Flush();
  /// Flushes and, for a regular file, renames the temporary into place;
  /// throws as Write does, leaving any previous file as it was.
  void Commit();

  OutputKind kind() const { return target_.kind; }

 private:
  [[noreturn]] void Fail(int error);
  void Discard() noexcept;
  std::string path_, where_, temp_;
  OutputTarget target_;
  std::FILE* file_ = nullptr;
  bool committed_ = false;
  int slot_ = -1;  ///< in the signal handler's list of temporaries
};

/// Writes `contents` to `path` through an OutputFile. Throws
/// Error(where, ...) on failure, leaving any previous file at `path` as it
/// was.
void WriteTextFile(const std::string& path, std::string_view contents, const std::string& where);

/// A folder of outputs (`railsim report --out`), made with its missing
/// parents and filled file by file through OutputFile. Destroyed before
/// Commit() (an error, a full disk), it removes the files it created and the
/// folders it made, so that a failed run leaves nothing behind; files it
/// replaced keep their new text. Not copyable.
class OutputFolder {
 public:
  /// Throws Error(where, ...) as MakeDirectory does, and for "-".
  OutputFolder(std::string path, std::string where);
  ~OutputFolder();
  OutputFolder(const OutputFolder&) = delete;
  OutputFolder& operator=(const OutputFolder&) = delete;

  /// Writes `contents` to the file `name` in the folder; throws as
  /// WriteTextFile does.
  void Write(const std::string& name, std::string_view contents);
  /// Keeps everything written.
  void Commit() { committed_ = true; }

 private:
  std::string path_, where_;
  std::vector<std::string> made_;  ///< files and folders this run created, in order
  bool committed_ = false;
};

}  // namespace railsim
