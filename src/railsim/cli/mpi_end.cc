#include "railsim/cli/mpi_end.h"

#include <chrono>
#include <thread>

#include "railsim/cli/flags.h"

namespace railsim::cli {

void EndRanks(const study::MpiSession& mpi, const std::string& line, int status) {
  constexpr auto kRankZeroFirst = std::chrono::seconds(3);
  if (mpi.rank() != 0) std::this_thread::sleep_for(kRankZeroFirst);
  PrintStderr(line);
  mpi.Abort(status);
}

}  // namespace railsim::cli
