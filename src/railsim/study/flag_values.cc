#include "railsim/study/flag_values.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <thread>

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/core/spellcheck.h"
#include "railsim/core/units.h"
#include "railsim/spec/strategy.h"

namespace railsim::study {

int64_t ParseIntFlag(const std::string& flag, const std::string& text, int64_t min, int64_t max) {
  std::string expected = max == INT64_MAX ? fmt::format("an integer >= {}", min)
                                          : fmt::format("an integer in [{}, {}]", min, max);
  int64_t value = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec == std::errc::result_out_of_range) {
    throw Error(flag, fmt::format("expected {}, got {} (out of range)", expected, Quoted(text)));
  }
  if (ec != std::errc() || ptr != end || text.empty()) {
    throw Error(flag, fmt::format("expected {}, got {}", expected, Quoted(text)));
  }
  if (value < min || value > max) throw Error(flag, fmt::format("expected {}, got {}", expected, value));
  return value;
}

double ParseNumberFlag(const std::string& flag, const std::string& text, double min, double max) {
  double value = units::ParseNumber(text, flag);
  if (!(value >= min && value <= max)) {
    throw Error(flag, fmt::format("expected a number in [{}, {}], got {}", min, max, Quoted(text)));
  }
  return value;
}

namespace {

// A flag's quantity must carry its unit: a bare "300" would silently mean
// 300 B/s (or 300 bytes), which no one means.
void RequireUnit(const std::string& flag, const std::string& text, const char* examples) {
  const bool has_letter = std::any_of(text.begin(), text.end(), [](char c) {
    return std::isalpha(static_cast<unsigned char>(c)) && c != 'e' && c != 'E';
  });
  if (!has_letter) {
    throw Error(flag, fmt::format("expected a value with its unit, such as {}, got {}", examples, Quoted(text)));
  }
}

}  // namespace

double ParseBytesFlag(const std::string& flag, const std::string& text, double max_bytes) {
  // A whole number alone is bytes, as nccl-tests (-b 8 -e 8G) and dd read
  // it and print it; a fraction without a unit is refused.
  const bool whole = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!whole) RequireUnit(flag, text, "64KiB, 1MB, 512B or a whole number of bytes");
  double value = units::ParseBytes(text, flag);
  if (!(value >= 1) || value > max_bytes) {
    throw Error(flag, fmt::format("expected a size in [1B, {}], got {}", units::FormatBytes(max_bytes), Quoted(text)));
  }
  return value;
}

double ParseBandwidthFlag(const std::string& flag, const std::string& text) {
  RequireUnit(flag, text, "400Gbps or 50GB/s");
  double value = units::ParseBandwidth(text, flag);
  // 1 kb/s to 8 Pb/s: anything outside is a typo, and would make times infinite.
  if (!(value >= 125) || value > 1e15) {
    throw Error(flag, fmt::format("expected a positive bandwidth such as 400Gbps (at most 8Pbps), got {}",
                                  Quoted(text)));
  }
  return value;
}

std::vector<std::string> SplitFlagList(const std::string& flag, const std::string& text, size_t max_entries) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    out.push_back(text.substr(start, comma == std::string::npos ? comma : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (out.size() > max_entries) {
    throw Error(flag, fmt::format("expected at most {} entries, got {}", max_entries, out.size()));
  }
  return out;
}

std::string ParseChoiceFlag(const std::string& flag, const std::string& text,
                            const std::vector<std::string>& allowed) {
  for (const std::string& a : allowed) {
    if (text == a) return text;
  }
  throw Error(flag, fmt::format("expected one of {}, got {}{}", fmt::join(allowed, ", "), Quoted(text),
                                DidYouMean(text, allowed)));
}

int64_t ParseDpFlag(const std::string& text, int tp, int pp, int cp, int64_t gpus) {
  if (!text.empty()) return ParseIntFlag("--dp", text, 1, spec::kMaxModelGpus);
  int64_t others = int64_t{tp} * pp * cp;
  if (others > gpus || gpus % others != 0) {
    throw Error("--dp", fmt::format("tp x pp x cp = {} x {} x {} = {} does not divide --gpus {}", tp, pp, cp, others,
                                    gpus));
  }
  return gpus / others;
}

double ParseDurationFlag(const std::string& flag, const std::string& text, double min_s, double max_s) {
  double s = units::ParseDuration(text, flag);
  if (!(s >= min_s) || !(s <= max_s)) {
    throw Error(flag, fmt::format("expected a duration in [{}, {}], got {}", units::FormatDuration(min_s),
                                  units::FormatDuration(max_s), Quoted(text)));
  }
  return s;
}

int ParseThreadsFlag(const std::string& text) { return int(ParseIntFlag("--threads", text, 1, kMaxThreads)); }

int DefaultThreads() {
  return std::clamp(int(std::min<unsigned>(std::thread::hardware_concurrency(), kMaxThreads)), 1, kMaxThreads);
}

}  // namespace railsim::study
