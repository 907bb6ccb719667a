// Reading sweep row files back: rows kept in order, what is forgiven with a
// note (a cut-off last line, a row repeated byte for byte) and everything
// else refused with the file and line.
#include "railsim/report/sweep_rows.h"

#include <gtest/gtest.h>

#include "railsim/core/error.h"

namespace railsim::report {
namespace {

const char kRow0[] = R"({"index":0,"points":3,"point":{"gpus":8},"results":{"cost_usd":1}})" "\n";
const char kRow2[] = R"({"index":2,"points":3,"point":{"gpus":32},"error":"no layout"})" "\n";
const char kHeader[] = "index,points,gpus,cost_usd,error\n";

// The message of the Error `read` throws, or "" when it throws none.
template <typename Read>
std::string ErrorOf(Read read) {
  try {
    read();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string ErrorReading(const std::string& text) {
  return ErrorOf([&] { SweepRowReader("--merge").Read("a.jsonl", text); });
}

TEST(SweepRowReaderTest, JsonRowsInTheOrderRead) {
  SweepRowReader r("--merge");
  r.Read("a.jsonl", std::string(kRow2) + kRow0);
  EXPECT_FALSE(r.csv());
  EXPECT_EQ(3, r.points());
  ASSERT_EQ(2u, r.rows().size());
  EXPECT_EQ(2, r.rows()[0].index);
  EXPECT_EQ(kRow0, r.rows()[1].line);
  EXPECT_TRUE(r.notes().empty());
}

TEST(SweepRowReaderTest, CsvRowsWithQuotedCommas) {
  SweepRowReader r("--resume");
  r.Read("a.csv", std::string(kHeader) + "1,3,16,2.5,\n" + "0,3,8,,\"no layout, at all\"\n");
  EXPECT_TRUE(r.csv());
  EXPECT_EQ(kHeader, r.header());
  ASSERT_EQ(2u, r.rows().size());
  EXPECT_EQ(0, r.rows()[1].index);
}

TEST(SweepRowReaderTest, CutOffLastLineIsDroppedWithANote) {
  SweepRowReader r("--resume");
  r.Read("a.jsonl", std::string(kRow0) + R"({"index":1,"poi)");
  ASSERT_EQ(1u, r.rows().size());
  ASSERT_EQ(1u, r.notes().size());
  EXPECT_EQ("a.jsonl:2: the last line has no newline (a sweep stopped mid-write?): dropped, 15 bytes", r.notes()[0]);
}

TEST(SweepRowReaderTest, IdenticalRepeatIsDroppedWithANote) {
  SweepRowReader r("--merge");
  r.Read("a.jsonl", kRow0);
  r.Read("b.jsonl", std::string(kRow2) + kRow0);
  ASSERT_EQ(2u, r.rows().size());
  ASSERT_EQ(1u, r.notes().size());
  EXPECT_EQ("b.jsonl:2: point 0 repeats the row at a.jsonl:1: dropped", r.notes()[0]);
}

TEST(SweepRowReaderTest, TwoDifferentRowsOfOnePointAreRefused) {
  const std::string other = R"({"index":0,"points":3,"point":{"gpus":8},"results":{"cost_usd":2}})" "\n";
  EXPECT_EQ("--merge: a.jsonl:2: point 0 differs from its row at a.jsonl:1; keep one of them",
            ErrorReading(std::string(kRow0) + other));
}

TEST(SweepRowReaderTest, GarbageIsRefused) {
  EXPECT_EQ("--merge: a.jsonl:2: expected a row of railsim sweep (JSON Lines or CSV) or its CSV header, got "
            "'hello'",
            ErrorReading(std::string(kRow0) + "hello\n"));
  EXPECT_EQ("--merge: a.jsonl:1: expected a row of railsim sweep (JSON Lines or CSV) or its CSV header, got "
            "'{\"index\":0,\"points\":3}'",
            ErrorReading("{\"index\":0,\"points\":3}\n"));
  EXPECT_EQ("--merge: a.jsonl:1: expected a row of railsim sweep (JSON Lines or CSV) or its CSV header, got ''",
            ErrorReading("\n"));
}

TEST(SweepRowReaderTest, IndexOutsideThePointsIsRefused) {
  EXPECT_EQ("--merge: a.jsonl:1: point index -1 is outside 0 to 2 (the sweep has 3 points)",
            ErrorReading(R"({"index":-1,"points":3,"point":{},"results":{}})" "\n"));
  EXPECT_EQ("--merge: a.jsonl:1: point index 3 is outside 0 to 2 (the sweep has 3 points)",
            ErrorReading(R"({"index":3,"points":3,"point":{},"results":{}})" "\n"));
  EXPECT_EQ("--merge: a.jsonl:2: point index 7 is outside 0 to 2 (the sweep has 3 points)",
            ErrorReading(std::string(kHeader) + "7,3,8,1,\n"));
}

TEST(SweepRowReaderTest, RowsOfAnotherSweepOrFormatAreRefused) {
  EXPECT_EQ("--merge: a.jsonl:2: a row of a sweep of 4 points; the row at a.jsonl:1 is of 3 points",
            ErrorReading(std::string(kRow0) + R"({"index":1,"points":4,"point":{},"results":{}})" "\n"));
  EXPECT_EQ("--merge: a.jsonl:2: a CSV line among JSON Lines rows; the files of one sweep hold one format",
            ErrorReading(std::string(kRow0) + kHeader));
  EXPECT_EQ("--merge: a.jsonl:3: another CSV header than the one at a.jsonl:1 (rows of another sweep)",
            ErrorReading(std::string(kHeader) + "0,3,8,1,\n" + "index,points,tp,error\n"));
  EXPECT_EQ("--merge: a.jsonl:2: a CSV row of 4 fields; the header at a.jsonl:1 has 5",
            ErrorReading(std::string(kHeader) + "0,3,8,\n"));
}

}  // namespace
}  // namespace railsim::report
