#include "railsim/report/traffic_report.h"

#include <fmt/format.h>

#include "railsim/report/csv.h"
#include "railsim/report/json_objects.h"
#include "railsim/report/perf_report.h"
#include "railsim/report/table.h"

namespace railsim::report {
namespace {

double Share(double part, double whole) { return whole > 0 ? part / whole : 0; }

std::string Bytes(double b) { return DecimalBytes(b); }

}  // namespace

std::string TrafficTitle(const perf::PerfContext& c) {
  return fmt::format("{} on {} x {}", ModelLine(c.model), Grouped(c.gpus), c.system.name);
}

std::string TrafficSetting(const perf::PerfContext& c, const study::TrafficResult& r) {
  return fmt::format("placement {}; {} network (radix {}, {} tier{}); HB domains of {}{}", c.placement.Name(),
                     net::DesignName(r.design), r.radix, r.tiers, r.tiers == 1 ? "" : "s", r.hb_domain_size,
                     r.gpus_per_domain < r.hb_domain_size ? fmt::format(", {} GPUs used in each", r.gpus_per_domain)
                                                          : "");
}

std::string TrafficTable(const perf::PerfContext& c, const spec::Strategy& s, const study::TrafficResult& r) {
  const std::string domains = DomainUseLine(r.job_gpus(), r.gpus_per_domain, r.hb_domain_size);
  std::string out = fmt::format("{}, HB domain {}\n{}{}, placement {}\n{} network, radix {}, {} tier{}\n\n",
                                TrafficTitle(c), r.hb_domain_size,
                                domains.empty() ? "" : "GPUs: " + domains + " (pairs name the built GPUs)\n",
                                StrategyLine(s), c.placement.Name(), net::DesignName(r.design), r.radix, r.tiers,
                                r.tiers == 1 ? "" : "s");
  const double silent = 1 - Share(double(r.pairs_communicating), double(r.gpu_pairs()));
  out += fmt::format("GPU pairs: {} ordered, {} communicate, {} silent\n", Grouped(r.gpu_pairs()),
                     Grouped(r.pairs_communicating), Percent(silent, 3));
  out += fmt::format("bytes per iteration: {} ({} flows read off the collectives' plans)\n\n", Bytes(r.bytes_total),
                     Grouped(r.flows));

  TextTable t;
  t.AddColumn("parallelism", TextTable::Align::kLeft);
  for (const char* h : {"bytes", "share", "in HB domain", "same rail", "cross-rail"}) t.AddColumn(h);
  for (int i = 0; i < perf::kParallelisms; ++i) {
    const double b = r.bytes_by_parallelism[size_t(i)];
    if (b <= 0) continue;
    const auto& cls = r.bytes_by_parallelism_and_class[size_t(i)];
    t.AddRow({perf::ParallelismName(perf::Parallelism(i)), Bytes(b), Percent(Share(b, r.bytes_total)),
              Percent(Share(cls[0], b)), Percent(Share(cls[1], b)), Percent(Share(cls[2], b))});
  }
  t.AddRow({"all", Bytes(r.bytes_total), Percent(1), Percent(Share(r.bytes_by_class[0], r.bytes_total)),
            Percent(Share(r.bytes_by_class[1], r.bytes_total)), Percent(Share(r.bytes_by_class[2], r.bytes_total))});
  out += t.Render() + "\n";

  TextTable tiers;
  tiers.AddColumn("tier", TextTable::Align::kLeft);
  tiers.AddColumn("bytes carried (sum over its links)");
  for (int i = 0; i < study::kTrafficTiers; ++i) {
    tiers.AddRow({study::TrafficTierName(study::TrafficTier(i)), Bytes(r.bytes_by_tier[size_t(i)])});
  }
  out += tiers.Render();
  const double between = r.bytes_by_class[int(study::TrafficClass::kCrossRail)];
  out += fmt::format("bytes that need a path between two rails: {}{}\n\n", Bytes(between),
                     between > 0 ? (r.design == net::Design::kRailOnly
                                        ? " (Rail-only forwards them through the HB domain)"
                                        : " (only shared spines carry them directly)")
                                 : r.design == net::Design::kRailOnly
                                       ? " (no byte has to change rail)"
                                       : " (no byte has to change rail; spines still carry same-rail traffic "
                                         "between leaves)");

  TextTable check;
  check.AddColumn("group", TextTable::Align::kLeft);
  for (const char* h : {"size", "groups", "spanning domains", "bytes crossing rails"}) check.AddColumn(h);
  check.AddColumn("placed", TextTable::Align::kLeft);
  for (size_t i = 0; i < r.placement_check.size(); ++i) {
    const perf::GroupCheck& g = r.placement_check[i];
    const double cross = i < r.placement_cross_rail_share.size() ? r.placement_cross_rail_share[i] : -1;
    check.AddRow({perf::GroupKindName(g.kind), Grouped(g.size), Grouped(g.groups), Grouped(g.groups_spanning_domains),
                  cross < 0 ? "(with dp)" : Percent(cross),
                  g.spread == perf::GroupSpread::kHbDomain   ? "inside one HB domain"
                  : g.spread == perf::GroupSpread::kSameRail ? "on rails (rail-aligned)"
                                                             : "crosses rails"});
  }
  out += "placement check\n" + check.Render();
  return out;
}

std::string TrafficJson(const perf::PerfContext& c, const spec::Strategy& s, const study::TrafficResult& r) {
  Json j = ContextObject(c);
  j["strategy"] = StrategyObject(s);
  j["design"] = net::DesignName(r.design);
  j["radix"] = r.radix;
  j["tiers"] = r.tiers;
  j["gpu_pairs"] = r.gpu_pairs();
  j["gpu_pairs_communicating"] = r.pairs_communicating;
  j["silent_pair_fraction"] = 1 - Share(double(r.pairs_communicating), double(r.gpu_pairs()));
  j["flows"] = r.flows;
  j["bytes_total"] = r.bytes_total;
  Json by_class;
  for (int i = 0; i < study::kTrafficClasses; ++i) {
    by_class[study::TrafficClassName(study::TrafficClass(i))] = r.bytes_by_class[size_t(i)];
  }
  j["bytes_by_class"] = by_class;
  Json by_par, by_par_class;
  for (int i = 0; i < perf::kParallelisms; ++i) {
    const char* name = perf::ParallelismName(perf::Parallelism(i));
    by_par[name] = r.bytes_by_parallelism[size_t(i)];
    Json cls;
    for (int k = 0; k < study::kTrafficClasses; ++k) {
      cls[study::TrafficClassName(study::TrafficClass(k))] = r.bytes_by_parallelism_and_class[size_t(i)][size_t(k)];
    }
    by_par_class[name] = cls;
  }
  j["bytes_by_parallelism"] = by_par;
  j["bytes_by_parallelism_and_class"] = by_par_class;
  Json tiers;
  for (int i = 0; i < study::kTrafficTiers; ++i) {
    tiers[study::TrafficTierName(study::TrafficTier(i))] = r.bytes_by_tier[size_t(i)];
  }
  j["bytes_by_tier"] = tiers;
  j["bytes_between_rails"] = r.bytes_by_class[int(study::TrafficClass::kCrossRail)];
  Json checks = Json::array();
  for (size_t i = 0; i < r.placement_check.size(); ++i) {
    const perf::GroupCheck& g = r.placement_check[i];
    Json x;
    x["group"] = perf::GroupKindName(g.kind);
    x["size"] = g.size;
    x["groups"] = g.groups;
    x["spread"] = perf::GroupSpreadName(g.spread);
    x["groups_spanning_domains"] = g.groups_spanning_domains;
    x["groups_crossing_rails"] = g.groups_crossing_rails;
    if (i < r.placement_cross_rail_share.size() && r.placement_cross_rail_share[i] >= 0) {
      x["bytes_crossing_rails_share"] = r.placement_cross_rail_share[i];
    }
    checks.push_back(x);
  }
  j["placement_check"] = checks;
  return j.dump(2) + "\n";
}

void WriteTrafficPairsCsv(const study::TrafficResult& r, const std::function<void(std::string_view)>& sink) {
  // Rows go out in blocks, so a million-GPU export never sits in memory whole.
  constexpr size_t kBlockBytes = 1 << 20;
  fmt::memory_buffer out;
  fmt::format_to(std::back_inserter(out), "src,dst,bytes,class");
  for (int i = 0; i < perf::kParallelisms; ++i) {
    fmt::format_to(std::back_inserter(out), ",{}", perf::ParallelismName(perf::Parallelism(i)));
  }
  out.push_back('\n');
  for (const study::PairTraffic& p : r.pairs) {
    fmt::format_to(std::back_inserter(out), "{},{},{},{}", p.src, p.dst, CsvNumber(p.total()),
                   study::TrafficClassName(p.traffic_class));
    for (double b : p.bytes) fmt::format_to(std::back_inserter(out), ",{}", CsvNumber(b));
    out.push_back('\n');
    if (out.size() >= kBlockBytes) {
      sink(std::string_view(out.data(), out.size()));
      out.clear();
    }
  }
  sink(std::string_view(out.data(), out.size()));
}

std::string TrafficPairsCsv(const study::TrafficResult& r) {
  std::string text;
  WriteTrafficPairsCsv(r, [&text](std::string_view block) { text.append(block); });
  return text;
}

}  // namespace railsim::report
