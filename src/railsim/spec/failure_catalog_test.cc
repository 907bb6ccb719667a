// The shipped failure catalog against the published counts it is derived
// from (tests/data/failure-rates.md), and the parser's checks.
#include "railsim/spec/failure_catalog.h"

#include <gtest/gtest.h>

#include "railsim/core/error.h"
#include "railsim/spec/presets.h"

namespace railsim::spec {
namespace {

TEST(FailureCatalogTest, DefaultRatesFollowThePublishedCounts) {
  FailureCatalog c = LoadFailureCatalog("h100-fleet", "--failure-catalog");
  // Llama 3 405B, Table 5: 54 days on 16,384 H100 in 2,048 servers.
  const double gpu_years = 16384 * 54 / 365.25, node_years = 2048 * 54 / 365.25;
  EXPECT_NEAR(196 / gpu_years, c.of(Component::kGpu).rate_per_year, 0.0005);  // 148+19+17+6+6
  EXPECT_NEAR(72 / gpu_years, c.of(Component::kHbm).rate_per_year, 0.0005);
  EXPECT_NEAR(7 / gpu_years, c.of(Component::kNic).rate_per_year, 0.00005);
  EXPECT_NEAR(46 / node_years, c.of(Component::kHost).rate_per_year, 0.001);  // 32+3+3+2+2+2+2
  // Alibaba HPN: 0.057% of NIC-ToR links a month over two optical ends; 0.051% of ToRs a month.
  EXPECT_NEAR(0.00057 * 12 / 2, c.of(Component::kTransceiver).rate_per_year, 0.00002);
  EXPECT_NEAR(0.00051 * 12, c.of(Component::kLeafSwitch).rate_per_year, 0.00002);
  EXPECT_EQ(8, c.gpus_per_host);
  // Every number says where it comes from, and repair times say they are assumed.
  for (int i = 0; i < kComponents; ++i) {
    const ComponentRates& r = c.components[size_t(i)];
    EXPECT_EQ(1u, r.sources.count("rate_per_year")) << ComponentName(Component(i));
    ASSERT_EQ(1u, r.sources.count("mttr_hours")) << ComponentName(Component(i));
    EXPECT_NE(std::string::npos, r.sources.at("mttr_hours").find("assumption")) << ComponentName(Component(i));
  }
}

TEST(FailureCatalogTest, RoundTripsAndRejectsMissingOrBadFields) {
  FailureCatalog c = LoadFailureCatalog("h100-fleet", "--failure-catalog");
  FailureCatalog again = ParseFailureCatalogJson(FailureCatalogToJson(c));
  for (int i = 0; i < kComponents; ++i) {
    EXPECT_EQ(c.components[size_t(i)].rate_per_year, again.components[size_t(i)].rate_per_year);
  }
  try {
    ParseFailureCatalogJson(R"({"name": "x", "components": {}})");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ("/components/gpu", e.where());
  }
}

}  // namespace
}  // namespace railsim::spec
