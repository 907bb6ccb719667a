// libFuzzer target: the iteration-time model on fuzzed models and strategies.
// Input: 12 bytes of strategy choices (with the interleave group size and the
// stack profile), then a model JSON document. Any model
// the parser accepts and any strategy the validator accepts must give finite,
// non-negative times and memory: a NaN, an infinity or a crash is a bug.
#include <cmath>
#include <cstdlib>
#include <string_view>

#include "railsim/perf/estimate.h"
#include "railsim/spec/presets.h"
#include "spec_fuzzer_common.h"

namespace {

bool Finite(double x) { return std::isfinite(x) && x >= 0; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 12) return 0;
  const uint8_t* choice = data;
  return railsim::fuzz::RunParser(data + 12, size - 12, [&](std::string_view text) {
    using namespace railsim;
    spec::ModelSpec model = spec::ParseModelJson(text);
    static const spec::SystemSpec system = spec::LoadSystem("dgx-h100", "--system");
    spec::Strategy s;
    s.tp = 1 << (choice[0] % 5);
    s.pp = 1 + choice[1] % 16;
    s.cp = 1 << (choice[2] % 4);
    s.ep = 1 << (choice[3] % 4);
    s.vp = 1 + choice[4] % 4;
    // Interleave group size: 0 (pp) or 1-3 x pp (ValidateStrategy's range checks).
    s.microbatch_group_size_per_vp_stage = int64_t{s.pp} * ((choice[4] >> 4) % 4);
    s.micro_batch = 1 + choice[5] % 8;
    s.dp = 1 + choice[6] % 16;
    s.global_batch = s.dp * s.micro_batch * (1 + choice[7] % 16);
    s.recompute = static_cast<spec::Recompute>(choice[8] % 3);
    s.sequence_parallel = choice[9] & 1;
    s.dp_sharding = static_cast<spec::DpSharding>(((choice[9] >> 1) & 1) | ((choice[9] >> 3) & 2));
    s.main_grads_dtype = static_cast<spec::MainGradsDtype>((choice[9] >> 5) & 1);
    s.main_params_dtype = static_cast<spec::MainParamsDtype>(choice[10] / 3 % 3);
    s.exp_avg_dtype = static_cast<spec::MomentDtype>((choice[9] >> 6) & 1);
    s.exp_avg_sq_dtype = static_cast<spec::MomentDtype>((choice[9] >> 7) & 1);
    s.overlap_dp_comm = choice[9] & 4;
    const int shard_choice = (choice[11] >> 4) % 4;  // 0 (all dp x cp), 1, 2 or 4 ranks
    s.fsdp_shard_group_size = shard_choice == 0 ? 0 : int64_t{1} << (shard_choice - 1);
    s.attention = (choice[9] & 8) ? spec::Attention::kClassic : spec::Attention::kFlash;
    auto network = static_cast<comm::NetworkKind>(choice[10] % 3);
    int64_t gpus = s.gpus();
    if (!spec::IsValidStrategy(model, gpus, s)) return;
    int64_t hb = 1 << (choice[11] % 6);
    if (gpus % hb != 0) hb = 1;
    perf::PerfContext c = perf::MakePerfContext(model, system, gpus, network, hb);
    perf::ApplyStack(static_cast<spec::Stack>((choice[8] >> 4) % 5), &c);
    perf::Estimate e = perf::EstimateIteration(c, s);
    const perf::TimeBreakdown& t = e.breakdown;
    for (double x : {e.iteration_time_s, e.mfu, e.hfu, e.tflops_per_gpu, t.compute_s, t.recompute_s, t.tp_comm_s,
                     t.cp_comm_s, t.ep_comm_s, t.pp_comm_s, t.dp_comm_s, t.bubble_s, t.optimizer_s,
                     e.memory.total_bytes, e.memory.activations_bytes}) {
      if (!Finite(x)) std::abort();
    }
    if (!(e.iteration_time_s > 0)) std::abort();
  });
}
