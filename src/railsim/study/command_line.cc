#include "railsim/study/command_line.h"

#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/core/file.h"

namespace railsim::study {
namespace {

// Flags whose value is a file the command reads (or may: a preset name is
// not a file), and those of them that take several files.
const std::vector<std::string_view> kInputFlags = {"--config", "--merge", "--model", "--moe-model",
                                                   "--system", "--placement", "--catalog", "--failure-catalog",
                                                   "--scenario", "--fail-file", "--nccl-tests", "--steps"};
const std::vector<std::string_view> kSeveralFiles = {"--merge", "--nccl-tests"};
// Flags whose value is a file the command writes.
const std::vector<std::string_view> kOutputFlags = {"--out", "--trace", "--trace-png", "--export", "--export-links",
                                                    "--heatmap"};

bool In(const std::vector<std::string_view>& list, std::string_view word) {
  return std::find(list.begin(), list.end(), word) != list.end();
}

// The values of `flags` in args (the command is args[0]).
std::vector<FlagPath> FlagValues(const std::vector<std::string>& args, const std::vector<std::string_view>& flags) {
  std::vector<FlagPath> out;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (!word.starts_with("--")) continue;
    const size_t equals = word.find('=');
    const std::string flag = word.substr(0, equals);
    if (!In(flags, flag)) continue;
    if (equals != std::string::npos) {
      out.push_back({flag, word.substr(equals + 1)});
      continue;
    }
    for (size_t j = i + 1; j < args.size(); ++j) {
      if (args[j].size() > 1 && args[j][0] == '-') break;  // the next flag
      out.push_back({flag, args[j]});
      i = j;
      if (!In(kSeveralFiles, flag)) break;
    }
  }
  return out;
}

// One path for every spelling of it ("x.json", "./x.json", a link's folder).
std::string Normal(const std::string& path) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
  return ec ? path : p.string();
}

// FNV-1a over the file's bytes; `input->state` says what else was found.
void Digest(RankCommand::Input* input) {
  struct stat st;
  if (::stat(input->path.c_str(), &st) != 0) {
    input->state = "missing";
    return;
  }
  if (!S_ISREG(st.st_mode)) {
    input->state = "not a regular file";
    return;
  }
  std::FILE* f = std::fopen(input->path.c_str(), "rb");
  if (!f) {
    input->state = "unreadable";
    return;
  }
  uint64_t hash = 14695981039346656037ULL, bytes = 0;
  char buffer[65536];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) {
    for (size_t i = 0; i < n; ++i) hash = (hash ^ uint8_t(buffer[i])) * 1099511628211ULL;
    bytes += n;
  }
  if (std::ferror(f)) input->state = "unreadable";
  std::fclose(f);
  input->bytes = bytes;
  input->hash = hash;
}

void Put(std::string* out, std::string_view text) { *out += fmt::format("{}:{}", text.size(), text); }

// Reads what Put wrote at *at; false when the bytes are not that.
bool Get(std::string_view bytes, size_t* at, std::string* text) {
  const size_t colon = bytes.find(':', *at);
  if (colon == std::string_view::npos) return false;
  size_t size = 0;
  const auto [end, error] = std::from_chars(bytes.data() + *at, bytes.data() + colon, size);
  if (error != std::errc() || end != bytes.data() + colon || size > bytes.size() - colon - 1) return false;
  *text = std::string(bytes.substr(colon + 1, size));
  *at = colon + 1 + size;
  return true;
}

bool GetNumber(std::string_view bytes, size_t* at, uint64_t* value) {
  std::string text;
  if (!Get(bytes, at, &text)) return false;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return error == std::errc() && end == text.data() + text.size();
}

// "--gpus" of "--gpus=64"; empty for a word of another shape.
std::string FlagOfAssignment(const std::string& word) {
  const size_t equals = word.find('=');
  return word.starts_with("--") && equals != std::string::npos ? word.substr(0, equals) : "";
}

std::string InputState(const RankCommand::Input& input) {
  return input.state.empty() ? fmt::format("{} bytes", input.bytes) : input.state;
}

}  // namespace

std::vector<FlagPath> InputFlagPaths(const std::vector<std::string>& args) {
  std::vector<FlagPath> inputs = FlagValues(args, kInputFlags);
  if (!args.empty() && args[0] == "cluster") {  // its --trace is the job trace it reads
    for (const FlagPath& input : FlagValues(args, {"--trace", "--topology"})) {
      if (input.path != "synthetic") inputs.push_back(input);
    }
  }
  for (FlagPath& input : inputs) {
    if (input.path.starts_with("hf:")) input.path = input.path.substr(3);
  }
  return inputs;
}

bool CheckOutputFlags(const std::vector<std::string>& args) {
  const std::string command = args.empty() ? "" : args[0];
  const std::vector<FlagPath> inputs = InputFlagPaths(args);
  std::vector<std::pair<FlagPath, OutputTarget>> outputs;
  bool standard_output = false;
  for (const FlagPath& output : FlagValues(args, kOutputFlags)) {
    if ((command == "report" && output.flag == "--out") || (command == "cost" && output.flag == "--export") ||
        (command == "cluster" && output.flag == "--trace")) {
      continue;
    }
    const OutputTarget target = CheckOutputPath(output.path, output.flag);
    for (const FlagPath& input : inputs) {
      if (target.kind == OutputKind::kFile && target.id && FileIdOf(input.path) == target.id) {
        throw Error(output.flag, fmt::format("'{}' is an input of this command ({}); an output must not replace it",
                                             output.path, input.flag));
      }
    }
    for (const auto& [earlier, earlier_target] : outputs) {
      const bool same = earlier.path == output.path || (target.id && earlier_target.id == target.id) ||
                        (target.kind == OutputKind::kFile && Normal(earlier.path) == Normal(output.path));
      if (same) {
        throw Error(output.flag, fmt::format("'{}' is also the {} output; each output needs its own file",
                                             output.path, earlier.flag));
      }
    }
    standard_output = standard_output || target.kind == OutputKind::kStdout;
    outputs.push_back({output, target});
  }
  return standard_output;
}

std::vector<RankCommand::Input> DigestFiles(const std::vector<FlagPath>& files) {
  std::vector<RankCommand::Input> inputs;
  for (const FlagPath& file : files) {
    RankCommand::Input input{file.flag, file.path, "", 0, 0};
    Digest(&input);
    inputs.push_back(std::move(input));
  }
  return inputs;
}

RankCommand DescribeRankCommand(std::string version, const std::vector<std::string>& args) {
  return {std::move(version), args, DigestFiles(InputFlagPaths(args))};
}

std::string EncodeRankCommand(const RankCommand& command) {
  std::string out;
  Put(&out, command.version);
  Put(&out, std::to_string(command.args.size()));
  for (const std::string& word : command.args) Put(&out, word);
  Put(&out, std::to_string(command.inputs.size()));
  for (const RankCommand::Input& input : command.inputs) {
    for (const std::string& text : {input.flag, input.path, input.state, std::to_string(input.bytes),
                                    std::to_string(input.hash)}) {
      Put(&out, text);
    }
  }
  return out;
}

std::optional<RankCommand> DecodeRankCommand(std::string_view bytes) {
  RankCommand command;
  size_t at = 0;
  uint64_t count = 0;
  if (!Get(bytes, &at, &command.version) || !GetNumber(bytes, &at, &count) || count > bytes.size()) {
    return std::nullopt;
  }
  command.args.resize(count);
  for (std::string& word : command.args) {
    if (!Get(bytes, &at, &word)) return std::nullopt;
  }
  if (!GetNumber(bytes, &at, &count) || count > bytes.size()) return std::nullopt;
  command.inputs.resize(count);
  for (RankCommand::Input& input : command.inputs) {
    if (!Get(bytes, &at, &input.flag) || !Get(bytes, &at, &input.path) || !Get(bytes, &at, &input.state) ||
        !GetNumber(bytes, &at, &input.bytes) || !GetNumber(bytes, &at, &input.hash)) {
      return std::nullopt;
    }
  }
  if (at != bytes.size()) return std::nullopt;
  return command;
}

std::optional<std::string> RankDisagreement(const RankCommand& zero, const RankCommand& mine, int rank) {
  if (mine.version != zero.version) {
    return fmt::format("rank {} runs railsim {}, rank 0 runs railsim {}", rank, mine.version, zero.version);
  }
  const std::vector<std::string>&a = mine.args, &b = zero.args;
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  if (i < a.size() && i < b.size()) {
    if (i == 0) return fmt::format("rank {} runs 'railsim {}', rank 0 runs 'railsim {}'", rank, a[0], b[0]);
    const std::string flag = FlagOfAssignment(a[i]);
    if (!flag.empty() && flag == FlagOfAssignment(b[i])) {
      return fmt::format("rank {}'s {} is {}, rank 0's is {}", rank, flag, a[i].substr(flag.size() + 1),
                         b[i].substr(flag.size() + 1));
    }
    const std::string& before = a[i - 1];
    if (before.starts_with("--") && FlagOfAssignment(before).empty() && !a[i].starts_with("--") &&
        !b[i].starts_with("--")) {
      return fmt::format("rank {}'s {} is {}, rank 0's is {}", rank, before, a[i], b[i]);
    }
    return fmt::format("rank {}'s argument {} is '{}', rank 0's is '{}'", rank, i + 1, a[i], b[i]);
  }
  if (i < a.size()) return fmt::format("rank {} has an argument rank 0 lacks: '{}' (argument {})", rank, a[i], i + 1);
  if (i < b.size()) return fmt::format("rank {} lacks rank 0's argument {}, '{}'", rank, i + 1, b[i]);
  for (size_t j = 0; j < mine.inputs.size() && j < zero.inputs.size(); ++j) {
    const RankCommand::Input &x = mine.inputs[j], &y = zero.inputs[j];
    if (x.state == y.state && x.bytes == y.bytes && x.hash == y.hash) continue;
    const std::string how = x.state.empty() && y.state.empty() && x.bytes == y.bytes
                                ? "the same size, other bytes"
                                : fmt::format("{} against {}", InputState(x), InputState(y));
    return fmt::format("rank {}'s {} file {} differs from rank 0's ({})", rank, x.flag, x.path, how);
  }
  if (mine.inputs.size() != zero.inputs.size()) {
    return fmt::format("rank {} read {} files, rank 0 read {}", rank, mine.inputs.size(), zero.inputs.size());
  }
  return std::nullopt;
}

}  // namespace railsim::study
