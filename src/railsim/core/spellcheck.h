// "Did you mean" suggestions for unknown names (presets, designs, JSON keys),
// in the manner of ninja's SpellcheckString.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace railsim {

/// Levenshtein distance between `a` and `b`.
int EditDistance(std::string_view a, std::string_view b);

/// The candidate closest to `word` if it is close enough to be a likely typo
/// (distance at most 3 and less than half of the word), else "".
std::string ClosestMatch(std::string_view word, const std::vector<std::string>& candidates);

/// " (did you mean 'x'?)" when ClosestMatch finds one, else "". Ready to be
/// appended to an error message.
std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace railsim
