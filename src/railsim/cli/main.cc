// railsim's main(): the one place errors are caught. A railsim::Error (bad
// input) prints one line and exits 2; anything else is a missing check and
// exits 3. No stack traces.
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "railsim/cli/commands.h"
#include "railsim/core/error.h"

namespace {

// Prints "railsim: <kind>: <message>" on stderr and never throws: stderr may
// be closed or full (2>/dev/full), and a throw from inside a catch block
// would abort the process instead of exiting with the status promised.
void ReportError(const char* kind, const char* message) noexcept {
  try {
    const std::string line = std::string("railsim: ") + kind + ": " + railsim::Printable(message) + "\n";
    (void)std::fwrite(line.data(), 1, line.size(), stderr);
    (void)std::fflush(stderr);
  } catch (...) {
    (void)std::fputs("railsim: error\n", stderr);
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return railsim::cli::Run(argc, argv);
  } catch (const railsim::Error& e) {
    ReportError("error", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    ReportError("error", "out of memory");
    return 3;
  } catch (const std::exception& e) {
    ReportError("internal error", e.what());
    return 3;
  } catch (...) {
    ReportError("internal error", "unknown exception");
    return 3;
  }
}
