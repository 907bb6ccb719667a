// Network studies' arithmetic beyond the builder: the whole cluster's cost
// around a network and the HB fabric an HB domain larger than a server needs,
// each checked by hand.
#include "railsim/study/network_study.h"

#include <gtest/gtest.h>

namespace railsim::study {
namespace {

spec::PortClass Port(double gbps, double port_usd, double transceiver_usd, double port_w, double transceiver_w) {
  spec::PortClass p;
  p.port_speed_Bps = gbps * 1e9 / 8;
  p.switch_port_cost_usd = port_usd;
  p.transceiver_cost_usd = transceiver_usd;
  p.switch_port_power_w = port_w;
  p.transceiver_power_w = transceiver_w;
  return p;
}

TEST(HbFabricTest, ServerSizedDomainsCostNothingMore) {
  // DGX H100: the 8-GPU domain's NVSwitches are on the baseboard.
  HbFabricCost c = EstimateHbFabricCost(32768, 8, 8, 450e9, Port(800, 1000, 500, 20, 15));
  EXPECT_EQ(0, c.links_per_gpu);
  EXPECT_EQ(0, c.cost_usd);
  EXPECT_EQ(0, c.power_w);
}

TEST(HbFabricTest, GpuLinksTimesThreePortsAndFourTransceivers) {
  // H100's NVLink: 450 GB/s per direction over 800 Gb/s (100 GB/s) ports is
  // 4.5, so 5 links per GPU. Each link: 3 switch ports ($1,000, 20 W) and
  // 4 transceivers ($500, 15 W) = $5,000 and 120 W. 256 GPUs x 5 links:
  // 1,280 links, $6.4 M and 153.6 kW.
  HbFabricCost c = EstimateHbFabricCost(256, 256, 8, 450e9, Port(800, 1000, 500, 20, 15));
  EXPECT_EQ(5, c.links_per_gpu);
  EXPECT_DOUBLE_EQ(6.4e6, c.cost_usd);
  EXPECT_DOUBLE_EQ(153600, c.power_w);
  // A whole number of links stays whole: 400 GB/s is exactly 4.
  EXPECT_EQ(4, EstimateHbFabricCost(256, 256, 8, 400e9, Port(800, 1000, 500, 20, 15)).links_per_gpu);
}

TEST(HbFabricTest, FastestPortClassIsTheTopLineRate) {
  spec::Catalog catalog;
  catalog.port_classes = {Port(400, 1, 1, 1, 1), Port(1600, 2, 2, 2, 2), Port(800, 3, 3, 3, 3)};
  EXPECT_DOUBLE_EQ(200e9, FastestPortClass(catalog).port_speed_Bps);
}

TEST(ClusterCostTest, ServersPlusNetwork) {
  // 100 GPUs on 8-GPU servers: 13 servers at $400,000 + $10,000 of HB
  // switches and 10 kW + 0.2 kW, with a $1 M, 50 kW network: $6.33 M and
  // 182.6 kW, the network 15.8% of the cost.
  DesignResult r;
  r.params.gpus = 100;
  r.bom.cost_usd = 1e6;
  r.bom.power_w = 50e3;
  spec::ServerClass server;
  server.name = "s";
  server.gpus = 8;
  server.cost_usd = 400e3;
  server.hb_switch_cost_usd = 10e3;
  server.power_w = 10e3;
  server.hb_switch_power_w = 200;
  r.params.hb_domain_size = 4;
  ClusterCost c = WholeClusterCost(r, server, Port(800, 1000, 500, 20, 15));
  EXPECT_EQ(13, c.servers);
  EXPECT_EQ(0, c.hb_fabric_cost_usd);
  EXPECT_DOUBLE_EQ(6.33e6, c.cost_usd);
  EXPECT_DOUBLE_EQ(182.6e3, c.power_w);
  EXPECT_NEAR(1e6 / 6.33e6, c.network_cost_share, 1e-12);
}

TEST(ClusterCostTest, HbDomainsLargerThanAServerAddTheirFabric) {
  // The paper's K = 256 from 8-GPU servers: 256 GPUs, each joined by
  // ceil(450 / 100) = 5 links of 800 Gb/s at $5,000 and 120 W a link
  // (HbFabricTest): $6.4 M and 153.6 kW on top of 32 servers at $400,000
  // and 10 kW and a $1 M, 50 kW network: $20.2 M and 523.6 kW.
  DesignResult r;
  r.params.gpus = 256;
  r.params.hb_domain_size = 256;
  r.params.hb_bw_Bps = 450e9;
  r.bom.cost_usd = 1e6;
  r.bom.power_w = 50e3;
  spec::ServerClass server;
  server.name = "s";
  server.gpus = 8;
  server.cost_usd = 400e3;
  server.power_w = 10e3;
  ClusterCost c = WholeClusterCost(r, server, Port(800, 1000, 500, 20, 15));
  EXPECT_DOUBLE_EQ(6.4e6, c.hb_fabric_cost_usd);
  EXPECT_DOUBLE_EQ(153.6e3, c.hb_fabric_power_w);
  EXPECT_DOUBLE_EQ(20.2e6, c.cost_usd);
  EXPECT_DOUBLE_EQ(523.6e3, c.power_w);
  EXPECT_NEAR(1e6 / 20.2e6, c.network_cost_share, 1e-12);
}

// $100 M and 10 MW over 4 years at $0.08/kWh and PUE 1.25: 1e8 / 1,461 days
// = $68,446.27 a day of capital, 10,000 kW x 24 h x 1.25 x $0.08 = $24,000 a
// day of energy; a job delivering 100 PFLOP/s pays $924.46 per PFLOP/s-day.
TEST(ClusterCostTest, CostPerPflopsDayByHand) {
  ClusterCost c;
  c.cost_usd = 1e8;
  c.power_w = 10e6;
  const spec::OperatingCost o;  // the defaults, which the default catalog repeats
  EXPECT_EQ(4, o.lifetime_years);
  const double per_day = ClusterCostPerDay(c, o);
  EXPECT_NEAR(68446.27 + 24000, per_day, 0.01);
  EXPECT_NEAR(924.4627, CostPerPflopsDay(per_day, 100e15), 1e-4);
  EXPECT_EQ(0, CostPerPflopsDay(per_day, 0));
}

}  // namespace
}  // namespace railsim::study

#include "railsim/spec/presets.h"
#include "railsim/request/network_flags.h"

namespace railsim::study {
namespace {

// --system's HB domain size and NIC speed replace the scenario's: a note
// for each that differs (the paper's headline has HB domains of 8 and 256
// at 400 Gb/s; a DGX A100 has 8 GPUs and 200 Gb/s NICs), none where they
// agree or the flag is given.
TEST(ScenarioOverridesTest, WhatTheSystemReplacesIsNoted) {
  const spec::SystemSpec a100 = spec::LoadSystem("dgx-a100", "--system");
  spec::Scenario s = spec::LoadScenario("paper-headline", "--scenario");
  request::ScenarioOverrides o;
  o.system = "dgx-a100";
  std::vector<std::string> notes;
  request::ApplyScenarioOverrides(o, &a100, &s, &notes);
  EXPECT_EQ(std::vector<int>{8}, s.hb_domain_sizes);
  EXPECT_DOUBLE_EQ(25e9, s.port_speed_Bps);
  EXPECT_EQ((std::vector<std::string>{
                "--system dgx-a100: HB domains of 8 (the system's) in place of the scenario's 8, 256; give "
                "--hb-sizes to choose them",
                "--system dgx-a100: links at 200Gbps (the system's NIC speed) in place of the scenario's 400Gbps; "
                "give --port-speed to choose it"}),
            notes);
  notes.clear();
  request::ApplyScenarioOverrides(o, &a100, &s, &notes);  // now the scenario agrees
  EXPECT_TRUE(notes.empty());
  s = spec::LoadScenario("paper-headline", "--scenario");
  o.hb_sizes = "256";
  o.port_speed = "400Gbps";
  request::ApplyScenarioOverrides(o, &a100, &s, &notes);
  EXPECT_TRUE(notes.empty());
}

// "none" drops a side of the comparison, in an override as in a scenario
// file.
TEST(ScenarioOverridesTest, NoneDropsAModel) {
  spec::Scenario s = spec::LoadScenario("paper-headline", "--scenario");
  request::ScenarioOverrides o;
  o.moe_model = "none";
  std::vector<std::string> notes;
  request::ApplyScenarioOverrides(o, nullptr, &s, &notes);
  EXPECT_EQ("", s.moe_model);
  EXPECT_EQ("megatron-1t", s.model);
  o.model = "none";
  request::ApplyScenarioOverrides(o, nullptr, &s, &notes);
  EXPECT_EQ("", s.model);
  const spec::Scenario file = spec::ParseScenarioJson(R"({"name": "n", "gpus": 64, "hb_domain_sizes": [8],
      "radixes": [64], "port_speed": "400Gbps", "model": "none", "moe_model": "none"})");
  EXPECT_EQ("", file.model);
  EXPECT_EQ("", file.moe_model);
}

}  // namespace
}  // namespace railsim::study
