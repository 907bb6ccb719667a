// One point of a sweep: the study's library calls on the point's
// parameters, and its results as numbers. Part of sweep/sweep.h.
#include <algorithm>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/comm/algorithms.h"
#include "railsim/comm/nccl_model.h"
#include "railsim/core/units.h"
#include "railsim/net/builder.h"
#include "railsim/perf/context.h"
#include "railsim/perf/estimate.h"
#include "railsim/search/search.h"
#include "railsim/spec/strategy.h"
#include "railsim/sim/simulator.h"
#include "railsim/study/collective_study.h"
#include "railsim/request/collective_flags.h"
#include "railsim/study/compare.h"
#include "railsim/request/flag_table.h"
#include "railsim/study/design_setup.h"
#include "railsim/request/cluster_flags.h"
#include "railsim/request/failure_flags.h"
#include "railsim/study/failures.h"
#include "railsim/request/network_flags.h"
#include "railsim/study/network_study.h"
#include "railsim/study/idle_search.h"
#include "railsim/request/job_flags.h"
#include "railsim/sweep/sweep.h"

namespace railsim::sweep {
namespace {

// A point is mapped onto study/'s library calls; these are the study types
// it fills and reads.
using study::ClusterCost;
using study::ClusterResult;
using study::ClusterRun;
using study::ClusterSetup;
using request::ClusterStudyFlags;
using study::CollectiveOutcome;
using study::CollectiveRequest;
using study::CompareResult;
using study::ComponentEffect;
using study::DesignResult;
using study::DesignSetup;
using study::GroupKind;
using study::MoeCase;
using study::MonteCarloOptions;
using study::MonteCarloResult;
using study::NetworkCase;
using request::ScenarioInputs;
using request::ScenarioOverrides;
using study::SparePolicy;
using study::TrainingCase;

using Point = std::vector<spec::SweepParam>;

// The commands' defaults, so that a key a point leaves out means what the
// flag left out means.
const request::NetworkFlags kNetworkDefaults;
const request::JobFlags kJobDefaults;
const request::StrategyFlags kStrategyDefaults;
const request::MoeFlags kMoeDefaults;
const request::SearchFlags kSearchDefaults;
const request::CollectiveFlags kCollectiveDefaults;
const request::FailureFlags kFailureDefaults;
const request::CompareFlags kCompareDefaults;

// Parameters the config left out take the command's default.
int64_t IntOr(const Point& p, const char* key, int64_t fallback) {
  const spec::SweepValue* v = spec::FindParam(p, key);
  return v ? v->int_value : fallback;
}
double NumberOr(const Point& p, const char* key, double fallback) {
  const spec::SweepValue* v = spec::FindParam(p, key);
  return v ? v->number : fallback;
}
std::string TextOr(const Point& p, const char* key, const std::string& fallback) {
  const spec::SweepValue* v = spec::FindParam(p, key);
  return v ? v->text : fallback;
}
bool Flag(const Point& p, const char* key) {
  const spec::SweepValue* v = spec::FindParam(p, key);
  return v && v->flag;
}

std::vector<double> RunNetwork(const Point& p, const SweepSpecs& specs) {
  net::TopologyParams t;
  t.design = *net::ParseDesign(TextOr(p, "design", ""));
  t.gpus = IntOr(p, "gpus", 0);
  t.hb_domain_size = int(IntOr(p, "hb_size", 0));
  t.radix = int(IntOr(p, "radix", 0));
  t.port_speed_Bps = NumberOr(p, "port_speed", units::ParseBandwidth(kNetworkDefaults.port_speed, "port_speed"));
  t.oversubscription = NumberOr(p, "oversubscription", 1);
  net::ValidateTopologyParams(t, IntOr(p, "max_gpus", net::kMaxBuildGpus));
  const spec::Catalog& catalog = specs.catalogs.at(TextOr(p, "catalog", kNetworkDefaults.catalog));
  const DesignResult result = study::EvaluateDesign(t, study::PortClassFor(catalog, t.port_speed_Bps, "port_speed"));
  const net::BillOfMaterials& b = result.bom;
  std::vector<double> out = {double(b.tiers),        double(b.switches),    double(b.switch_ports),
                             double(b.links),        double(b.transceivers), b.switch_cost_usd,
                             b.transceiver_cost_usd, b.cost_usd,            b.switch_power_w,
                             b.transceiver_power_w,  b.power_w};
  const std::string server = TextOr(p, "server", "");
  if (server.empty()) {
    out.insert(out.end(), 4, std::numeric_limits<double>::quiet_NaN());  // no server: no whole cluster
    return out;
  }
  const std::optional<spec::ServerClass> s = catalog.FindServer(server);
  if (!s) throw Error("server", fmt::format("catalog '{}' has no server {}", catalog.name, Quoted(server)));
  const ClusterCost c = WholeClusterCost(result, *s, study::FastestPortClass(catalog));
  out.insert(out.end(), {c.cost_usd, c.power_w, c.network_cost_share, c.network_power_share});
  return out;
}

// iteration_overhead (or moe_iteration_overhead) when the point gives it.
std::optional<double> IterationOverheadOf(const Point& p, const char* key = "iteration_overhead") {
  const spec::SweepValue* v = spec::FindParam(p, key);
  return v ? std::optional<double>(v->number) : std::nullopt;
}

// The job's context, as estimate and search build it from their flags.
perf::PerfContext MakeContext(const Point& p, const SweepSpecs& specs) {
  const std::string network = TextOr(p, "network", kJobDefaults.network);
  const comm::NetworkKind kind = network == "rail-only" ? comm::NetworkKind::kRailOnly
                                 : network == "ideal"   ? comm::NetworkKind::kIdeal
                                                        : comm::NetworkKind::kRailOptimized;
  perf::NetworkOptions net;
  net.radix = int(IntOr(p, "radix", 0));
  net.oversubscription = NumberOr(p, "oversubscription", 1);
  net.gpus_per_domain = IntOr(p, "gpus_per_domain", 0);
  perf::PerfContext c = perf::MakePerfContext(specs.models.at(TextOr(p, "model", "")),
                                              specs.systems.at(TextOr(p, "system", "")), IntOr(p, "gpus", 0), kind,
                                              IntOr(p, "hb_size", 0), net);
  c.placement = specs.placements.at(TextOr(p, "placement", kJobDefaults.placement));
  perf::ApplyStack(spec::ParseStack(TextOr(p, "stack", kJobDefaults.stack), "stack"), &c, IterationOverheadOf(p));
  return c;
}

spec::Attention AttentionOf(const Point& p) {
  return TextOr(p, "attention", "flash") == "classic" ? spec::Attention::kClassic : spec::Attention::kFlash;
}

void ReadMoe(const Point& p, spec::Strategy* s) {
  const std::string a = TextOr(p, "moe_alltoall", kMoeDefaults.alltoall);
  s->moe_alltoall = a == "forwarded" ? spec::MoeAllToAll::kForwarded
                    : a == "direct"  ? spec::MoeAllToAll::kDirect
                                     : spec::MoeAllToAll::kAuto;
  s->moe_imbalance = NumberOr(p, "moe_imbalance", 1);
  const spec::SweepValue* domains = spec::FindParam(p, "moe_max_domains");
  s->moe_max_domains = domains && domains->kind == spec::SweepValue::Kind::kInt ? int(domains->int_value) : 0;
  s->moe_overlap = Flag(p, "moe_overlap");
}

// expert_tensor_parallel_size as Strategy::etp: a degree, or 0 for "tp" or
// none given (the config's reader allows nothing else).
int ExpertTpOf(const Point& p) {
  const spec::SweepValue* v = spec::FindParam(p, "expert_tensor_parallel_size");
  return v && v->kind == spec::SweepValue::Kind::kInt ? int(v->int_value) : 0;
}

// The strategy at the point, validated as `railsim estimate` validates its flags.
spec::Strategy MakeStrategy(const Point& p, const perf::PerfContext& c) {
  spec::Strategy s;
  // The stack's defaults first; the point's switches turn things on or off
  // over them, as estimate's flags do.
  spec::ApplyStackDefaults(spec::StackProfileOf(c.stack), &s);
  s.tp = int(IntOr(p, "tp", 1));
  s.pp = int(IntOr(p, "pp", 1));
  s.cp = int(IntOr(p, "cp", 1));
  s.ep = int(IntOr(p, "ep", 1));
  s.etp = ExpertTpOf(p);
  s.vp = int(IntOr(p, "vp", 1));
  s.account_for_embedding_in_pipeline_split = Flag(p, "account_for_embedding_in_pipeline_split");
  s.account_for_loss_in_pipeline_split = Flag(p, "account_for_loss_in_pipeline_split");
  s.decoder_first_pipeline_num_layers = int(IntOr(p, "decoder_first_pipeline_num_layers", 0));
  s.decoder_last_pipeline_num_layers = int(IntOr(p, "decoder_last_pipeline_num_layers", 0));
  s.micro_batch = IntOr(p, "micro_batch_size", 1);
  s.global_batch = IntOr(p, "global_batch_size", 1);
  spec::ValidateDegrees(c.model, s);
  const int64_t others = int64_t{s.tp} * s.pp * s.cp;
  if (!spec::FindParam(p, "dp") && (others > c.gpus || c.gpus % others != 0)) {
    throw Error("dp", fmt::format("tp x pp x cp = {} x {} x {} = {} does not divide gpus {}", s.tp, s.pp, s.cp,
                                  others, c.gpus));
  }
  s.dp = IntOr(p, "dp", c.gpus / others);
  const std::string r = TextOr(p, "recompute", kStrategyDefaults.recompute);
  s.recompute = r == "full" ? spec::Recompute::kFull
                : r == "selective" ? spec::Recompute::kSelective : spec::Recompute::kNone;
  s.sequence_parallel = Flag(p, "sequence_parallel");
  if (Flag(p, "distributed_optimizer")) s.dp_sharding = spec::DpSharding::kOptimizer;
  if (Flag(p, "no_dp_overlap")) s.overlap_dp_comm = false;
  if (Flag(p, "grad_reduce_in_bf16")) s.grad_reduce_16bit = true;
  if (Flag(p, "tp_comm_overlap")) s.tp_comm_overlap = true;
  if (Flag(p, "no_overlap_p2p_communication")) s.overlap_p2p_comm = false;
  s.precision = study::ParsePrecision(TextOr(p, "precision", kStrategyDefaults.precision), c, "precision");
  s.low_precision_params = study::LowPrecisionParams(Flag(p, "fp8_params"), Flag(p, "fp4_params"), s.precision, "fp8_params",
                                              "fp4_params");
  s.bf16_layers_at_start = int(IntOr(p, "num_layers_at_start_in_bf16", -1));
  s.bf16_layers_at_end = int(IntOr(p, "num_layers_at_end_in_bf16", -1));
  if (spec::FindParam(p, "attention")) s.attention = AttentionOf(p);
  s.cuda_graph_impl = request::ParseCudaGraphImplFlag("cuda_graph_impl", TextOr(p, "cuda_graph_impl", ""));
  ReadMoe(p, &s);
  spec::ValidateStrategy(c.model, c.gpus, s);
  spec::ValidatePlacement(c.placement, s, "placement");
  return s;
}

std::vector<double> EstimateResults(const perf::Estimate& e) {
  return {e.iteration_time_s, e.mfu, e.hfu, e.tflops_per_gpu, e.tokens_per_s, double(e.microbatches),
          e.memory.total_bytes, e.memory.capacity_bytes, e.memory.fits ? 1.0 : 0.0};
}

std::vector<double> RunEstimate(const Point& p, const SweepSpecs& specs) {
  const perf::PerfContext c = MakeContext(p, specs);
  const spec::Strategy s = MakeStrategy(p, c);
  return EstimateResults(perf::EstimateIteration(c, s));
}

// A search larger than this runs for minutes per point; refused by default.
constexpr int64_t kDefaultMaxStrategies = 200'000'000;

std::vector<double> RunSearch(const Point& p, const SweepSpecs& specs) {
  const perf::PerfContext c = MakeContext(p, specs);
  if (c.placement.map) {
    throw Error("placement", "a placement file fixes one strategy's degrees; search takes a rank order");
  }
  search::SearchOptions o = search::OptionsForStack(c.stack);
  o.global_batch = IntOr(p, "global_batch_size", 1);
  if (spec::FindParam(p, "attention")) o.attention = AttentionOf(p);
  o.cuda_graph_impl = request::ParseCudaGraphImplFlag("cuda_graph_impl", TextOr(p, "cuda_graph_impl", ""));
  if (Flag(p, "no_tp_comm_overlap")) o.tp_comm_overlap = false;
  ReadMoe(p, &o.moe);
  spec::ValidateMoeOptions(c.model, o.moe);
  const std::string etp = TextOr(p, "expert_tensor_parallel_size", kSearchDefaults.etp);
  o.expert_tp = etp == "any" ? search::kExpertTpAny : ExpertTpOf(p);
  if (o.expert_tp > 0 && !c.model.is_moe()) {
    throw Error("expert_tensor_parallel_size", "applies to MoE models only (num_experts is 0)");
  }
  o.precisions = study::ParseSearchPrecisions(TextOr(p, "precision", kSearchDefaults.precision), c, "precision");
  o.top_k = 1;
  o.threads = 1;  // the sweep runs points in parallel
  const int64_t idle = IntOr(p, "allow_idle_gpus", 0);
  if (idle > c.gpus / 2) {
    throw Error("allow_idle_gpus", fmt::format("expected an integer in [0, {}] (half the GPUs), got {}",
                                               c.gpus / 2, idle));
  }
  const int64_t count = study::CountStrategiesAllowingIdle(c, o, idle);
  const int64_t limit = IntOr(p, "max_strategies", kDefaultMaxStrategies);
  if (count > limit) {
    throw Error("max_strategies", fmt::format("the search would enumerate {} strategies, more than the limit {}",
                                              count, limit));
  }
  const search::SearchResult r = study::SearchAllowingIdle(c, o, idle);
  if (r.results.empty()) throw Error("", "no strategy fits in memory");
  const spec::Strategy& s = r.results.front().strategy;
  std::vector<double> out = {double(r.candidates), double(r.evaluated), double(r.pruned),
                             double(s.tp),  double(s.pp), double(s.dp), double(s.cp), double(s.ep),
                             double(s.expert_tp()), double(s.vp),  double(s.micro_batch),
                             double(s.tp * s.pp * s.cp * s.dp)};
  for (double x : EstimateResults(r.results.front().estimate)) out.push_back(x);
  return out;
}

// A uniform all-to-all of every GPU, as `railsim alltoall` runs it.
std::vector<double> RunAllToAll(const Point& p, const SweepSpecs& specs) {
  CollectiveRequest r;
  r.system = specs.systems.at(TextOr(p, "system", ""));
  r.gpus = IntOr(p, "gpus", 0);
  r.hb_domain_size = IntOr(p, "hb_size", 0);
  r.network = TextOr(p, "network", kJobDefaults.network) == "rail-only" ? comm::NetworkKind::kRailOnly
                                                                     : comm::NetworkKind::kRailOptimized;
  r.network_options.radix = int(IntOr(p, "radix", 0));
  r.network_options.oversubscription = NumberOr(p, "oversubscription", 1);
  r.simulate = Flag(p, "simulate");
  if (spec::FindParam(p, "routing")) r.routing = *net::ParseRouting(TextOr(p, "routing", ""));
  r.seed = uint64_t(IntOr(p, "seed", 0));
  r.max_memory_bytes = int64_t(NumberOr(p, "max_memory", 0));  // 0: no limit
  r.max_gpus = IntOr(p, "max_gpus", net::kMaxBuildGpus);
  if (spec::FindParam(p, "hb_bw")) r.hb_bw_Bps = NumberOr(p, "hb_bw", 0);
  if (spec::FindParam(p, "nic_bw")) r.nic_bw_Bps = NumberOr(p, "nic_bw", 0);
  r.plan_options.pipelined = TextOr(p, "schedule", "sequential") == "pipelined";
  r.plan_options.chunks = int(IntOr(p, "chunks", comm::kDefaultForwardChunks));
  r.op = comm::Op::kAllToAll;
  r.group = {r.gpus, 1};
  r.bytes = NumberOr(p, "bytes_per_pair", 0) * double(r.gpus);
  const CollectiveOutcome o = RunCollective(r);
  const double not_simulated = std::numeric_limits<double>::quiet_NaN();
  return {o.analytic_s, o.simulated ? o.sim.time_s : not_simulated,
          o.simulated ? double(o.sim.flows_simulated) : not_simulated};
}

// One collective on a parallel group, as `railsim collective` runs it.
std::vector<double> RunCollectivePoint(const Point& p, const SweepSpecs& specs) {
  CollectiveRequest r;
  r.system = specs.systems.at(TextOr(p, "system", ""));
  r.gpus = IntOr(p, "gpus", 0);
  r.hb_domain_size = IntOr(p, "hb_size", 0);
  const std::string network = TextOr(p, "network", kJobDefaults.network);
  r.network = network == "rail-only" ? comm::NetworkKind::kRailOnly
              : network == "ideal"   ? comm::NetworkKind::kIdeal
                                     : comm::NetworkKind::kRailOptimized;
  r.network_options.radix = int(IntOr(p, "radix", 0));
  r.network_options.oversubscription = NumberOr(p, "oversubscription", 1);
  r.network_options.gpus_per_domain = IntOr(p, "gpus_per_domain", 0);
  r.op = *comm::ParseOp(TextOr(p, "op", ""));
  r.bytes = NumberOr(p, "bytes", 0);
  r.algorithm = *comm::ParseAlgorithm(TextOr(p, "algorithm", kCollectiveDefaults.algorithm));
  r.plan_options.protocol = *comm::ParseProtocol(TextOr(p, "protocol", kCollectiveDefaults.protocol));
  r.plan_options.pipelined = TextOr(p, "schedule", "sequential") == "pipelined";
  r.plan_options.chunks = int(IntOr(p, "chunks", comm::kDefaultForwardChunks));
  r.simulate = Flag(p, "simulate");
  if (spec::FindParam(p, "routing")) r.routing = *net::ParseRouting(TextOr(p, "routing", ""));
  r.seed = uint64_t(IntOr(p, "seed", 0));
  r.max_memory_bytes = int64_t(NumberOr(p, "max_memory", 0));
  r.max_gpus = IntOr(p, "max_gpus", net::kMaxBuildGpus);
  // The groups as `railsim collective` places them.
  spec::Strategy s;
  s.tp = int(IntOr(p, "tp", 1));
  s.pp = int(IntOr(p, "pp", 1));
  s.cp = int(IntOr(p, "cp", 1));
  s.ep = int(IntOr(p, "ep", 1));
  s.etp = ExpertTpOf(p);
  const int64_t others = int64_t{s.tp} * s.pp * s.cp;
  if (!spec::FindParam(p, "dp") && (others > r.gpus || r.gpus % others != 0)) {
    throw Error("dp", fmt::format("tp x pp x cp = {} does not divide gpus {}", others, r.gpus));
  }
  s.dp = IntOr(p, "dp", r.gpus / others);
  if (others * s.dp != r.gpus) {
    throw Error("dp", fmt::format("tp x pp x dp x cp = {} must equal gpus {}", others * s.dp, r.gpus));
  }
  if (std::string problem = spec::ExpertFoldingProblem(s); !problem.empty()) {
    throw Error(s.expert_tp() != s.tp ? "expert_tensor_parallel_size" : "ep", problem);
  }
  const spec::Placement& placement = specs.placements.at(TextOr(p, "placement", kJobDefaults.placement));
  spec::ValidatePlacement(placement, s, "placement");
  const std::vector<std::string>& kinds = study::GroupKindNames();
  const auto kind = GroupKind(std::find(kinds.begin(), kinds.end(), TextOr(p, "group", "")) - kinds.begin());
  r.group = study::PlacedGroupFamily(s, placement, kind, study::JobDomainSize(r));
  const CollectiveOutcome o = RunCollective(r);
  const double not_simulated = std::numeric_limits<double>::quiet_NaN();
  return {o.analytic_s, r.bytes / o.analytic_s, o.simulated ? o.sim.time_s : not_simulated,
          o.simulated ? double(o.sim.flows_simulated) : not_simulated};
}

// A Monte Carlo of one design's failures over a training run, as `railsim
// failures --trials` runs it (without a job: interruptions, spares, goodput).
std::vector<double> RunFailuresPoint(const Point& p, const SweepSpecs& specs) {
  const net::Design design = *net::ParseDesign(TextOr(p, "network", ""));
  ClusterSetup setup;
  setup.system = specs.systems.at(TextOr(p, "system", kFailureDefaults.system));
  setup.gpus = IntOr(p, "gpus", 0);
  setup.hb_domain_size = IntOr(p, "hb_size", 0);
  setup.network.radix = int(IntOr(p, "radix", 0));
  setup.network.oversubscription = NumberOr(p, "oversubscription", 1);
  setup.network.gpus_per_domain = IntOr(p, "gpus_per_domain", 0);
  MonteCarloOptions o;
  o.trials = IntOr(p, "trials", o.trials);
  o.days = NumberOr(p, "days", o.days);
  o.seed = uint64_t(IntOr(p, "seed", int64_t(o.seed)));
  o.checkpoint_interval_s = NumberOr(p, "checkpoint_interval", o.checkpoint_interval_s);
  o.restart_time_s = NumberOr(p, "restart_time", o.restart_time_s);
  o.target_availability = NumberOr(p, "target_availability", o.target_availability);
  o.catalog = specs.failure_catalogs.at(TextOr(p, "failure_catalog", kFailureDefaults.failure_catalog));
  SparePolicy policy = study::DefaultSparePolicy(design);
  if (spec::FindParam(p, "spare_policy")) {
    policy = *study::ParseSparePolicy(TextOr(p, "spare_policy", ""));
    if (policy == SparePolicy::kAny && design == net::Design::kRailOnly) {
      throw Error("spare_policy", "any needs a network that joins the rails; a Rail-only spare must sit on the "
                                  "failed GPU's rail: use same-rail, domain or ocs");
    }
  }
  const DesignSetup d = SetUpDesign(setup, design);
  const std::vector<ComponentEffect> components = study::ComponentEffects(setup, d, o.catalog, o.days);
  study::CheckMonteCarloWork(study::EstimateMonteCarloWork(components, policy, o), o, "trials", "failure_catalog");
  const MonteCarloResult m = RunMonteCarlo(d, components, policy, o);
  return {m.interruptions_mean, m.interruptions_ci95,    double(m.interruptions_p05), double(m.interruptions_p95),
          m.gpu_hours_lost_mean, m.goodput,             m.network_share,             double(m.spares_needed),
          double(m.spare_domains), double(m.ocs_ports), m.ocs_cost_usd};
}

// One comparison of rail-optimized and Rail-only, as `railsim compare` runs
// it, on one cluster, HB domain size, radix and global batch: the scenario's,
// with the point's values in place of its lists.
std::vector<double> RunComparePoint(const Point& p) {
  ScenarioOverrides o;
  auto text = [&p](const char* key) {
    const spec::SweepValue* v = spec::FindParam(p, key);
    if (!v) return std::string();
    return v->kind == spec::SweepValue::Kind::kInt ? std::to_string(v->int_value) : v->text;
  };
  o.gpus = text("gpus");
  o.hb_sizes = text("hb_size");
  o.radixes = text("radix");
  o.port_speed = text("port_speed");
  o.model = text("model");
  o.system = text("system");
  o.batches = text("global_batch_size");
  o.moe_model = text("moe_model");
  o.moe_batch = text("moe_global_batch_size");
  o.allow_idle = text("allow_idle_gpus");
  ScenarioInputs in = LoadScenarioInputs(TextOr(p, "scenario", kCompareDefaults.scenario), TextOr(p, "catalog", kCompareDefaults.catalog), o,
                                         TextOr(p, "server", ""));
  spec::Scenario& sc = in.scenario;
  sc.oversubscription = NumberOr(p, "oversubscription", sc.oversubscription);
  sc.gpus_per_domain = IntOr(p, "gpus_per_domain", sc.gpus_per_domain);
  sc.stack = TextOr(p, "stack", sc.stack);
  sc.moe_stack = TextOr(p, "moe_stack", sc.moe_stack);
  if (auto overhead = IterationOverheadOf(p)) sc.iteration_overhead_s = overhead;
  if (auto overhead = IterationOverheadOf(p, "moe_iteration_overhead")) sc.moe_iteration_overhead_s = overhead;
  sc.precision = TextOr(p, "precision", sc.precision);
  sc.moe_precision = TextOr(p, "moe_precision", sc.moe_precision);
  auto one = [&sc](const char* key, size_t n, const std::string& what) {
    if (n > 1) {
      throw Error(key, fmt::format("a compare point compares one {}; scenario '{}' has {}: set {}", what, sc.name, n,
                                   key));
    }
  };
  one("hb_size", sc.hb_domain_sizes.size(), "HB domain size");
  one("radix", sc.radixes.size(), "radix");
  one("global_batch_size", sc.global_batch_sizes.size(), "global batch size");
  study::ValidateScenarioNetworks(sc);
  perf::NetworkOptions timed;
  timed.oversubscription = sc.oversubscription;
  CompareResult r = RunCompare(sc, in.port_class, in.model ? &*in.model : nullptr, in.Systems(),
                               1, timed, in.moe_model ? &*in.moe_model : nullptr, {}, in.Pricing());
  const double none = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> out;
  const NetworkCase& n = r.network.front();
  const DesignResult* designs[2] = {};
  for (const DesignResult& d : n.designs) {
    if (d.params.design == net::Design::kRailOptimized) designs[0] = &d;
    if (d.params.design == net::Design::kRailOnly) designs[1] = &d;
  }
  for (const DesignResult* d : designs) out.insert(out.end(), {double(d->bom.switches), d->bom.cost_usd, d->bom.power_w});
  out.insert(out.end(), {designs[1]->cost_saving, designs[1]->power_saving});
  for (const DesignResult* d : designs) {
    if (d->cluster) out.insert(out.end(), {d->cluster->cost_usd, d->cluster->network_cost_share});
    else out.insert(out.end(), {none, none});
  }
  // The training side: each network's best time and MFU, Rail-only's time
  // against rail-optimized, and the cost per delivered PFLOP/s-day.
  if (r.training.empty()) {
    out.insert(out.end(), 8, none);
  } else {
    const TrainingCase& t = r.training.front();
    auto time = [&](const study::TrainingOnNetwork& on) { return on.fits ? on.time_s() : none; };
    auto mfu = [&](const study::TrainingOnNetwork& on) { return on.fits ? on.best.estimate.mfu : none; };
    auto usd = [&](const study::TrainingOnNetwork& on) {
      return on.usd_per_pflops_day > 0 ? on.usd_per_pflops_day : none;
    };
    out.insert(out.end(), {time(t.rail_optimized), time(t.rail_only), time(t.ideal), mfu(t.rail_optimized),
                           mfu(t.rail_only),
                           time(t.rail_only) / time(t.rail_optimized) - 1,  // NaN unless both fit
                           usd(t.rail_optimized), usd(t.rail_only)});
  }
  // The MoE side: each network's best time over both dispatch algorithms.
  if (r.moe.empty()) {
    out.insert(out.end(), 2, none);
  } else {
    const MoeCase& m = r.moe.front();
    for (const study::MoeOnNetwork* on : {&m.rail_optimized, &m.rail_only}) {
      out.push_back(on->found() ? on->found()->estimate.iteration_time_s : none);
    }
  }
  return out;
}

// One design under one policy, as `railsim cluster --network D --policy P`
// runs it (one thread: the sweep runs points side by side).
std::vector<double> RunClusterPoint(const Point& p) {
  ClusterStudyFlags f;
  // One run per point: rail-optimized (unless a switch map) and first-fit
  // unless the point names others.
  f.policy = std::string("first-fit");
  if (!spec::FindParam(p, "topology")) f.network = std::string("rail-optimized");
  auto text = [&p](const char* key, std::string* out) {
    const spec::SweepValue* v = spec::FindParam(p, key);
    if (!v) return;
    if (v->kind == spec::SweepValue::Kind::kInt) {
      *out = std::to_string(v->int_value);
    } else if (v->kind == spec::SweepValue::Kind::kNumber) {
      *out = fmt::format("{}", v->number);
    } else {
      *out = v->text;
    }
  };
  for (auto [key, field] : {std::pair{"trace", &f.trace}, {"topology", &f.topology}, {"system", &f.system},
                            {"gpus", &f.gpus}, {"hb_size", &f.hb_size}, {"radix", &f.radix},
                            {"port_speed", &f.port_speed}, {"oversubscription", &f.oversubscription},
                            {"network", &f.network}, {"policy", &f.policy}, {"segment", &f.segment},
                            {"max_wait", &f.max_wait}, {"samples", &f.samples}, {"jobs", &f.jobs},
                            {"arrivals_per_hour", &f.arrivals_per_hour}, {"size_mix", &f.size_mix},
                            {"duration_median", &f.duration_median}, {"duration_p90", &f.duration_p90},
                            {"seed", &f.seed}}) {
    text(key, field);
  }
  f.no_backfill = Flag(p, "no_backfill");
  f.no_stretch = Flag(p, "no_stretch");
  f.threads = std::to_string(1);  // (a literal here trips GCC 12's -Wrestrict)
  const ClusterResult r = RunClusterFlags(f);
  const ClusterRun& run = r.runs.front();
  return {run.occupancy_mean,          run.queue_wait_s.mean,       run.queue_wait_s.p50,
          run.queue_wait_s.p99,        run.jobs_contended_share,    run.gpu_time_contended_share,
          run.jct_slowdown.mean,       run.jct_slowdown.p99,        run.placement_slowdown_mean,
          run.jobs_across[0],          run.jobs_across[1],          run.jobs_across[2],
          double(run.jobs_placed),     double(run.jobs_unplaceable)};
}

const std::vector<std::string> kEstimateKeys = {
    "iteration_time_s", "mfu", "hfu", "tflops_per_gpu", "tokens_per_s", "microbatches",
    "memory_bytes", "memory_capacity_bytes", "fits_in_memory"};

}  // namespace

std::vector<std::string> SweepResultKeys(spec::SweepStudy study) {
  switch (study) {
    case spec::SweepStudy::kNetwork:
      return {"tiers", "switches", "switch_ports", "links", "transceivers", "switch_cost_usd",
              "transceiver_cost_usd", "cost_usd", "switch_power_w", "transceiver_power_w", "power_w",
              "cluster_cost_usd", "cluster_power_w", "network_cost_share", "network_power_share"};
    case spec::SweepStudy::kEstimate:
      return kEstimateKeys;
    case spec::SweepStudy::kSearch: {
      std::vector<std::string> keys = {"strategies", "evaluated", "pruned", "best_tp", "best_pp", "best_dp",
                                       "best_cp", "best_ep", "best_expert_tensor_parallel_size", "best_vp",
                                       "best_micro_batch_size", "best_gpus_used"};
      keys.insert(keys.end(), kEstimateKeys.begin(), kEstimateKeys.end());
      return keys;
    }
    case spec::SweepStudy::kAllToAll:
      return {"analytic_s", "simulated_s", "flows_simulated"};
    case spec::SweepStudy::kCollective:
      return {"analytic_s", "algbw_Bps", "simulated_s", "flows_simulated"};
    case spec::SweepStudy::kCompare:
      return {"rail_optimized_switches", "rail_optimized_cost_usd", "rail_optimized_power_w", "rail_only_switches",
              "rail_only_cost_usd", "rail_only_power_w", "cost_saving", "power_saving",
              "rail_optimized_cluster_cost_usd", "rail_optimized_network_cost_share", "rail_only_cluster_cost_usd",
              "rail_only_network_cost_share", "rail_optimized_iteration_time_s", "rail_only_iteration_time_s",
              "ideal_iteration_time_s", "rail_optimized_mfu", "rail_only_mfu", "rail_only_slowdown",
              "rail_optimized_usd_per_pflops_day", "rail_only_usd_per_pflops_day",
              "moe_rail_optimized_iteration_time_s", "moe_rail_only_iteration_time_s"};
    case spec::SweepStudy::kCluster:
      return {"occupancy_mean", "queue_wait_mean_s", "queue_wait_p50_s", "queue_wait_p99_s", "jobs_contended_share",
              "gpu_time_contended_share", "jct_slowdown_mean", "jct_slowdown_p99", "placement_slowdown_mean",
              "jobs_across_hb_domains", "jobs_across_rails", "jobs_across_leaf_switches", "jobs_placed",
              "jobs_unplaceable"};
    case spec::SweepStudy::kFailures:
      return {"interruptions_mean", "interruptions_ci95", "interruptions_p05", "interruptions_p95",
              "gpu_hours_lost_mean", "goodput", "network_share", "spares_needed", "spare_domains", "ocs_ports",
              "ocs_cost_usd"};
  }
  return {};
}

SweepRow RunSweepPoint(const spec::SweepConfig& config, const SweepSpecs& specs, int64_t index) {
  SweepRow row;
  row.index = index;
  row.point = config.Point(index);
  // The point's combination is checked by the library's validators, which
  // throw Error at this edge; the message becomes the row.
  try {
    switch (config.study) {
      case spec::SweepStudy::kNetwork:
        row.results = RunNetwork(row.point, specs);
        break;
      case spec::SweepStudy::kEstimate:
        row.results = RunEstimate(row.point, specs);
        break;
      case spec::SweepStudy::kSearch:
        row.results = RunSearch(row.point, specs);
        break;
      case spec::SweepStudy::kAllToAll:
        row.results = RunAllToAll(row.point, specs);
        break;
      case spec::SweepStudy::kCollective:
        row.results = RunCollectivePoint(row.point, specs);
        break;
      case spec::SweepStudy::kFailures:
        row.results = RunFailuresPoint(row.point, specs);
        break;
      case spec::SweepStudy::kCompare:
        row.results = RunComparePoint(row.point);
        break;
      case spec::SweepStudy::kCluster:
        row.results = RunClusterPoint(row.point);
        break;
    }
  } catch (const Error& e) {
    row.results.clear();
    row.error = request::InKeywords(e);  // named as the sweep's keys are
  }
  return row;
}

}  // namespace railsim::sweep
