#include "railsim/core/error.h"

#include <utility>

#include <fmt/format.h>

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

namespace {

// Length of the valid UTF-8 sequence of 2-4 bytes starting at text[i], or 0.
size_t Utf8Length(std::string_view text, size_t i) {
  const auto byte = [&](size_t j) { return static_cast<unsigned char>(text[j]); };
  const unsigned char c = byte(i);
  size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (size_t j = 1; j < n; ++j) {
    if ((byte(i + j) & 0xC0) != 0x80) return 0;
  }
  // Overlong three-byte forms and surrogates, and code points past U+10FFFF.
  if (c == 0xE0 && byte(i + 1) < 0xA0) return 0;
  if (c == 0xED && byte(i + 1) >= 0xA0) return 0;
  if (c == 0xF0 && byte(i + 1) < 0x90) return 0;
  if (c == 0xF4 && byte(i + 1) >= 0x90) return 0;
  return n;
}

}  // namespace

std::string Printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F) {
      out += char(c);
      ++i;
    } else if (size_t n = c >= 0x80 ? Utf8Length(text, i) : 0; n > 0) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      out += c == '\n' ? std::string("\\n") : c == '\t' ? std::string("\\t") : fmt::format("\\x{:02x}", c);
      ++i;
    }
  }
  return out;
}

}  // namespace railsim
