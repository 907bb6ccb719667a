// JsonReader: strict, pointer-aware reading of one JSON object for the spec
// loaders. Every accessor validates type and range and, on failure, throws
// Error whose `where` is the field's JSON pointer ("/gpu/peak_flops") and
// whose message says what was expected and what was found. Finish() rejects
// keys nobody asked for, with a "did you mean" for typos.
//
// Internal to spec/: nlohmann::json does not appear in any other layer.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace railsim::spec {

/// Parses `text` as JSON. Throws Error("", "not valid JSON: ...") naming the
/// line and column of the fault.
nlohmann::json ParseJsonText(std::string_view text);

// Accepted ranges of quantities, wide enough for any hardware and narrow
// enough that every time derived from them stays finite.
constexpr double kMinBandwidthBps = 1e3;   // 1 kB/s
constexpr double kMaxBandwidthBps = 1e15;  // 1 PB/s
constexpr double kMaxBytes = 1e18;         // 1 EB
constexpr double kMinFlopRate = 1e6;       // 1 MFLOP/s
constexpr double kMaxFlopRate = 1e21;      // 1 ZFLOP/s
constexpr double kMaxDuration_s = 10;

class JsonReader {
 public:
  /// `value` must outlive the reader. Throws Error(pointer) unless it is an object.
  JsonReader(const nlohmann::json& value, std::string pointer);

  bool Has(const std::string& key) const;

  /// Integers: JSON integers only (8.0 and "8" are rejected), within [min, max].
  int64_t Int(const std::string& key, int64_t min, int64_t max);
  int64_t IntOr(const std::string& key, int64_t fallback, int64_t min, int64_t max);

  /// Plain numbers within [min, max]; NaN cannot occur in JSON.
  double Number(const std::string& key, double min, double max);
  double NumberOr(const std::string& key, double fallback, double min, double max);

  /// Quantities: a JSON number in SI base units or a string with a unit
  /// ("400Gbps"). Must be > 0 unless `allow_zero`.
  double Bandwidth(const std::string& key);
  double Bytes(const std::string& key, bool allow_zero = false);
  double BytesOr(const std::string& key, double fallback);
  double FlopRate(const std::string& key);
  double Duration(const std::string& key, bool allow_zero = true);
  double DurationOr(const std::string& key, double fallback);

  bool BoolOr(const std::string& key, bool fallback);
  std::string String(const std::string& key);
  /// A non-empty string without control characters (a name printed in tables).
  std::string Name(const std::string& key);
  std::string StringOr(const std::string& key, const std::string& fallback);
  /// One of `allowed`; the error lists them.
  std::string EnumOr(const std::string& key, const std::vector<std::string>& allowed,
                     const std::string& fallback);

  /// A nested object reader; the nested value lives in the same document.
  JsonReader Object(const std::string& key);
  /// An array's elements (each checked by the caller).
  const nlohmann::json& Array(const std::string& key);
  /// An optional object of string values ("sources": {"field": "where from"}).
  std::map<std::string, std::string> StringMapOr(const std::string& key);
  /// Marks a key as known without reading it (free-form fields like "sources").
  void Skip(const std::string& key);

  /// Throws for any key that no accessor consumed.
  void Finish() const;

  std::string PointerTo(const std::string& key) const;

 private:
  const nlohmann::json& Get(const std::string& key);
  double Quantity(const std::string& key, double (*parse)(std::string_view, const std::string&),
                  bool allow_zero, double min_positive, double max);

  const nlohmann::json& value_;
  std::string pointer_;
  std::set<std::string> consumed_;
};

/// The JSON object form of a "sources" map (field -> where its number comes from).
nlohmann::ordered_json SourcesJson(const std::map<std::string, std::string>& sources);

/// A short, one-line rendering of a JSON value for error messages.
std::string Describe(const nlohmann::json& value);

}  // namespace railsim::spec
