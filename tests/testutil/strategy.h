// Test helper: a strategy from its degrees and batch, everything else default.
#pragma once

#include <cstdint>

#include "railsim/spec/strategy.h"

namespace railsim::testutil {

inline spec::Strategy MakeStrategy(int tp, int pp, int64_t dp, int64_t micro_batch, int64_t global_batch) {
  spec::Strategy s;
  s.tp = tp;
  s.pp = pp;
  s.dp = dp;
  s.micro_batch = micro_batch;
  s.global_batch = global_batch;
  return s;
}

}  // namespace railsim::testutil
