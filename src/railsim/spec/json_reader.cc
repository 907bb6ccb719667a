#include "railsim/spec/json_reader.h"

#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/core/spellcheck.h"
#include "railsim/core/units.h"

namespace railsim::spec {
namespace {

// Spec files are small; deeper nesting than this is garbage, and refusing it
// up front keeps the parser and destructor far from any stack limit.
constexpr int kMaxJsonDepth = 64;

void CheckDepth(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) {
        throw Error("", fmt::format("not valid here: JSON nested deeper than {} levels", kMaxJsonDepth));
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

std::string EscapePointerToken(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

const char* TypeName(const nlohmann::json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number_integer() || v.is_number_unsigned()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return "an object";
}

}  // namespace

nlohmann::ordered_json SourcesJson(const std::map<std::string, std::string>& sources) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [key, value] : sources) j[key] = value;
  return j;
}

std::string Describe(const nlohmann::json& value) {
  std::string text = value.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

nlohmann::json ParseJsonText(std::string_view text) {
  CheckDepth(text);
  if (size_t nul = text.find('\0'); nul != std::string_view::npos) {
    throw Error("", fmt::format("not valid JSON: a NUL byte at offset {}", nul));
  }
  // JSON allows a key twice and nlohmann keeps the last; a spec file that
  // says num_layers twice is a mistake, not a choice.
  std::vector<std::set<std::string>> keys;  // per open object
  auto no_repeats = [&keys](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start) keys.emplace_back();
    if (event == Event::object_end && !keys.empty()) keys.pop_back();
    if (event == Event::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second) {
      throw Error("", fmt::format("not valid here: the key '{}' appears twice in one object; give it once",
                                  Printable(parsed.get<std::string>())));
    }
    return true;
  };
  try {
    return nlohmann::json::parse(text.begin(), text.end(), no_repeats);
  } catch (const nlohmann::json::exception& e) {
    // Drop nlohmann's "[json.exception.parse_error.101] " prefix.
    std::string message = e.what();
    size_t close = message.find("] ");
    if (message.rfind("[json.exception", 0) == 0 && close != std::string::npos) {
      message = message.substr(close + 2);
    }
    throw Error("", "not valid JSON: " + message);
  }
}

JsonReader::JsonReader(const nlohmann::json& value, std::string pointer)
    : value_(value), pointer_(std::move(pointer)) {
  if (!value_.is_object()) {
    throw Error(pointer_.empty() ? "/" : pointer_,
                fmt::format("expected a JSON object, got {}", TypeName(value_)));
  }
}

std::string JsonReader::PointerTo(const std::string& key) const {
  return pointer_ + "/" + EscapePointerToken(key);
}

bool JsonReader::Has(const std::string& key) const { return value_.contains(key); }

const nlohmann::json& JsonReader::Get(const std::string& key) {
  consumed_.insert(key);
  auto it = value_.find(key);
  if (it == value_.end()) throw Error(PointerTo(key), "required field is missing");
  return *it;
}

int64_t JsonReader::Int(const std::string& key, int64_t min, int64_t max) {
  const nlohmann::json& v = Get(key);
  std::string expected = max == INT64_MAX ? fmt::format("an integer >= {}", min)
                                          : fmt::format("an integer in [{}, {}]", min, max);
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(max) || (min > 0 && u < static_cast<uint64_t>(min))) {
      throw Error(PointerTo(key), fmt::format("expected {}, got {}", expected, u));
    }
    return static_cast<int64_t>(u);
  }
  if (!v.is_number_integer()) {
    throw Error(PointerTo(key), fmt::format("expected {}, got {}", expected, Describe(v)));
  }
  int64_t i = v.get<int64_t>();
  if (i < min || i > max) throw Error(PointerTo(key), fmt::format("expected {}, got {}", expected, i));
  return i;
}

int64_t JsonReader::IntOr(const std::string& key, int64_t fallback, int64_t min, int64_t max) {
  consumed_.insert(key);
  return Has(key) ? Int(key, min, max) : fallback;
}

double JsonReader::Number(const std::string& key, double min, double max) {
  const nlohmann::json& v = Get(key);
  if (!v.is_number()) {
    throw Error(PointerTo(key),
                fmt::format("expected a number in [{}, {}], got {}", min, max, Describe(v)));
  }
  double d = v.get<double>();
  if (!(d >= min && d <= max)) {
    throw Error(PointerTo(key), fmt::format("expected a number in [{}, {}], got {}", min, max, d));
  }
  return d;
}

double JsonReader::NumberOr(const std::string& key, double fallback, double min, double max) {
  consumed_.insert(key);
  return Has(key) ? Number(key, min, max) : fallback;
}

double JsonReader::Quantity(const std::string& key,
                            double (*parse)(std::string_view, const std::string&),
                            bool allow_zero, double min_positive, double max) {
  const nlohmann::json& v = Get(key);
  double value = 0;
  if (v.is_number()) {
    value = v.get<double>();
  } else if (v.is_string()) {
    value = parse(v.get_ref<const std::string&>(), PointerTo(key));
  } else {
    throw Error(PointerTo(key),
                fmt::format("expected a number or a string with a unit, got {}", Describe(v)));
  }
  if (value < 0 || (!allow_zero && value == 0)) {
    throw Error(PointerTo(key), fmt::format("expected a {} value, got {}",
                                            allow_zero ? "non-negative" : "positive", Describe(v)));
  }
  // Physical bounds keep every derived time finite (no inf or NaN in outputs).
  if ((value != 0 && value < min_positive) || value > max) {
    throw Error(PointerTo(key), fmt::format("expected a value in [{:g}, {:g}] (SI base units), got {}",
                                            min_positive, max, Describe(v)));
  }
  return value;
}

double JsonReader::Bandwidth(const std::string& key) {
  return Quantity(key, units::ParseBandwidth, false, kMinBandwidthBps, kMaxBandwidthBps);
}
double JsonReader::Bytes(const std::string& key, bool allow_zero) {
  return Quantity(key, units::ParseBytes, allow_zero, 1, kMaxBytes);
}
double JsonReader::BytesOr(const std::string& key, double fallback) {
  consumed_.insert(key);
  return Has(key) ? Bytes(key, true) : fallback;
}
double JsonReader::FlopRate(const std::string& key) {
  return Quantity(key, units::ParseFlopRate, false, kMinFlopRate, kMaxFlopRate);
}
double JsonReader::Duration(const std::string& key, bool allow_zero) {
  return Quantity(key, units::ParseDuration, allow_zero, 1e-12, kMaxDuration_s);
}
double JsonReader::DurationOr(const std::string& key, double fallback) {
  consumed_.insert(key);
  return Has(key) ? Duration(key, true) : fallback;
}

bool JsonReader::BoolOr(const std::string& key, bool fallback) {
  consumed_.insert(key);
  if (!Has(key)) return fallback;
  const nlohmann::json& v = Get(key);
  if (!v.is_boolean()) {
    throw Error(PointerTo(key), fmt::format("expected true or false, got {}", Describe(v)));
  }
  return v.get<bool>();
}

std::string JsonReader::String(const std::string& key) {
  const nlohmann::json& v = Get(key);
  if (!v.is_string()) throw Error(PointerTo(key), fmt::format("expected a string, got {}", Describe(v)));
  return v.get<std::string>();
}

std::string JsonReader::Name(const std::string& key) {
  std::string name = String(key);
  if (name.empty()) throw Error(PointerTo(key), "expected a name, got an empty string");
  for (char c : name) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      throw Error(PointerTo(key), fmt::format("expected a name without control characters, got {}", Quoted(name)));
    }
  }
  return name;
}

std::string JsonReader::StringOr(const std::string& key, const std::string& fallback) {
  consumed_.insert(key);
  return Has(key) ? String(key) : fallback;
}

std::string JsonReader::EnumOr(const std::string& key, const std::vector<std::string>& allowed,
                               const std::string& fallback) {
  std::string s = StringOr(key, fallback);
  for (const std::string& a : allowed) {
    if (s == a) return s;
  }
  throw Error(PointerTo(key), fmt::format("expected one of {}, got '{}'{}", fmt::join(allowed, ", "), s,
                                          DidYouMean(s, allowed)));
}

JsonReader JsonReader::Object(const std::string& key) { return JsonReader(Get(key), PointerTo(key)); }

const nlohmann::json& JsonReader::Array(const std::string& key) {
  const nlohmann::json& v = Get(key);
  if (!v.is_array()) throw Error(PointerTo(key), fmt::format("expected an array, got {}", TypeName(v)));
  return v;
}

std::map<std::string, std::string> JsonReader::StringMapOr(const std::string& key) {
  consumed_.insert(key);
  std::map<std::string, std::string> out;
  if (!Has(key)) return out;
  JsonReader object = Object(key);
  for (auto it = value_[key].begin(); it != value_[key].end(); ++it) {
    out[it.key()] = object.String(it.key());
  }
  return out;
}

void JsonReader::Skip(const std::string& key) { consumed_.insert(key); }

void JsonReader::Finish() const {
  std::vector<std::string> known(consumed_.begin(), consumed_.end());
  for (auto it = value_.begin(); it != value_.end(); ++it) {
    if (!consumed_.count(it.key())) {
      throw Error(PointerTo(it.key()),
                  fmt::format("unknown field{}; expected one of {}", DidYouMean(it.key(), known),
                              fmt::join(known, ", ")));
    }
  }
}

}  // namespace railsim::spec
