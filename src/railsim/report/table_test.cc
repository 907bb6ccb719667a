// The text helpers: tables align, numbers read as written, sentences wrap.
#include "railsim/report/table.h"

#include <gtest/gtest.h>

namespace railsim::report {
namespace {

TEST(TableTest, WrapBreaksAtSpacesWithAHangingIndent) {
  EXPECT_EQ("- one two\n  three\n", Wrap("- one two three", 9, "  "));
  // A word longer than the width stays whole on its own line.
  EXPECT_EQ("a\n  abcdefghijk\n  b\n", Wrap("a abcdefghijk b", 5, "  "));
  EXPECT_EQ("short\n", Wrap("short", 100, "  "));
  // No line but an overlong word passes the width.
  const std::string wrapped = Wrap(std::string(50, 'x') + " " + std::string(40, 'y') + " z", 60, "  ");
  EXPECT_EQ(std::string(50, 'x') + "\n  " + std::string(40, 'y') + " z\n", wrapped);
}

TEST(TableTest, NumberFormats) {
  EXPECT_EQ("32,768", Grouped(32768));
  EXPECT_EQ("-1,000", Grouped(-1000));
  EXPECT_EQ("$152,829,952", Dollars(152829952.4));
  EXPECT_EQ("-$4,263,936", Dollars(-4263936));
  EXPECT_EQ("2^4 x 3 x 5^4", PrimeFactors(30000));
  EXPECT_EQ("2^15", PrimeFactors(32768));
  EXPECT_EQ("2 x 3^2 x 7", PrimeFactors(126));
  EXPECT_EQ("4.55 MW", Watts(4548608));
  EXPECT_EQ("38.3%", Percent(0.3829));
}

TEST(TableTest, ColumnsAlign) {
  TextTable t;
  t.AddColumn("name", TextTable::Align::kLeft);
  t.AddColumn("n");
  t.AddRow({"a", "1"});
  t.AddRow({"bbb", "22"});
  EXPECT_EQ("name   n\n--------\na      1\nbbb   22\n", t.Render());
}

}  // namespace
}  // namespace railsim::report
