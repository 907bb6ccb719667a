// A railsim command line as its words (argv after the program's name): the
// files its flags read and write, checked before any work so that no output
// replaces an input or another output, and what each MPI rank compares with
// rank 0 before they work together (the command, its arguments, the bytes
// of every input file).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace railsim::study {

/// A file a flag names: `--config sweep.json` is {"--config", "sweep.json"}.
struct FlagPath {
  std::string flag, path;
};

/// Every value of an input flag in `args` (the words after "railsim", the
/// command first): --config, --merge, --model, --moe-model, --system,
/// --placement, --catalog, --failure-catalog, --scenario, --fail-file,
/// --nccl-tests and --steps, as `--flag value`, `--flag=value` or, for the
/// flags that take several files, `--flag a b c`. An "hf:" prefix is
/// dropped. Values that name no file (preset names) are included: callers
/// look at what is there.
std::vector<FlagPath> InputFlagPaths(const std::vector<std::string>& args);

/// Checks every output flag in `args` (--out, --trace, --trace-png, --export,
/// --export-links, --heatmap; not report's --out, a folder, nor cost's
/// --export, one file per design) with CheckOutputPath, then refuses an
/// output that is the same file as an input (InputFlagPaths) or as another
/// output. Throws Error naming the output's flag. Returns true when an
/// output is standard output ("-"), so that the command's own report moves
/// to stderr.
bool CheckOutputFlags(const std::vector<std::string>& args);

/// What a rank compares with rank 0 under mpirun: railsim's version, the
/// words of its command line, and a digest of every input file's bytes.
struct RankCommand {
  /// An input file as found on this rank.
  struct Input {
    std::string flag, path;
    /// Empty for a regular file read whole, else what was found there:
    /// "missing", "not a regular file", "unreadable".
    std::string state;
    uint64_t bytes = 0, hash = 0;  ///< its size and FNV-1a hash
  };
  std::string version;
  std::vector<std::string> args;
  std::vector<Input> inputs;
};

/// This rank's RankCommand: reads every input file named in `args` (a FIFO
/// or device is not read). Never throws: a file it cannot read is a digest.
RankCommand DescribeRankCommand(std::string version, const std::vector<std::string>& args);

/// The digests of `files` (each named by its flag), as DescribeRankCommand
/// takes them: for the files a command reads that its arguments do not name
/// (a model named in a sweep's config), compared once they are read.
std::vector<RankCommand::Input> DigestFiles(const std::vector<FlagPath>& files);

/// RankCommand as bytes and back (the two sides run the same code).
std::string EncodeRankCommand(const RankCommand& command);
/// Returns nullopt when `bytes` is not EncodeRankCommand's.
std::optional<RankCommand> DecodeRankCommand(std::string_view bytes);

/// The first difference between rank `rank`'s command and rank 0's, as one
/// clause naming the argument or file ("rank 1's --gpus is 4096, rank 0's
/// is 8192"); nullopt when they are the same.
std::optional<std::string> RankDisagreement(const RankCommand& zero, const RankCommand& mine, int rank);

}  // namespace railsim::study
