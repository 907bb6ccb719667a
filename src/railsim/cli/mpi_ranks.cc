#include "railsim/cli/mpi_ranks.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>

#include "railsim/cli/flags.h"
#include "railsim/core/error.h"
#include "railsim/core/file.h"
#include "railsim/study/command_line.h"

namespace railsim::cli {
namespace {

const mpi::MpiSession* g_session = nullptr;

// The commands whose work is split over the ranks; help and version are
// printed by rank 0 alone.
bool SplitsWork(const std::vector<std::string>& args) {
  if (args.empty()) return false;
  for (const std::string& word : args) {
    if (word == "--help" || word == "-h" || word == "--version") return false;
  }
  if (args[0] == "alltoall" || args[0] == "collective") return true;
  return args[0] == "sweep" && std::none_of(args.begin(), args.end(), [](const std::string& word) {
           return word == "--merge" || word.starts_with("--merge=");
         });
}

}  // namespace

MpiRanks::MpiRanks(const std::vector<std::string>& args) {
  if (!mpi::LaunchedByMpirun()) return;
  if (!mpi::MpiCompiledIn()) {
    if (mpi::RankFromEnvironment() != 0) runs_command_ = false;
    return;
  }
  session_ = std::make_unique<mpi::MpiSession>();
  const study::RankCommand mine = study::DescribeRankCommand(RAILSIM_VERSION, args);
  const std::optional<study::RankCommand> zero =
      study::DecodeRankCommand(session_->Broadcast(study::EncodeRankCommand(mine)));
  const std::string report =
      zero ? study::RankDisagreement(*zero, mine, session_->rank()).value_or("")
           : "rank " + std::to_string(session_->rank()) + " cannot read rank 0's command";
  if (const auto first = session_->FirstReport(report)) {
    if (session_->rank() == 0) {
      PrintError(Error("mpirun", first->second + "; every rank must run the same command"));
    }
    runs_command_ = false;
    status_ = 2;
    return;
  }
  const bool splits = SplitsWork(args);
  if (!splits && session_->rank() != 0) {
    runs_command_ = false;
    return;
  }
  silent_ = session_->rank() != 0;
  if (splits) g_session = session_.get();
}

MpiRanks::~MpiRanks() { g_session = nullptr; }

int MpiRanks::Fail(const Error& error) const {
  if (!session_) throw error;
  if (!silent_) PrintError(error);
  return 2;
}

void MpiRanks::PrintError(const Error& error) {
  PrintStderr("railsim: error: " + Printable(error.what()) + "\n");
}

const mpi::MpiSession* RankSession() { return g_session; }

void AgreeOnFilesRead(const mpi::MpiSession& mpi) {
  std::vector<study::FlagPath> files;
  if (const InputFileRecord* record = InputFileRecord::Current()) {
    for (const InputFileRecord::Input& input : record->inputs()) files.push_back({input.where, input.path});
  }
  const study::RankCommand mine{RAILSIM_VERSION, {}, study::DigestFiles(files)};
  const std::optional<study::RankCommand> zero =
      study::DecodeRankCommand(mpi.Broadcast(study::EncodeRankCommand(mine)));
  const std::string report = zero ? study::RankDisagreement(*zero, mine, mpi.rank()).value_or("")
                                  : "rank " + std::to_string(mpi.rank()) + " cannot read rank 0's files";
  if (const auto first = mpi.FirstReport(report)) {
    throw Error("mpirun", first->second + "; every rank must read the same files");
  }
}

void EndRanks(const mpi::MpiSession& mpi, const std::string& line, int status) {
  constexpr auto kRankZeroFirst = std::chrono::seconds(3);
  if (mpi.rank() != 0) std::this_thread::sleep_for(kRankZeroFirst);
  PrintStderr(line);
  mpi.Abort(status);
}

}  // namespace railsim::cli
