// CsvTable: RFC 4180 quoting, rows by position or by column name, and the
// number format that reads back exactly.
#include "railsim/report/csv.h"

#include <cmath>
#include <stdexcept>

#include <gtest/gtest.h>

namespace railsim::report {
namespace {

TEST(CsvTest, FieldsWithCommasQuotesOrNewlinesAreQuoted) {
  CsvTable csv({"a", "b"});
  csv.AddRow({"x,y", "say \"hi\""});
  EXPECT_EQ("a,b\n\"x,y\",\"say \"\"hi\"\"\"\n", csv.Render());
}

TEST(CsvTest, NamedCellsLandInTheirColumnsAndTheRestStayEmpty) {
  CsvTable csv({"section", "radix", "cost_usd"});
  CsvTable::NamedRow r = csv.NewRow();
  r["cost_usd"] = "12";
  r["section"] = "network";
  csv.AddRow(std::move(r));
  EXPECT_EQ("section,radix,cost_usd\nnetwork,,12\n", csv.Render());
}

TEST(CsvTest, AMisspeltColumnIsAnError) {
  CsvTable csv({"section", "radix"});
  CsvTable::NamedRow r = csv.NewRow();
  try {
    r["raddix"] = "64";
    ADD_FAILURE() << "expected an error";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string::npos, std::string(e.what()).find("'raddix'"));
  }
}

TEST(CsvTest, NumbersReadBackExactlyAndUndefinedOnesAreEmpty) {
  EXPECT_EQ("0.1", CsvNumber(0.1));
  EXPECT_EQ("1536", CsvNumber(1536));
  EXPECT_EQ("", CsvNumber(std::nan("")));
  EXPECT_EQ("", CsvNumber(INFINITY));
}

}  // namespace
}  // namespace railsim::report
