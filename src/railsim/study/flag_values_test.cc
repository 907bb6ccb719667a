// Flag values as users paste them: sizes as nccl-tests prints them (a bare
// whole number of bytes), and one --threads range for every command.
#include "railsim/study/flag_values.h"

#include <string>

#include <gtest/gtest.h>

#include "railsim/core/error.h"

namespace railsim::study {
namespace {

std::string ErrorOf(void (*parse)(const std::string&), const std::string& text) {
  try {
    parse(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

void ParseBytes(const std::string& text) { ParseBytesFlag("--bytes", text, 1e15); }
void ParseThreads(const std::string& text) { ParseThreadsFlag(text); }

TEST(FlagValuesTest, BareWholeSizesAreBytes) {
  // nccl-tests prints 1048576 for 1 MiB; dd and nccl-tests' -b read it so.
  EXPECT_EQ(1048576, ParseBytesFlag("--bytes", "1048576", 1e15));
  EXPECT_EQ(1048576, ParseBytesFlag("--bytes", "1MiB", 1e15));
  EXPECT_EQ(8, ParseBytesFlag("--bytes-per-pair", "8", 1e12));
  EXPECT_EQ("--bytes: expected a value with its unit, such as 64KiB, 1MB, 512B or a whole number of bytes, got "
            "'1.5'",
            ErrorOf(ParseBytes, "1.5"));
  EXPECT_EQ("--bytes: expected a value with its unit, such as 64KiB, 1MB, 512B or a whole number of bytes, got "
            "'-8'",
            ErrorOf(ParseBytes, "-8"));
  EXPECT_EQ("--bytes: expected a size in [1B, 1PB], got '0'", ErrorOf(ParseBytes, "0"));
  EXPECT_EQ("--bytes: expected a size in [1B, 1PB], got '99999999999999999999'",
            ErrorOf(ParseBytes, "99999999999999999999"));
}

TEST(FlagValuesTest, ThreadsTakeOneRange) {
  EXPECT_EQ(1024, kMaxThreads);
  EXPECT_EQ(1024, ParseThreadsFlag("1024"));
  EXPECT_EQ(1, ParseThreadsFlag("1"));
  EXPECT_EQ("--threads: expected an integer in [1, 1024], got 1025", ErrorOf(ParseThreads, "1025"));
  EXPECT_EQ("--threads: expected an integer in [1, 1024], got 0", ErrorOf(ParseThreads, "0"));
  EXPECT_GE(DefaultThreads(), 1);
  EXPECT_LE(DefaultThreads(), kMaxThreads);
}

}  // namespace
}  // namespace railsim::study
