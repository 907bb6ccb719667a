// railsim's main(): the one place errors are caught. A railsim::Error (bad
// input) prints one line and exits 2; anything else is a missing check and
// exits 3. No stack traces.
#include <cstdio>
#include <exception>
#include <new>

#include <fmt/format.h>

#include "railsim/cli/commands.h"
#include "railsim/core/error.h"

int main(int argc, char** argv) {
  try {
    return railsim::cli::Run(argc, argv);
  } catch (const railsim::Error& e) {
    fmt::print(stderr, "railsim: error: {}\n", railsim::Printable(e.what()));
    return 2;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "railsim: error: out of memory\n");
    return 3;
  } catch (const std::exception& e) {
    fmt::print(stderr, "railsim: internal error: {}\n", railsim::Printable(e.what()));
    return 3;
  }
}
