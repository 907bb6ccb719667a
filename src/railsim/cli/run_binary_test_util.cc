#include "railsim/cli/run_binary_test_util.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace railsim::testutil {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string MakeTempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base ? base : "/tmp") + "/railsim_test_XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  char* dir = mkdtemp(buffer.data());
  return dir ? std::string(dir) : std::string("/tmp");
}

int LineCount(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n' ? 1 : 0;
  return n;
}

namespace {

// Runs `program`; stderr goes to a file, or with `terminal` to a new
// pseudo-terminal whose output is read while the program runs (so a chatty
// program cannot fill the terminal's buffer and block).
RunResult Run(const std::string& program, const std::vector<std::string>& args, int timeout_s, bool terminal) {
  std::string dir = MakeTempDir();
  std::string out_path = dir + "/stdout";
  std::string err_path = dir + "/stderr";
  RunResult result;
  int master = -1;
  std::string terminal_name;
  if (terminal) {
    master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0 || !ptsname(master)) return result;
    terminal_name = ptsname(master);
    fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
  }
  pid_t pid = fork();
  if (pid < 0) return result;
  if (pid == 0) {
    setpgid(0, 0);  // its own process group, so a timeout kills its children too
    int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = terminal ? open(terminal_name.c_str(), O_WRONLY | O_NOCTTY)
                       : open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, 1);
    dup2(err, 2);
    std::vector<char*> argv;
    std::string binary = program;
    argv.push_back(binary.data());
    std::vector<std::string> copies = args;
    for (std::string& a : copies) argv.push_back(a.data());
    argv.push_back(nullptr);
    execvp(binary.c_str(), argv.data());
    _exit(127);
  }
  int wstatus = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  auto drain = [&] {
    char buffer[4096];
    ssize_t n;
    while (master >= 0 && (n = read(master, buffer, sizeof buffer)) > 0) result.err.append(buffer, size_t(n));
  };
  for (;;) {
    drain();
    pid_t done = waitpid(pid, &wstatus, WNOHANG);
    if (done == pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(-pid, SIGKILL);
      waitpid(pid, &wstatus, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (WIFEXITED(wstatus)) result.status = WEXITSTATUS(wstatus);
  else if (WIFSIGNALED(wstatus)) result.status = 128 + WTERMSIG(wstatus);
  result.out = Slurp(out_path);
  if (terminal) {
    drain();
    close(master);
  } else {
    result.err = Slurp(err_path);
  }
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  rmdir(dir.c_str());
  return result;
}

}  // namespace

RunResult RunRailsim(const std::vector<std::string>& args, int timeout_s) {
  return Run(RAILSIM_BINARY, args, timeout_s, false);
}

RunResult RunRailsimAtTerminal(const std::vector<std::string>& args, int timeout_s) {
  return Run(RAILSIM_BINARY, args, timeout_s, true);
}

RunResult RunProgram(const std::string& program, const std::vector<std::string>& args, int timeout_s) {
  return Run(program, args, timeout_s, false);
}

}  // namespace railsim::testutil
