// Outputs never destroy anything but themselves: a regular file is replaced
// whole, a device or FIFO (or a link to one) is written into and stays what
// it was, a link to a file stays a link, "-" is standard output; a
// directory, a block device, a socket, a link to nothing and an input of
// the command are refused; a folder of outputs that fails leaves nothing.
#include "railsim/core/file.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "railsim/core/error.h"

namespace railsim {
namespace {

class OutputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base ? base : "/tmp") + "/railsim_file_test_XXXXXX";
    ASSERT_NE(nullptr, ::mkdtemp(pattern.data()));
    dir_ = pattern;
  }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  void Write(const std::string& name, const std::string& text) const {
    std::ofstream(Path(name), std::ios::binary) << text;
  }
  static std::string Slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // The folder's entries, sorted, as one string ("a b c").
  std::string Entries() const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir_)) names.push_back(entry.path().filename());
    std::sort(names.begin(), names.end());
    std::string out;
    for (const std::string& name : names) out += (out.empty() ? "" : " ") + name;
    return out;
  }
  std::string dir_;
};

mode_t TypeOf(const std::string& path, bool follow = false) {
  struct stat st;
  if ((follow ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st)) != 0) return 0;
  return st.st_mode & S_IFMT;
}

// The message of the Error `write` throws ("" if none).
template <typename Write>
std::string ErrorOf(Write write) {
  try {
    write();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST_F(OutputFileTest, RegularFileIsReplacedWholeWithNoTemporaryLeft) {
  Write("out.json", "old");
  WriteTextFile(Path("out.json"), "new text", "--out");
  EXPECT_EQ("new text", Slurp(Path("out.json")));
  WriteTextFile(Path("fresh.json"), "made", "--out");
  EXPECT_EQ("made", Slurp(Path("fresh.json")));
  EXPECT_EQ(OutputKind::kFile, CheckOutputPath(Path("fresh.json"), "--out").kind);
  EXPECT_EQ("fresh.json out.json", Entries());
}

// The repro: a character device made by mknod (1, 3: /dev/null's
// numbers) stays a character device after an output is written to it.
TEST_F(OutputFileTest, CharacterDeviceIsWrittenIntoAndStaysADevice) {
  if (::mknod(Path("null").c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
    GTEST_SKIP() << "mknod is not allowed here: " << std::strerror(errno);
  }
  EXPECT_EQ(OutputKind::kStream, CheckOutputPath(Path("null"), "--trace").kind);
  WriteTextFile(Path("null"), "{\"traceEvents\": []}", "--trace");
  EXPECT_EQ(mode_t(S_IFCHR), TypeOf(Path("null")));
  EXPECT_EQ("null", Entries());
}

// /dev/full: the reason, whole, and the device is still one.
TEST_F(OutputFileTest, FullDeviceGivesTheReasonAndStaysADevice) {
  if (TypeOf("/dev/full") != S_IFCHR) GTEST_SKIP() << "no /dev/full";
  EXPECT_EQ("--out: cannot write '/dev/full': No space left on device",
            ErrorOf([] { WriteTextFile("/dev/full", "{}", "--out"); }));
  EXPECT_EQ(mode_t(S_IFCHR), TypeOf("/dev/full"));
  // A link to it is written through, and stays a link.
  ASSERT_EQ(0, ::symlink("/dev/full", Path("full.json").c_str()));
  EXPECT_EQ("--out: cannot write '" + Path("full.json") + "': No space left on device",
            ErrorOf([&] { WriteTextFile(Path("full.json"), "{}", "--out"); }));
  EXPECT_EQ(mode_t(S_IFLNK), TypeOf(Path("full.json")));
  EXPECT_EQ(mode_t(S_IFCHR), TypeOf("/dev/full"));
}

// A FIFO is opened for writing (waiting for its reader, as `>` does) and
// its reader gets the text; it stays a FIFO.
TEST_F(OutputFileTest, FifoIsWrittenIntoAndStaysAFifo) {
  ASSERT_EQ(0, ::mkfifo(Path("pipe").c_str(), 0644));
  std::string got;
  std::thread reader([&] { got = Slurp(Path("pipe")); });
  WriteTextFile(Path("pipe"), "rows\n", "--out");
  reader.join();
  EXPECT_EQ("rows\n", got);
  EXPECT_EQ(mode_t(S_IFIFO), TypeOf(Path("pipe")));
}

// A link to a regular file keeps the link; the file it names gets the text.
TEST_F(OutputFileTest, LinkToAFileStaysALink) {
  Write("target.json", "old");
  ASSERT_EQ(0, ::symlink("target.json", Path("link.json").c_str()));
  WriteTextFile(Path("link.json"), "new", "--out");
  EXPECT_EQ(mode_t(S_IFLNK), TypeOf(Path("link.json")));
  EXPECT_EQ("new", Slurp(Path("target.json")));
  EXPECT_EQ("link.json target.json", Entries());
}

TEST_F(OutputFileTest, DashIsStandardOutput) {
  EXPECT_EQ(OutputKind::kStdout, CheckOutputPath("-", "--out").kind);
  // No file called "-" is made.
  EXPECT_FALSE(PathExists("-"));
}

TEST_F(OutputFileTest, WhatCannotBeAnOutputIsRefusedAndKept) {
  ASSERT_EQ(0, ::mkdir(Path("folder").c_str(), 0755));
  EXPECT_EQ("--out: expected a file path, got directory '" + Path("folder") + "'",
            ErrorOf([&] { WriteTextFile(Path("folder"), "x", "--out"); }));
  ASSERT_EQ(0, ::symlink("nothing-here", Path("dangling").c_str()));
  EXPECT_EQ("--out: '" + Path("dangling") +
                "' is a symbolic link to nothing (No such file or directory); expected a file or a link to one",
            ErrorOf([&] { WriteTextFile(Path("dangling"), "x", "--out"); }));
  EXPECT_FALSE(PathExists(Path("nothing-here")));
  EXPECT_EQ("--out: cannot write '" + Path("no/such/x.json") + "': folder '" + Path("no/such") +
                "': No such file or directory",
            ErrorOf([&] { WriteTextFile(Path("no/such/x.json"), "x", "--out"); }));
  EXPECT_EQ("--out: expected a file name, got ''", ErrorOf([] { CheckOutputPath("", "--out"); }));

  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string socket_path = Path("socket");
  ASSERT_LT(socket_path.size(), sizeof address.sun_path);
  std::memcpy(address.sun_path, socket_path.c_str(), socket_path.size() + 1);
  ASSERT_EQ(0, ::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address));
  EXPECT_EQ("--out: '" + socket_path + "' is a socket; expected a file, a character device or a FIFO",
            ErrorOf([&] { WriteTextFile(socket_path, "x", "--out"); }));
  EXPECT_EQ(mode_t(S_IFSOCK), TypeOf(socket_path));
  ::close(fd);
}

// A block device is a disk: never written. Major 240 is for local use, so
// the node made here names no real disk.
TEST_F(OutputFileTest, BlockDeviceIsRefused) {
  if (::mknod(Path("disk").c_str(), S_IFBLK | 0600, makedev(240, 0)) != 0) {
    GTEST_SKIP() << "mknod is not allowed here: " << std::strerror(errno);
  }
  EXPECT_EQ("--out: '" + Path("disk") + "' is a block device; expected a file, a character device or a FIFO",
            ErrorOf([&] { WriteTextFile(Path("disk"), "x", "--out"); }));
  EXPECT_EQ(mode_t(S_IFBLK), TypeOf(Path("disk")));
}

// A file read as an input (under another flag) is never an output; an
// output may replace the file it read itself (sweep --resume reads --out).
TEST_F(OutputFileTest, AnInputIsNeverReplaced) {
  Write("config.json", "{\"study\": \"network\"}");
  ASSERT_EQ(0, ::symlink("config.json", Path("link.json").c_str()));
  {
    InputFileRecord inputs;
    EXPECT_EQ("{\"study\": \"network\"}", ReadTextFile(Path("config.json"), "--config"));
    for (std::string name : {"config.json", "link.json"}) {
      EXPECT_EQ("--out: '" + Path(name) + "' is an input of this command (--config); an output must not replace it",
                ErrorOf([&] { WriteTextFile(Path(name), "rows", "--out"); }));
    }
    EXPECT_EQ("{\"study\": \"network\"}", Slurp(Path("config.json")));
    WriteTextFile(Path("config.json"), "resumed", "--config");
    EXPECT_EQ("resumed", Slurp(Path("config.json")));
  }
  // The record ended with its scope.
  WriteTextFile(Path("config.json"), "rows", "--out");
  EXPECT_EQ("rows", Slurp(Path("config.json")));
}

// Text written after Commit() is appended in place, each Flush() reaching
// the file (a sweep's rows).
TEST_F(OutputFileTest, RowsAfterCommitAreAppended) {
  OutputFile file(Path("rows.jsonl"), "--out");
  file.Write("header\n");
  EXPECT_FALSE(PathExists(Path("rows.jsonl")));
  file.Commit();
  EXPECT_EQ("header\n", Slurp(Path("rows.jsonl")));
  file.Write("row 1\n");
  file.Flush();
  EXPECT_EQ("header\nrow 1\n", Slurp(Path("rows.jsonl")));
}

// A folder of outputs that fails part way removes the files and folders it
// made; committed, it keeps them.
TEST_F(OutputFileTest, FailedFolderLeavesNothingBehind) {
  {
    OutputFolder folder(Path("report/inner"), "--out");
    folder.Write("index.html", "<html>");
    EXPECT_EQ("<html>", Slurp(Path("report/inner/index.html")));
    EXPECT_NE("", ErrorOf([&] { folder.Write("missing/figure.csv", "a,b\n"); }));
  }
  EXPECT_EQ("", Entries());
  // A folder that was there stays, and so do the files it held.
  ASSERT_EQ(0, ::mkdir(Path("kept").c_str(), 0755));
  Write("kept/notes.txt", "mine");
  {
    OutputFolder folder(Path("kept"), "--out");
    folder.Write("index.html", "<html>");
  }
  EXPECT_EQ("mine", Slurp(Path("kept/notes.txt")));
  EXPECT_FALSE(PathExists(Path("kept/index.html")));
  {
    OutputFolder folder(Path("done"), "--out");
    folder.Write("index.html", "<html>");
    folder.Commit();
  }
  EXPECT_EQ("<html>", Slurp(Path("done/index.html")));
  EXPECT_EQ("--out: expected a directory name, got '-' (a folder cannot be standard output)",
            ErrorOf([] { OutputFolder folder("-", "--out"); }));
  EXPECT_EQ("--out: cannot make the directory '/dev/null': '/dev/null' is not a directory",
            ErrorOf([] { OutputFolder folder("/dev/null", "--out"); }));
}

}  // namespace
}  // namespace railsim
