// SweepConfig: what `railsim sweep` runs. One study (network, estimate,
// search, alltoall, collective or failures) at every point of a
// grid: fixed parameters plus axes (lists, ranges, or zipped tuples). The
// parameters are the study's command-line flags spelled with underscores
// ("global_batch_size" for --global-batch-size).
//
// Parsing validates the whole document before anything runs: unknown
// studies and keys (with a did-you-mean), types and ranges of every value
// on every axis, required keys, zip groups. What can still fail at a point
// is a combination (a pipeline degree that does not divide the layers); the
// sweep reports that as the point's row.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace railsim::spec {

enum class SweepStudy { kNetwork, kEstimate, kSearch, kAllToAll, kCollective, kFailures, kCompare, kCluster };

const char* SweepStudyName(SweepStudy study);

/// One validated parameter value. Integers keep their integer form; a
/// bandwidth such as "800Gbps" or a duration such as "20min" keeps its text
/// and carries its value in `number` (bytes/s, seconds).
struct SweepValue {
  enum class Kind { kInt, kNumber, kString, kBool };
  Kind kind = Kind::kInt;
  int64_t int_value = 0;
  double number = 0;
  std::string text;
  bool flag = false;
};

struct SweepParam {
  std::string key;
  SweepValue value;
};

/// One dimension of the grid: a plain axis has one key; a zip group has
/// several keys whose values advance together (tuples[i][j] is keys[j]'s
/// value at step i).
struct SweepAxis {
  std::vector<std::string> keys;
  std::vector<std::vector<SweepValue>> tuples;
};

/// Largest grid a sweep may describe.
constexpr int64_t kMaxSweepPoints = 100'000'000;
/// Longest axis (a list, or a range once expanded), and most values over
/// all axes: bounds the memory a config can ask for before its grid is checked.
constexpr int64_t kMaxAxisValues = 100'000;
constexpr int64_t kMaxSweepValues = 1'000'000;

struct SweepConfig {
  SweepStudy study = SweepStudy::kEstimate;
  std::vector<SweepParam> fixed;
  std::vector<SweepAxis> axes;  ///< the last varies fastest
  int64_t points = 1;

  /// The parameters at point `index` (fixed ones first, then the axes', in
  /// the study's parameter order). Requires 0 <= index < points.
  std::vector<SweepParam> Point(int64_t index) const;
};

/// Parses and validates a sweep config. Throws Error with the JSON pointer
/// of the fault ("/axes/pp/2: expected an integer in [1, 1048576], got 0").
SweepConfig ParseSweepConfigJson(std::string_view text);

/// The parameter keys a study accepts, in the order rows print them.
std::vector<std::string> SweepParamKeys(SweepStudy study);

/// The value of `key` at a point, or null when the point does not set it.
const SweepValue* FindParam(const std::vector<SweepParam>& point, std::string_view key);

}  // namespace railsim::spec
