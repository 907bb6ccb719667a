// The Python module: `import railsim`. One function per command, taking the
// command's flags as keyword arguments (the flag's name without "--", dashes
// as underscores: micro_batch_size=1) and returning the command's --format
// json document as plain dicts and lists. No logic of its own: the values go,
// as text, through the same study/ parsers the command line uses, so a bad
// value raises ValueError with the command's one-line message naming the flag.
// Other failures raise RuntimeError. Long calls run without the GIL.
#include <pybind11/pybind11.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/core/file.h"
#include "railsim/core/spellcheck.h"
#include "railsim/perf/estimate.h"
#include "railsim/report/collective_report.h"
#include "railsim/report/compare_report.h"
#include "railsim/report/failure_report.h"
#include "railsim/report/html_report.h"
#include "railsim/report/network_report.h"
#include "railsim/report/perf_report.h"
#include "railsim/report/preset_report.h"
#include "railsim/report/traffic_report.h"
#include "railsim/spec/presets.h"
#include "railsim/study/collective_flags.h"
#include "railsim/study/failure_flags.h"
#include "railsim/study/idle_search.h"
#include "railsim/study/job_flags.h"
#include "railsim/study/network_flags.h"
#include "railsim/study/traffic.h"

namespace py = pybind11;

namespace railsim::python {
namespace {

// "micro_batch_size" -> "--micro-batch-size": the flag a keyword stands for.
std::string FlagOf(const std::string& keyword) {
  std::string flag = "--" + keyword;
  for (char& c : flag) {
    if (c == '_') c = '-';
  }
  return flag;
}

// A keyword's value as the text its flag would carry: str as given, int and
// float as Python prints them, a list as comma-separated items, and a dict
// (a model, system, scenario or catalog) as its JSON text.
std::string TextOf(const std::string& keyword, const py::handle& value) {
  if (py::isinstance<py::bool_>(value)) {
    throw Error(FlagOf(keyword), fmt::format("expected a number or text, got {}", std::string(py::repr(value))));
  }
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (py::isinstance<py::int_>(value) || py::isinstance<py::float_>(value)) return std::string(py::str(value));
  if (py::isinstance<py::dict>(value)) {
    return py::module_::import("json").attr("dumps")(value).cast<std::string>();
  }
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    std::string out;
    for (const py::handle& item : value) out += (out.empty() ? "" : ",") + TextOf(keyword, item);
    return out;
  }
  throw Error(FlagOf(keyword), fmt::format("expected a number, text, list or dict, got {}",
                                           std::string(py::str(value.get_type().attr("__name__")))));
}

// The keyword arguments of one call, bound to the fields of a flags struct.
// Every keyword must be bound (else ValueError with "did you mean").
class Keywords {
 public:
  explicit Keywords(const py::kwargs& kwargs) {
    for (const auto& [key, value] : kwargs) given_.emplace(key.cast<std::string>(), py::reinterpret_borrow<py::object>(value));
  }

  /// A flag that takes a value. Returns whether it was given.
  bool Text(const std::string& keyword, std::string* field) {
    known_.push_back(keyword);
    auto it = given_.find(keyword);
    if (it == given_.end()) return false;
    *field = TextOf(keyword, it->second);
    return true;
  }

  /// A flag that takes none (--sequence-parallel): True or False.
  void Flag(const std::string& keyword, bool* field) {
    known_.push_back(keyword);
    auto it = given_.find(keyword);
    if (it == given_.end()) return;
    if (!py::isinstance<py::bool_>(it->second)) {
      throw Error(FlagOf(keyword), fmt::format("expected True or False, got {}", std::string(py::repr(it->second))));
    }
    *field = it->second.cast<bool>();
  }

  /// Throws Error for the first keyword no field took.
  void Finish() const {
    for (const auto& [key, value] : given_) {
      if (std::find(known_.begin(), known_.end(), key) == known_.end()) {
        throw Error(key, fmt::format("unknown keyword argument{}", DidYouMean(key, known_)));
      }
    }
  }

 private:
  std::map<std::string, py::object> given_;
  std::vector<std::string> known_;
};

// JSON text (a report/ document) as Python values.
py::object Loads(const std::string& json) { return py::module_::import("json").attr("loads")(json); }

void BindModel(Keywords& k, study::ModelFlags* f) {
  k.Text("model", &f->model);
  k.Text("seq_length", &f->seq_length);
}

void BindMoe(Keywords& k, study::MoeFlags* f) {
  k.Text("moe_alltoall", &f->alltoall);
  k.Text("moe_imbalance", &f->imbalance);
  k.Text("moe_max_domains", &f->max_domains);
  k.Text("moe_dispatch_precision", &f->dispatch_precision);
  k.Flag("moe_overlap", &f->overlap);
}

void BindStrategy(Keywords& k, study::StrategyFlags* f) {
  for (auto [name, field] : {std::pair{"tp", &f->tp}, {"pp", &f->pp}, {"dp", &f->dp}, {"cp", &f->cp}, {"ep", &f->ep},
                             {"vp", &f->vp}, {"micro_batch_size", &f->micro_batch}, {"recompute", &f->recompute},
                             {"precision", &f->precision},
                             {"microbatch_group_size_per_vp_stage", &f->group_size}}) {
    k.Text(name, field);
  }
  for (auto [name, field] : {std::pair{"sequence_parallel", &f->sequence_parallel},
                             {"distributed_optimizer", &f->distributed_optimizer},
                             {"no_dp_overlap", &f->no_dp_overlap}, {"grad_reduce_in_bf16", &f->grad_reduce_in_bf16},
                             {"tp_comm_overlap", &f->tp_comm_overlap},
                             {"no_overlap_p2p_communication", &f->no_p2p_overlap}}) {
    k.Flag(name, field);
  }
  study::OptimizerFlags& o = f->optimizer;
  k.Text("main_grads_dtype", &o.main_grads_dtype);
  k.Text("main_params_dtype", &o.main_params_dtype);
  k.Text("exp_avg_dtype", &o.exp_avg_dtype);
  k.Text("exp_avg_sq_dtype", &o.exp_avg_sq_dtype);
  o.data_parallel_sharding_given = k.Text("data_parallel_sharding", &o.data_parallel_sharding);
  k.Text("fsdp_shard_group_size", &o.fsdp_shard_group_size);
  BindMoe(k, &f->moe);
}

// The job flags; `design`: traffic calls --network --design.
void BindJob(Keywords& k, study::JobFlags* f, bool design) {
  BindModel(k, &f->model);
  k.Text("system", &f->system);
  k.Text("gpus", &f->gpus);
  k.Text("global_batch_size", &f->global_batch);
  k.Text(design ? "design" : "network", &f->network);
  for (auto [name, field] : {std::pair{"hb_size", &f->hb_size}, {"attention", &f->attention}, {"stack", &f->stack},
                             {"radix", &f->radix}, {"oversubscription", &f->oversubscription},
                             {"placement", &f->placement}}) {
    k.Text(name, field);
  }
}

py::object Estimate(const py::kwargs& kwargs) {
  study::JobFlags job;
  study::StrategyFlags strategy;
  Keywords k(kwargs);
  BindJob(k, &job, false);
  BindStrategy(k, &strategy);
  k.Finish();
  std::string json;
  {
    py::gil_scoped_release release;
    study::Job j = study::ParseJob(job);
    spec::Strategy s = study::ParseStrategy(strategy, j.context, j.global_batch, j.attention);
    json = report::EstimateJson(j.context, s, perf::EstimateIteration(j.context, s));
  }
  return Loads(json);
}

py::object Search(bool document, const py::kwargs& kwargs) {
  study::JobFlags job;
  study::SearchFlags search;
  Keywords k(kwargs);
  BindJob(k, &job, false);
  for (auto [name, field] : {std::pair{"top", &search.top}, {"threads", &search.threads},
                             {"max_strategies", &search.max_strategies}, {"precision", &search.precision},
                             {"allow_idle_gpus", &search.allow_idle}}) {
    k.Text(name, field);
  }
  k.Flag("no_tp_comm_overlap", &search.no_tp_comm_overlap);
  k.Flag("explore_optimizer", &search.explore_optimizer);
  BindMoe(k, &search.moe);
  k.Finish();
  std::string json;
  {
    py::gil_scoped_release release;
    study::Job j = study::ParseJob(job);
    study::SearchRequest request = study::ParseSearch(search, j);
    search::SearchResult r = study::SearchAllowingIdle(j.context, request.options, request.idle_gpus);
    json = report::SearchJson(j.context, r);
  }
  py::object out = Loads(json);
  return document ? out : out["results"];
}

py::object Traffic(const py::kwargs& kwargs) {
  study::JobFlags job;
  job.network = "rail-optimized";
  study::StrategyFlags strategy;
  Keywords k(kwargs);
  BindJob(k, &job, true);
  BindStrategy(k, &strategy);
  k.Finish();
  std::string json;
  {
    py::gil_scoped_release release;
    study::TrafficOptions o;
    study::Job j = study::ParseTrafficJob(job, &o.design);
    spec::Strategy s = study::ParseStrategy(strategy, j.context, j.global_batch, j.attention);
    json = report::TrafficJson(j.context, s, study::AnalyzeTraffic(j.context, s, o));
  }
  return Loads(json);
}

void BindNetwork(Keywords& k, study::NetworkFlags* f) {
  for (auto [name, field] : {std::pair{"gpus", &f->gpus}, {"hb_size", &f->hb_size}, {"radix", &f->radix},
                             {"port_speed", &f->port_speed}, {"oversubscription", &f->oversubscription},
                             {"catalog", &f->catalog}, {"max_gpus", &f->max_gpus}}) {
    k.Text(name, field);
  }
}

py::object Network(const py::kwargs& kwargs) {
  study::NetworkFlags f;
  std::string design;
  Keywords k(kwargs);
  if (!k.Text("design", &design)) k.Text("network", &design);
  BindNetwork(k, &f);
  k.Finish();
  if (design.empty()) throw Error("--design", "needed: rail-only, rail-optimized or fat-tree");
  std::string json;
  {
    py::gil_scoped_release release;
    json = report::NetworkJson(study::RunNetworkFlags(f, design));
  }
  return Loads(json);
}

py::object Cost(const py::kwargs& kwargs) {
  study::NetworkFlags f;
  std::string server;
  Keywords k(kwargs);
  BindNetwork(k, &f);
  k.Text("server", &server);
  k.Finish();
  std::string json;
  {
    py::gil_scoped_release release;
    study::CostStudy cost = study::RunCostFlags(f, server);
    json = report::CostJson(cost.designs, cost.clusters);
  }
  return Loads(json);
}

void BindCluster(Keywords& k, study::ClusterFlags* f) {
  for (auto [name, field] : {std::pair{"system", &f->system}, {"gpus", &f->gpus}, {"hb_size", &f->hb_size},
                             {"network", &f->network}, {"radix", &f->radix},
                             {"oversubscription", &f->oversubscription}, {"routing", &f->routing},
                             {"seed", &f->seed}, {"max_memory", &f->max_memory}, {"threads", &f->threads},
                             {"max_gpus", &f->max_gpus}}) {
    k.Text(name, field);
  }
  k.Flag("simulate", &f->simulate);
}

py::object AllToAll(const py::kwargs& kwargs) {
  study::AllToAllFlags f;
  Keywords k(kwargs);
  BindCluster(k, &f.cluster);
  for (auto [name, field] : {std::pair{"hb_bw", &f.hb_bw}, {"nic_bw", &f.nic_bw},
                             {"bytes_per_pair", &f.bytes_per_pair}, {"schedule", &f.schedule},
                             {"chunks", &f.chunks}, {"baseline", &f.baseline}}) {
    k.Text(name, field);
  }
  k.Finish();
  if (f.bytes_per_pair.empty()) throw Error("--bytes-per-pair", "needed: the bytes each GPU sends to every other");
  std::string json;
  {
    py::gil_scoped_release release;
    study::AllToAllRun run = study::RunAllToAllFlags(f);
    json = report::AllToAllJson(run.request, run.outcome, run.baseline);
  }
  return Loads(json);
}

py::object Collective(const py::kwargs& kwargs) {
  study::CollectiveFlags f;
  Keywords k(kwargs);
  BindCluster(k, &f.cluster);
  BindModel(k, &f.model);
  for (auto [name, field] : {std::pair{"op", &f.op}, {"bytes", &f.bytes}, {"group", &f.group},
                             {"algorithm", &f.algorithm}, {"protocol", &f.protocol}, {"tp", &f.tp},
                             {"pp", &f.pp}, {"dp", &f.dp}, {"cp", &f.cp}, {"ep", &f.ep},
                             {"schedule", &f.schedule}, {"chunks", &f.chunks}, {"micro_batch_size", &f.micro_batch},
                             {"placement", &f.placement}}) {
    k.Text(name, field);
  }
  BindMoe(k, &f.moe);
  k.Finish();
  std::string json;
  {
    py::gil_scoped_release release;
    study::CollectiveRun run = study::RunCollectiveFlags(f);
    json = report::CollectiveJson(run.request, run.outcome);
  }
  return Loads(json);
}

py::object Failures(const py::kwargs& kwargs) {
  study::FailureFlags f;
  Keywords k(kwargs);
  if (!k.Text("network", &f.network)) k.Text("design", &f.network);
  for (auto [name, field] : {std::pair{"system", &f.system}, {"gpus", &f.gpus}, {"hb_size", &f.hb_size},
                             {"radix", &f.radix}, {"oversubscription", &f.oversubscription},
                             {"global_batch_size", &f.global_batch}, {"attention", &f.attention},
                             {"fail_file", &f.fail_file}, {"trials", &f.trials}, {"days", &f.days},
                             {"seed", &f.seed}, {"failure_catalog", &f.failure_catalog},
                             {"checkpoint_interval", &f.checkpoint_interval}, {"restart_time", &f.restart_time},
                             {"target_availability", &f.target_availability}}) {
    k.Text(name, field);
  }
  BindModel(k, &f.model);
  BindStrategy(k, &f.strategy);
  f.fail_given = k.Text("fail", &f.fail);
  f.policy_given = k.Text("spare_policy", &f.spare_policy);
  k.Flag("no_simulate", &f.no_simulate);
  k.Finish();
  std::string json;
  {
    py::gil_scoped_release release;
    study::FailureStudy s = study::RunFailureFlags(f);
    json = report::FailureJson({&s.setup, s.radix, s.explicit_failures, s.monte_carlo, s.options});
  }
  return Loads(json);
}

void BindOverrides(Keywords& k, study::ScenarioOverrides* o) {
  for (auto [name, field] : {std::pair{"gpus", &o->gpus}, {"hb_sizes", &o->hb_sizes}, {"radixes", &o->radixes},
                             {"port_speed", &o->port_speed}, {"model", &o->model}, {"system", &o->system},
                             {"global_batch_sizes", &o->batches}, {"moe_model", &o->moe_model},
                             {"moe_global_batch_size", &o->moe_batch}, {"moe_max_domains", &o->moe_max_domains},
                             {"allow_idle_gpus", &o->allow_idle}, {"seq_length", &o->seq_length}}) {
    k.Text(name, field);
  }
}

py::object Compare(const py::kwargs& kwargs) {
  study::CompareFlags f;
  Keywords k(kwargs);
  for (auto [name, field] : {std::pair{"scenario", &f.scenario}, {"catalog", &f.catalog}, {"radix", &f.radix},
                             {"oversubscription", &f.oversubscription}, {"server", &f.server}}) {
    k.Text(name, field);
  }
  BindOverrides(k, &f.overrides);
  k.Finish();
  std::string json;
  {
    py::gil_scoped_release release;
    json = report::CompareJson(study::RunCompareFlags(f));
  }
  return Loads(json);
}

py::object Report(const py::kwargs& kwargs) {
  study::ReportFlags f;
  Keywords k(kwargs);
  for (auto [name, field] : {std::pair{"out", &f.out}, {"scenario", &f.scenario}, {"catalog", &f.catalog},
                             {"failure_catalog", &f.failure_catalog}}) {
    k.Text(name, field);
  }
  BindOverrides(k, &f.overrides);
  k.Finish();
  std::string json;
  {
    py::gil_scoped_release release;
    InputFileRecord read;  // so that no file of the report replaces an input
    study::ReportInputs inputs = study::ParseReportFlags(f);
    // As the command: the folder is made once the study has run.
    CheckDirectoryCanBeMade(f.out, "--out");
    study::ReportStudy study = study::RunReportStudy(inputs);
    OutputFolder folder(f.out, "--out");
    std::vector<std::string> written;
    for (const report::ReportFile& file : report::BuildReport(study, RAILSIM_VERSION)) {
      folder.Write(file.name, file.contents);
      written.push_back(file.name);
    }
    folder.Commit();
    json = report::ReportFilesJson(f.out, written);
  }
  return Loads(json);
}

py::object Presets() { return Loads(report::PresetsJson(spec::ListPresets()))["presets"]; }

// As `railsim presets show NAME`: a preset's JSON, or a model file or Hugging
// Face config.json as railsim reads it.
py::object PresetShow(const std::string& name) {
  const bool model_file = name.starts_with("hf:") || (!spec::IsPresetName(name) && PathExists(name));
  return Loads(model_file ? spec::ModelToJson(spec::LoadModel(name, "presets show"))
                          : std::string(spec::PresetText(name, "presets show")));
}

}  // namespace
}  // namespace railsim::python

PYBIND11_MODULE(railsim, m) {
  namespace rp = railsim::python;
  m.doc() = "railsim: GPU-cluster network design and LLM training performance (docs/python.md)";
  m.attr("__version__") = RAILSIM_VERSION;
  // railsim::Error is bad input: ValueError with the command's one-line
  // message. Any other C++ exception becomes RuntimeError (pybind11's own
  // translation of std::exception).
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const railsim::Error& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  m.def("presets", &rp::Presets, "Every embedded preset: a list of {kind, name, description}.");
  m.def("preset_show", &rp::PresetShow, py::arg("name"),
        "A preset's JSON as a dict, or a model file / Hugging Face config.json as railsim reads it.");
  m.def("network", &rp::Network, "railsim network: one design built and counted (bill of materials, cost, power).");
  m.def("cost", &rp::Cost, "railsim cost: every design side by side with Rail-only's savings.");
  m.def("estimate", &rp::Estimate, "railsim estimate: iteration time, breakdown, MFU and memory of one strategy.");
  m.def("search", &rp::Search, py::arg("document") = false,
        "railsim search: the best strategies, a list of rows (document=True: the whole JSON document).");
  m.def("traffic", &rp::Traffic, "railsim traffic: bytes per GPU pair by parallelism, class and tier.");
  m.def("collective", &rp::Collective, "railsim collective: one collective on a placed group, analytic and simulated.");
  m.def("alltoall", &rp::AllToAll, "railsim alltoall: uniform all-to-all on Rail-only or rail-optimized.");
  m.def("failures", &rp::Failures, "railsim failures: explicit failures per design and the Monte Carlo.");
  m.def("compare", &rp::Compare, "railsim compare: every design of a scenario side by side and the verdict.");
  m.def("report", &rp::Report, "railsim report: writes the HTML report into out=DIR; returns the files written.");
}
