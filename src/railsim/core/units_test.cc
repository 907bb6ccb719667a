#include "railsim/core/units.h"

#include <gtest/gtest.h>

#include "railsim/core/error.h"
#include "railsim/core/spellcheck.h"

namespace railsim::units {
namespace {

std::string ErrorOf(double (*parse)(std::string_view, const std::string&), std::string_view text) {
  try {
    parse(text, "/x");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(UnitsTest, Bandwidth) {
  EXPECT_DOUBLE_EQ(50e9, ParseBandwidth("400Gbps", ""));
  EXPECT_DOUBLE_EQ(50e9, ParseBandwidth("400 Gb/s", ""));
  EXPECT_DOUBLE_EQ(50e9, ParseBandwidth("50GB/s", ""));
  EXPECT_DOUBLE_EQ(50e9, ParseBandwidth("50GBps", ""));
  EXPECT_DOUBLE_EQ(3.35e12, ParseBandwidth("3.35TB/s", ""));
  EXPECT_DOUBLE_EQ(1073741824.0, ParseBandwidth("1GiB/s", ""));
  EXPECT_DOUBLE_EQ(25e9, ParseBandwidth("2.5e10", ""));  // bare number: bytes/s
  EXPECT_DOUBLE_EQ(125e6, ParseBandwidth("1Gbps", ""));
}

TEST(UnitsTest, BytesFlopsDurations) {
  EXPECT_DOUBLE_EQ(80.0 * 1024 * 1024 * 1024, ParseBytes("80GiB", ""));
  EXPECT_DOUBLE_EQ(80e9, ParseBytes("80GB", ""));
  EXPECT_DOUBLE_EQ(1048576.0, ParseBytes("1MiB", ""));
  EXPECT_DOUBLE_EQ(989e12, ParseFlopRate("989TFLOPS", ""));
  EXPECT_DOUBLE_EQ(312e12, ParseFlopRate("312 TFLOP/s", ""));
  EXPECT_DOUBLE_EQ(5e-6, ParseDuration("5us", ""));
  EXPECT_DOUBLE_EQ(1.5e-3, ParseDuration("1.5ms", ""));
}

TEST(UnitsTest, RejectsWithFieldAndExpectation) {
  EXPECT_EQ("/x: expected a bandwidth such as \"400Gbps\" or \"50GB/s\", got '400Gbsp' (unknown unit 'Gbsp')",
            ErrorOf(ParseBandwidth, "400Gbsp"));
  EXPECT_EQ("/x: expected a size such as \"80GiB\" or \"1MiB\", got 'GiB'", ErrorOf(ParseBytes, "GiB"));
  EXPECT_EQ("/x: expected a size such as \"80GiB\" or \"1MiB\", got ''", ErrorOf(ParseBytes, ""));
  EXPECT_EQ("/x: expected a finite number, got 'inf'", ErrorOf(ParseFlopRate, "inf"));
  EXPECT_EQ("/x: expected a finite number, got 'nan'", ErrorOf(ParseNumber, "nan"));
  EXPECT_EQ("/x: expected a finite number, got '1e999'", ErrorOf(ParseNumber, "1e999"));
  EXPECT_EQ("/x: expected a number, got '12abc' (unknown unit 'abc')", ErrorOf(ParseNumber, "12abc"));
}

TEST(UnitsTest, FormatRoundTrips) {
  EXPECT_EQ("400Gbps", FormatBitRate(50e9));
  EXPECT_EQ("450GB/s", FormatByteRate(450e9));
  EXPECT_EQ("80GiB", FormatBytes(80.0 * 1024 * 1024 * 1024));
  EXPECT_EQ("96GB", FormatBytes(96e9));
  EXPECT_EQ("989TFLOPS", FormatFlopRate(989e12));
  EXPECT_EQ("5us", FormatDuration(5e-6));
  for (double v : {50e9, 25e9, 12.5e9, 3.35e12}) {
    EXPECT_DOUBLE_EQ(v, ParseBandwidth(FormatBitRate(v), ""));
    EXPECT_DOUBLE_EQ(v, ParseBandwidth(FormatByteRate(v), ""));
  }
}

TEST(SpellcheckTest, SuggestsCloseNames) {
  EXPECT_EQ(3, EditDistance("kitten", "sitting"));
  EXPECT_EQ("dgx-h100", ClosestMatch("dgx-h10", {"dgx-a100", "dgx-h100", "gb200-nvl72"}));
  EXPECT_EQ("", ClosestMatch("zzzzzzzz", {"dgx-a100", "dgx-h100"}));
  EXPECT_EQ(" (did you mean 'rail-only'?)", DidYouMean("rail-onyl", {"rail-only", "fat-tree"}));
}

}  // namespace
}  // namespace railsim::units

namespace railsim {
namespace {

// Error lines never carry raw bytes of a user's file to the terminal.
TEST(PrintableTest, EscapesWhatIsNotPrintable) {
  EXPECT_EQ("last read: '\\xf2'", Printable("last read: '\xf2'"));
  EXPECT_EQ("a\\nb\\tc\\x00d\\x7f", Printable(std::string("a\nb\tc\0d\x7f", 8)));
  EXPECT_EQ("caf\xc3\xa9 \xe2\x82\xac", Printable("caf\xc3\xa9 \xe2\x82\xac"));  // valid UTF-8 stays
  EXPECT_EQ("\\xc3(", Printable("\xc3("));                                      // truncated sequence
  EXPECT_EQ("\\xed\\xa0\\x80", Printable("\xed\xa0\x80"));                        // a surrogate
}

}  // namespace
}  // namespace railsim
