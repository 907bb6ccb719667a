#include "testutil/blackwell_rows.h"

#include <cstdlib>
#include <map>

#include "testutil/reference_data.h"
#include "railsim/perf/context.h"
#include "railsim/spec/presets.h"
#include "railsim/spec/stack.h"

namespace railsim::testutil {
namespace {

// Column order of blackwell-megatron-bridge.csv.
enum Column { kVersion, kPhase, kModel, kSystem, kGpus, kPrecision, kGbs, kMbs, kSeq, kFsdp, kTp, kPp, kCp, kVp,
              kEp, kGa, kTokens, kTflops, kSource };

// The leading number of a cell ("37556 (36108)" -> 37556); -1 when none.
double Leading(const std::string& cell) {
  char* end = nullptr;
  const double v = std::strtod(cell.c_str(), &end);
  return end == cell.c_str() ? -1 : v;
}

// The number in brackets ("37556 (36108)" -> 36108); -1 when none.
double Bracketed(const std::string& cell) {
  const size_t open = cell.find('(');
  return open == std::string::npos ? -1 : Leading(cell.substr(open + 1));
}

int IntOr(const std::string& cell, int fallback) {
  const double v = Leading(cell);
  return v <= 0 ? fallback : int(v);
}

}  // namespace

std::vector<BlackwellRow> ReadBlackwellRows() {
  const std::map<std::string, std::string> systems = {{"DGX-GB200", "gb200-nvl72"}, {"DGX-GB300", "gb300-nvl72"},
                                                      {"DGX-B200", "dgx-b200"},     {"DGX-B300", "dgx-b300"},
                                                      {"DGX-H100", "dgx-h100"}};
  const std::map<std::string, std::string> models = {
      {"LLAMA3_70B", "llama3-70b"}, {"LLAMA3_8B", "llama3.1-8b"}, {"Qwen3_30B_a3B", "qwen3-30b-a3b"}};
  const std::map<std::string, spec::Precision> precisions = {
      {"FP8", spec::Precision::kFp8},     {"FP8-CS", spec::Precision::kFp8}, {"MXFP8", spec::Precision::kMxfp8},
      {"FP8-MX", spec::Precision::kMxfp8}, {"NVFP4", spec::Precision::kFp4}};
  std::vector<BlackwellRow> out;
  int line = 1;
  for (const std::vector<std::string>& c : ReadReferenceCsv("blackwell-megatron-bridge.csv")) {
    ++line;
    BlackwellRow base;
    const std::string model = c[kModel].substr(0, c[kModel].find(' '));
    const std::string system = systems.count(c[kSystem]) ? systems.at(c[kSystem]) : "";
    base.version = c[kVersion];
    base.system = system;
    base.line = line;
    base.id = "mb-" + c[kVersion] + "-" + c[kPhase] + "-" + model + "-" + c[kSystem] + "-" + c[kGpus];
    std::vector<std::pair<spec::Precision, double>> variants;
    const std::string p = c[kPrecision];
    if (p.rfind("FP8-CS (FP8-MX)", 0) == 0) {
      variants = {{spec::Precision::kFp8, Leading(c[kTokens])}, {spec::Precision::kMxfp8, Bracketed(c[kTokens])}};
    } else if (precisions.count(p)) {
      variants = {{precisions.at(p), Leading(c[kTokens])}};
    }
    if (!models.count(model)) {
      base.why_not = model.rfind("Nemotron", 0) == 0 ? "hybrid Mamba-Transformer (railsim models no Mamba layer)"
                                                    : "model not in the presets";
    } else if (c[kPhase] == "LoRA") {
      base.why_not = "LoRA: railsim has no frozen-base fine-tuning";
    } else if (c[kModel].find("tokendrop") != std::string::npos) {
      base.why_not = "token-dropping MoE (capacity factor) is not modelled";
    } else if (variants.empty()) {
      base.why_not = "precision not stated";
    } else if ((c[kFsdp] + c[kTp] + c[kPp] + c[kVp]).find('(') != std::string::npos) {
      base.why_not = "two layouts in one row";
    }
    if (!base.why_not.empty()) {
      out.push_back(base);
      continue;
    }
    for (const auto& [precision, tokens] : variants) {
      BlackwellRow r = base;
      r.id += std::string("-") + spec::PrecisionName(precision);
      r.gpus = IntOr(c[kGpus], 0);
      const int gbs = IntOr(c[kGbs], 0), seq = IntOr(c[kSeq], 0);
      r.step_time_s = double(gbs) * seq / (tokens * double(r.gpus));
      r.model = spec::LoadModel(models.at(model), "--model");
      spec::SetSeqLength(&r.model, seq, "seq");
      r.system_spec = spec::LoadSystem(system, "--system");
      // A job of up to 72 GPUs on an NVL72 rack runs inside its NVLink domain.
      if (r.system_spec.hb_domain_size > r.gpus) r.system_spec.hb_domain_size = int(r.gpus);
      spec::Strategy& s = r.strategy;
      spec::ApplyStackDefaults(spec::StackProfileOf(spec::Stack::kNemo), &s);
      s.tp = IntOr(c[kTp], 1);
      s.pp = IntOr(c[kPp], 1);
      s.cp = IntOr(c[kCp], 1);
      s.vp = IntOr(c[kVp], 1);
      s.ep = IntOr(c[kEp], 1);
      s.micro_batch = IntOr(c[kMbs], 1);
      s.global_batch = gbs;
      s.dp = r.gpus / (int64_t{s.tp} * s.pp * s.cp);
      s.precision = precision;
      s.sequence_parallel = s.tp > 1;
      s.tp_comm_overlap = s.tp > 1;
      // Megatron-FSDP shards everything (FSDP = the shard group); else the
      // recipes run the distributed optimizer.
      s.dp_sharding = IntOr(c[kFsdp], 0) > 0 ? spec::DpSharding::kFull : spec::DpSharding::kOptimizer;
      if (!spec::IsValidStrategy(r.model, r.gpus, s)) r.why_not = "layout railsim refuses";
      out.push_back(r);
    }
  }
  return out;
}

bool IsBlackwellFitRow(const BlackwellRow& r) {
  if (!r.why_not.empty() || r.system == "dgx-h100") return false;
  if (r.version == kBlackwellFitContainer) return true;
  return r.version == "25.11" && r.gpus == 8 && r.id.find("LLAMA3_8B") != std::string::npos;
}

double PredictBlackwellRow(const BlackwellRow& r, const spec::SystemSpec& system) {
  spec::SystemSpec s = system;
  s.hb_domain_size = r.system_spec.hb_domain_size;
  perf::PerfContext c = perf::MakePerfContext(r.model, s, r.gpus, comm::NetworkKind::kRailOptimized);
  perf::ApplyStack(spec::Stack::kNemo, &c);
  return perf::EstimateIteration(c, r.strategy).iteration_time_s;
}

}  // namespace railsim::testutil
