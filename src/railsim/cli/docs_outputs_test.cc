// The outputs pasted into the docs are this binary's: every fenced block of
// docs/*.md and README.md whose lines start with "$ " is rerun, and each
// output line it shows must appear in what the command prints, in order.
// Words and punctuation match exactly; numbers match within 1% or one unit
// of their last printed digit, so a page goes stale when a figure moves, not
// when a last digit does. A line "..." stands for lines left out (pages leave
// out what differs run to run: elapsed times, thread counts). Commands run
// in a fresh directory where tests/, examples/ and presets/ are the
// repository's, so pages name files as a user in a checkout does.

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "testutil/run_binary.h"
#include "railsim/core/text_fields.h"

namespace railsim::testutil {
namespace {

struct DocCommand {
  std::string where;  ///< page:line
  std::vector<std::string> args;  ///< argv, the program first
  std::vector<std::string> expected;  ///< the output lines the page shows
};

// Splits a command line as a POSIX shell would for what pages use: words
// separated by blanks, '...' and "..." quoting.
std::vector<std::string> SplitWords(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (char ch : line) {
    if (quote) {
      if (ch == quote) quote = 0;
      else word += ch;
    } else if (ch == '\'' || ch == '"') {
      quote = ch;
      in_word = true;
    } else if (ch == ' ' || ch == '\t') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += ch;
      in_word = true;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

std::vector<std::string> LinesOf(const std::string& text) {
  const std::vector<std::string_view> views = SplitLines(text);
  return {views.begin(), views.end()};
}

// Every "$ " command of every fenced block of `page`, with the lines after
// it in its block (up to the next command) as its output.
std::vector<DocCommand> CommandsOf(const std::string& page, const std::string& name) {
  std::vector<DocCommand> commands;
  const std::vector<std::string> lines = LinesOf(page);
  bool fenced = false, in_command = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("```", 0) == 0) {
      fenced = !fenced;
      in_command = false;
      continue;
    }
    if (!fenced) continue;
    if (lines[i].rfind("$ ", 0) != 0) {
      if (in_command && !lines[i].empty()) commands.back().expected.push_back(lines[i]);
      continue;
    }
    DocCommand c;
    c.where = name + ":" + std::to_string(i + 1);
    std::string text = lines[i].substr(2);
    while (!text.empty() && text.back() == '\\' && i + 1 < lines.size()) text.pop_back(), text += lines[++i];
    c.args = SplitWords(text);
    commands.push_back(c);
    in_command = true;
  }
  return commands;
}

// The numbers in `line` and what is left when each is replaced by "#".
struct Shape {
  std::string skeleton;
  std::vector<std::string> numbers;
};

Shape ShapeOf(const std::string& line) {
  static const std::regex kNumber(R"([-+]?[0-9][0-9,]*(\.[0-9]+)?([eE][-+]?[0-9]+)?)");
  Shape s;
  std::string rest = line;
  std::smatch m;
  while (std::regex_search(rest, m, kNumber)) {
    s.skeleton += m.prefix().str() + "#";
    s.numbers.push_back(m.str());
    rest = m.suffix().str();
  }
  s.skeleton += rest;
  // Runs of blanks are alignment, which a longer number shifts.
  std::string squeezed;
  for (char ch : s.skeleton) {
    if (ch == ' ' && !squeezed.empty() && squeezed.back() == ' ') continue;
    squeezed += ch;
  }
  s.skeleton = squeezed;
  return s;
}

double ValueOf(std::string text) {
  text.erase(std::remove(text.begin(), text.end(), ','), text.end());
  return std::strtod(text.c_str(), nullptr);
}

// Within 1%; a number with decimals also within one unit of its last digit
// (counts such as "8 racks" get no such slack).
bool Near(const std::string& documented, const std::string& printed) {
  const double a = ValueOf(documented), b = ValueOf(printed);
  const size_t dot = documented.find('.');
  const size_t exponent = documented.find_first_of("eE");
  double unit = 0;
  if (dot != std::string::npos) {
    const size_t end = exponent == std::string::npos ? documented.size() : exponent;
    unit = std::pow(10.0, -double(end - dot - 1));
    if (exponent != std::string::npos) unit *= std::pow(10.0, std::atof(documented.c_str() + exponent + 1));
  }
  return std::fabs(a - b) <= std::max(0.01 * std::fabs(a), unit * 1.0000001);
}

bool Matches(const std::string& documented, const std::string& printed) {
  const Shape d = ShapeOf(documented), p = ShapeOf(printed);
  if (d.skeleton != p.skeleton || d.numbers.size() != p.numbers.size()) return false;
  for (size_t i = 0; i < d.numbers.size(); ++i) {
    if (!Near(d.numbers[i], p.numbers[i])) return false;
  }
  return true;
}

// `head -N FILE`, the one other command pages use (to show a row file).
std::string Head(const std::vector<std::string>& args) {
  std::ifstream in(args.back());
  const int n = args.size() == 3 ? std::abs(std::atoi(args[1].c_str())) : 10;
  std::string out, line;
  for (int i = 0; i < n && std::getline(in, line); ++i) out += line + "\n";
  return out;
}


TEST(DocsOutputsTest, EveryPastedOutputIsWhatTheCommandPrints) {
  namespace fs = std::filesystem;
  const fs::path source = RAILSIM_SOURCE_DIR;
  std::vector<fs::path> pages = {source / "README.md"};
  for (const fs::directory_entry& e : fs::directory_iterator(source / "docs")) {
    if (e.path().extension() == ".md") pages.push_back(e.path());
  }
  std::sort(pages.begin(), pages.end());
  const fs::path dir = MakeTempDir();
  for (const char* shared : {"tests", "examples", "presets"}) fs::create_directory_symlink(source / shared, dir / shared);
  const fs::path before = fs::current_path();
  fs::current_path(dir);
  int commands = 0;
  for (const fs::path& page : pages) {
    for (const DocCommand& c : CommandsOf(Slurp(page), page.filename().string())) {
      ASSERT_FALSE(c.args.empty()) << c.where;
      std::string printed;
      if (c.args[0] == "railsim") {
        const RunResult r = RunRailsim(std::vector<std::string>(c.args.begin() + 1, c.args.end()), 280);
        printed = r.out + r.err;
      } else if (c.args[0] == "head") {
        printed = Head(c.args);
      } else {
        ADD_FAILURE() << c.where << ": a page's \"$ \" command runs railsim or head, not " << c.args[0];
        continue;
      }
      ++commands;
      const std::vector<std::string> lines = LinesOf(printed);
      size_t at = 0;
      for (const std::string& want : c.expected) {
        if (want == "..." || want.find_first_not_of(' ') == std::string::npos) continue;
        size_t found = at;
        while (found < lines.size() && !Matches(want, lines[found])) ++found;
        EXPECT_LT(found, lines.size()) << c.where << ": the page shows\n  " << want
                                       << "\nwhich the command does not print (after line " << at
                                       << "); it prints:\n" << printed;
        if (found == lines.size()) break;
        at = found + 1;
      }
    }
  }
  fs::current_path(before);
  std::cout << "documented commands rerun: " << commands << "\n";
  EXPECT_GE(commands, 10);
}

TEST(DocsOutputsTest, BlocksSplitIntoCommandsAndTheirOutput) {
  const std::string page =
      "text\n```\n$ railsim a \\\n    --b 'c d'\nout 1\n...\nout 2\n$ head -1 f\nrow\n```\n"
      "```\n  railsim not-checked\nplain\n```\n";
  const std::vector<DocCommand> c = CommandsOf(page, "p.md");
  ASSERT_EQ(2u, c.size());
  EXPECT_EQ("p.md:3", c[0].where);
  EXPECT_EQ((std::vector<std::string>{"railsim", "a", "--b", "c d"}), c[0].args);
  EXPECT_EQ((std::vector<std::string>{"out 1", "...", "out 2"}), c[0].expected);
  EXPECT_EQ((std::vector<std::string>{"head", "-1", "f"}), c[1].args);
  EXPECT_EQ((std::vector<std::string>{"row"}), c[1].expected);
}

TEST(DocsOutputsTest, NumbersMatchWithinTheirPrintedPrecision) {
  EXPECT_TRUE(Matches("cost $2,947,072 (38.3%)", "cost $2,947,100 (38.2%)"));  // 1% / last digit
  EXPECT_FALSE(Matches("cost $2,947,072 (38.3%)", "cost $3,047,072 (38.3%)"));
  EXPECT_TRUE(Matches("a   2.61x  b", "a 2.62x b"));                        // alignment and last digit
  EXPECT_FALSE(Matches("slowdown 2.61x", "slowdown 2.71x"));
  EXPECT_FALSE(Matches("occupancy 73.4%", "occupancy 73.4 %"));            // words exact
  EXPECT_TRUE(Matches(R"({"t":12.39166559190764})", R"({"t":12.3917})"));
  EXPECT_FALSE(Matches("8 racks", "9 racks"));
}

}  // namespace
}  // namespace railsim::testutil
