// libFuzzer target: the Megatron-LM / NeMo launcher-argument reader (the first
// byte picks which). Arguments it accepts print back to text that reads back
// to the same strategy.
#include "railsim/spec/launcher_args.h"
#include "railsim/spec/presets.h"
#include "spec_fuzzer_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using railsim::spec::Launcher;
  static const railsim::spec::ModelSpec model = railsim::spec::LoadModel("mixtral-8x22b", "--model");
  if (size < 1) return 0;
  const Launcher launcher = data[0] % 2 ? Launcher::kNemo : Launcher::kMegatron;
  return railsim::fuzz::RunParser(data + 1, size - 1, [&](std::string_view text) {
    railsim::spec::Strategy s = railsim::spec::ParseLauncherArgs(launcher, text, model, 1024);
    const std::string args = railsim::spec::LauncherArgs(launcher, s, model);
    railsim::spec::Strategy again = railsim::spec::ParseLauncherArgs(launcher, args, model, 1024);
    if (railsim::spec::LauncherArgs(launcher, again, model) != args) __builtin_trap();
  });
}
