// railsim::Error: the one exception type railsim throws, and only at its edges
// (spec loading, unit parsing, file I/O, command-line handling).
//
// An Error says where the bad value came from (a JSON pointer such as
// "/hb_domain_size" or a flag such as "--gpus") and what was expected. main()
// catches it once, prints `railsim: error: <what()>` on one line and exits 2.
// Lower layers (net/, comm/, perf/, sim/, search/) never throw: they assume
// validated input and check their invariants with assert().
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace railsim {

class Error : public std::runtime_error {
 public:
  /// `where` names the field (JSON pointer or flag); may be empty.
  /// `message` states what was expected and what was found.
  Error(std::string where, std::string message);

  const std::string& where() const { return where_; }
  const std::string& message() const { return message_; }

  /// Returns a copy whose `where` is prefixed with `context` (for example the
  /// file a JSON pointer belongs to: "--model m.json" + "/hidden_size").
  Error WithContext(const std::string& context) const;

 private:
  std::string where_;
  std::string message_;
};

/// User text quoted for an error message: 'like this', at most 40
/// characters (then "..."), control characters shown as '?', so that a
/// message stays one short printable line.
std::string Quoted(std::string_view text);

/// `text` with every byte that is not printable ASCII or part of a valid
/// UTF-8 sequence written as \xNN (and tabs, newlines as \t, \n), so that an
/// error line never sends raw bytes of a user's file to the terminal.
std::string Printable(std::string_view text);

}  // namespace railsim
