#include "railsim/core/error.h"

#include <utility>

namespace railsim {
namespace {

std::string Compose(const std::string& where, const std::string& message) {
  std::string text = where.empty() ? message : where + ": " + message;
  // The CLI promises exactly one line on stderr, so no message may break it.
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

}  // namespace

Error::Error(std::string where, std::string message)
    : std::runtime_error(Compose(where, message)),
      where_(std::move(where)),
      message_(std::move(message)) {}

std::string Quoted(std::string_view text) {
  std::string out = "'";
  for (char c : text.substr(0, 40)) {
    unsigned char u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u == 0x7f) ? '?' : c;
  }
  if (text.size() > 40) out += "...";
  return out + "'";
}

Error Error::WithContext(const std::string& context) const {
  if (context.empty()) return *this;
  if (where_.empty()) return Error(context, message_);
  return Error(context + ": " + where_, message_);
}

}  // namespace railsim
