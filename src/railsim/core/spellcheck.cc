#include "railsim/core/spellcheck.h"

#include <algorithm>

namespace railsim {

int EditDistance(std::string_view a, std::string_view b) {
  std::vector<int> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    int diagonal = row[0];
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      int above = row[j];
      int substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string ClosestMatch(std::string_view word, const std::vector<std::string>& candidates) {
  // Long garbage inputs would cost O(n*m) per candidate for no useful answer.
  if (word.size() > 64) return "";
  const int limit = std::min(3, std::max(1, static_cast<int>(word.size()) / 2));
  std::string best;
  int best_distance = limit + 1;
  for (const std::string& candidate : candidates) {
    int d = EditDistance(word, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates) {
  std::string match = ClosestMatch(word, candidates);
  return match.empty() ? "" : " (did you mean '" + match + "'?)";
}

}  // namespace railsim
