#include "testutil/run_binary.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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

// A child started by Start and not yet reaped.
struct Child {
  pid_t pid = -1;  ///< -1: it could not start
  std::string dir;  ///< holds its stdout (and stderr unless at a terminal)
  int master = -1;  ///< the pseudo-terminal's master side, or -1
  std::chrono::steady_clock::time_point deadline;
  RunResult result;
};

// Forks and execs `program` in its own process group; stderr goes to a file,
// or with `terminal` to a new pseudo-terminal whose output Poll reads while
// the program runs (so a chatty program cannot fill its buffer and block).
Child Start(const std::string& program, const std::vector<std::string>& args, int timeout_s, bool terminal) {
  Child child;
  child.dir = MakeTempDir();
  child.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  std::string terminal_name;
  if (terminal) {
    child.master = posix_openpt(O_RDWR | O_NOCTTY);
    if (child.master < 0 || grantpt(child.master) != 0 || unlockpt(child.master) != 0 || !ptsname(child.master)) {
      return child;
    }
    terminal_name = ptsname(child.master);
    fcntl(child.master, F_SETFL, fcntl(child.master, F_GETFL) | O_NONBLOCK);
  }
  // Everything the child needs is built before fork: it only opens and execs.
  std::string out_path = child.dir + "/stdout";
  std::string err_path = terminal ? terminal_name : child.dir + "/stderr";
  std::vector<std::string> copies = args;
  copies.insert(copies.begin(), program);
  std::vector<char*> argv;
  for (std::string& a : copies) argv.push_back(a.data());
  argv.push_back(nullptr);
  child.pid = fork();
  if (child.pid == 0) {
    setpgid(0, 0);  // its own process group, so a timeout kills its children too
    int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = terminal ? open(err_path.c_str(), O_WRONLY | O_NOCTTY)
                       : open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, 1);
    dup2(err, 2);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  return child;
}

// Reads what the terminal holds and reaps the child if it ended (killing
// its group past the deadline). True once the child is done.
bool Poll(Child& child) {
  if (child.pid < 0) return true;
  char buffer[4096];
  ssize_t n;
  while (child.master >= 0 && (n = read(child.master, buffer, sizeof buffer)) > 0) {
    child.result.err.append(buffer, size_t(n));
  }
  int wstatus = 0;
  pid_t done = waitpid(child.pid, &wstatus, WNOHANG);
  if (done != child.pid) {
    if (std::chrono::steady_clock::now() <= child.deadline) return false;
    kill(-child.pid, SIGKILL);
    waitpid(child.pid, &wstatus, 0);
  }
  if (WIFEXITED(wstatus)) child.result.status = WEXITSTATUS(wstatus);
  else if (WIFSIGNALED(wstatus)) child.result.status = 128 + WTERMSIG(wstatus);
  return true;
}

// Collects a finished child's output and removes its files.
RunResult Finish(Child& child) {
  std::string out_path = child.dir + "/stdout";
  std::string err_path = child.dir + "/stderr";
  child.result.out = Slurp(out_path);
  if (child.master >= 0) {
    Poll(child);  // what the terminal still holds
    close(child.master);
  } else {
    child.result.err = Slurp(err_path);
  }
  std::remove(out_path.c_str());
  std::remove(err_path.c_str());
  rmdir(child.dir.c_str());
  return child.result;
}

RunResult Run(const std::string& program, const std::vector<std::string>& args, int timeout_s, bool terminal) {
  Child child = Start(program, args, timeout_s, terminal);
  while (!Poll(child)) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  return Finish(child);
}

}  // namespace

RunResult RunRailsim(const std::vector<std::string>& args, int timeout_s) {
  return Run(RAILSIM_BINARY, args, timeout_s, false);
}

RunResult RunRailsimAtTerminal(const std::vector<std::string>& args, int timeout_s) {
  return Run(RAILSIM_BINARY, args, timeout_s, true);
}

std::vector<RunResult> RunRailsimMany(const std::vector<std::vector<std::string>>& runs, int timeout_s) {
  const size_t at_once = std::max(2u, std::thread::hardware_concurrency());
  std::vector<RunResult> results(runs.size());
  std::vector<std::pair<size_t, Child>> running;
  size_t next = 0;
  while (next < runs.size() || !running.empty()) {
    while (next < runs.size() && running.size() < at_once) {
      running.emplace_back(next, Start(RAILSIM_BINARY, runs[next], timeout_s, false));
      ++next;
    }
    bool any_done = false;
    for (size_t i = 0; i < running.size();) {
      if (Poll(running[i].second)) {
        results[running[i].first] = Finish(running[i].second);
        running.erase(running.begin() + long(i));
        any_done = true;
      } else {
        ++i;
      }
    }
    if (!any_done) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return results;
}

RunResult RunProgram(const std::string& program, const std::vector<std::string>& args, int timeout_s) {
  return Run(program, args, timeout_s, false);
}

}  // namespace railsim::testutil
