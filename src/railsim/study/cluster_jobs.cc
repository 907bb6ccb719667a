// The communication share of each job class, timed by the performance model
// (study/cluster.h: EstimateCommShares).
#include <numeric>

#include "railsim/core/error.h"
#include "railsim/perf/context.h"
#include "railsim/perf/estimate.h"
#include "railsim/spec/presets.h"
#include "railsim/spec/strategy.h"
#include "railsim/study/cluster.h"

namespace railsim::study {

std::array<double, kJobClasses> EstimateCommShares(const spec::SystemSpec& system, std::vector<std::string>* notes) {
  std::array<double, kJobClasses> shares = kDefaultCommShares;
  for (int i = 0; i < kJobClasses; ++i) {
    const JobClass& c = JobClassAt(i);
    try {
      const spec::ModelSpec model = spec::LoadModel(c.model, "cluster");
      // The job's HB domains: the system's, or the largest part of one that
      // divides the job (a 64-GPU job on NVL72 racks holds 8 of a rack).
      const int64_t hb = std::gcd(int64_t{system.hb_domain_size}, c.gpus);
      const perf::PerfContext ctx = perf::MakePerfContext(model, system, c.gpus, comm::NetworkKind::kRailOptimized, hb);
      spec::Strategy s;
      s.tp = static_cast<int>(std::min<int64_t>(c.tp, hb));
      s.pp = c.pp;
      s.dp = c.gpus / (int64_t{s.tp} * s.pp);
      s.micro_batch = 1;
      s.global_batch = c.global_batch;
      s.sequence_parallel = s.tp > 1;
      spec::ValidateStrategy(model, c.gpus, s);
      const perf::Estimate e = perf::EstimateIteration(ctx, s);
      const perf::TimeBreakdown& b = e.breakdown;
      const double comm = b.tp_comm_s + b.cp_comm_s + b.ep_comm_s + b.pp_comm_s + b.dp_comm_s;
      if (e.iteration_time_s > 0) shares[size_t(i)] = comm / e.iteration_time_s;
    } catch (const Error& e) {
      if (notes) notes->push_back(std::string("job class ") + c.model + " could not be timed (" + e.what() +
                                  "); its communication share is the default");
    }
  }
  return shares;
}

}  // namespace railsim::study
