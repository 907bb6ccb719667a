// The Python module: `import railsim`. One function per command, taking the
// command's flags as keyword arguments (the flag's name without "--", dashes
// as underscores: micro_batch_size=1) and returning the command's --format
// json document as plain dicts and lists. No logic of its own: the values go,
// as text, through the same request/ parsers the command line uses, so a bad
// value raises ValueError with the command's one-line message, naming the keyword.
// Other failures raise RuntimeError. Long calls run without the GIL and stop
// within a second at Ctrl-C (KeyboardInterrupt).
#include <pybind11/pybind11.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/core/file.h"
#include "railsim/core/interrupt.h"
#include "railsim/core/spellcheck.h"
#include "railsim/perf/estimate.h"
#include "railsim/report/cluster_report.h"
#include "railsim/report/collective_report.h"
#include "railsim/report/compare_report.h"
#include "railsim/report/failure_report.h"
#include "railsim/report/html_report.h"
#include "railsim/report/network_report.h"
#include "railsim/report/perf_report.h"
#include "railsim/report/preset_report.h"
#include "railsim/report/traffic_report.h"
#include "railsim/spec/presets.h"
#include "railsim/request/cluster_flags.h"
#include "railsim/request/collective_flags.h"
#include "railsim/request/failure_flags.h"
#include "railsim/study/idle_search.h"
#include "railsim/request/flag_table.h"
#include "railsim/request/job_flags.h"
#include "railsim/request/network_flags.h"
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

// The name of a value's Python type, for messages ("list", "Decimal").
std::string TypeName(const py::handle& value) {
  return std::string(py::str(value.get_type().attr("__name__")));
}

// A value in a message: a number or text as Python writes it (cut short),
// anything else by its type.
std::string Shown(const py::handle& value) {
  if (py::isinstance<py::int_>(value) || py::isinstance<py::float_>(value) || py::isinstance<py::str>(value)) {
    return Quoted(std::string(py::repr(value)));
  }
  return TypeName(value);
}

// One value as the text its flag would carry: str as given (not empty, as
// the command line refuses an empty value), int and float as Python prints
// them (or any integer type with __index__, such as numpy.int64), and a dict
// (a model, system, scenario or catalog) as its JSON text. Lists are not one
// value: ListText takes them for the flags that take lists.
std::string ScalarText(const std::string& keyword, const py::handle& value) {
  if (py::isinstance<py::bool_>(value)) {
    throw Error(FlagOf(keyword), fmt::format("expected a number or text, got {}", std::string(py::repr(value))));
  }
  if (py::isinstance<py::str>(value)) {
    std::string text = value.cast<std::string>();
    if (text.empty()) throw Error(FlagOf(keyword), "expected a value, got an empty one");
    return text;
  }
  if (py::isinstance<py::int_>(value) || py::isinstance<py::float_>(value)) return std::string(py::str(value));
  if (PyIndex_Check(value.ptr())) return std::string(py::str(py::int_(py::reinterpret_borrow<py::object>(value))));
  if (py::isinstance<py::dict>(value)) {
    try {
      return py::module_::import("json").attr("dumps")(value, py::arg("allow_nan") = false).cast<std::string>();
    } catch (py::error_already_set& e) {
      // A value JSON has no form for (a Decimal, a set), a dict or list that
      // holds itself, NaN: one line naming the keyword, not json's traceback.
      const std::string why = py::str(e.value());
      throw Error(FlagOf(keyword), fmt::format("expected a dict of JSON values (str, int, float, bool, None, list, "
                                               "dict), got one json cannot write: {}", Printable(why)));
    }
  }
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    throw Error(FlagOf(keyword), fmt::format("expected one value (a number or text), got a {} of {}",
                                             TypeName(value), py::len(value)));
  }
  throw Error(FlagOf(keyword), fmt::format("expected a number, text, list or dict, got {}", TypeName(value)));
}

// The value of a flag that takes a comma-separated list (--hb-sizes 8,256):
// a list or tuple of numbers or text, or one value.
std::string ListText(const std::string& keyword, const py::handle& value) {
  if (!py::isinstance<py::list>(value) && !py::isinstance<py::tuple>(value)) return ScalarText(keyword, value);
  if (py::len(value) == 0) throw Error(FlagOf(keyword), fmt::format("expected one or more values, got an empty {}",
                                                                    TypeName(value)));
  std::string out;
  for (const py::handle& item : value) {
    if (py::isinstance<py::list>(item) || py::isinstance<py::tuple>(item) || py::isinstance<py::dict>(item)) {
      throw Error(FlagOf(keyword), fmt::format("expected a list of numbers or text, got a {} in it",
                                               TypeName(item)));
    }
    out += (out.empty() ? "" : ",") + ScalarText(keyword, item);
  }
  return out;
}

// The keyword arguments of one call, bound to the fields of a flags struct.
// Every keyword must be bound (else ValueError with "did you mean").
class Keywords {
 public:
  explicit Keywords(const py::kwargs& kwargs) {
    for (const auto& [key, value] : kwargs) given_.emplace(key.cast<std::string>(), py::reinterpret_borrow<py::object>(value));
  }

  /// A flag that takes one value. Returns whether it was given.
  bool Text(const std::string& keyword, std::string* field) {
    known_.push_back(keyword);
    auto it = given_.find(keyword);
    if (it == given_.end()) return false;
    *field = ScalarText(keyword, it->second);
    return true;
  }

  /// A flag that takes a comma-separated list. Returns whether it was given.
  bool List(const std::string& keyword, std::string* field) {
    known_.push_back(keyword);
    auto it = given_.find(keyword);
    if (it == given_.end()) return false;
    *field = ListText(keyword, it->second);
    return true;
  }

  /// A flag that takes none (--sequence-parallel): True or False. `where`
  /// names a keyword that is no flag (search's document=).
  void Flag(const std::string& keyword, bool* field, const std::string& where = "") {
    known_.push_back(keyword);
    auto it = given_.find(keyword);
    if (it == given_.end()) return;
    if (!py::isinstance<py::bool_>(it->second)) {
      throw Error(where.empty() ? FlagOf(keyword) : where,
                  fmt::format("expected True or False, got {}", Shown(it->second)));
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

// A function takes keyword arguments only, named as its command's flags: a
// positional one is refused in one line (not pybind11's list of overloads).
void NoPositional(const char* function, const py::args& args) {
  if (args.empty()) return;
  throw py::type_error(fmt::format("railsim.{}() takes keyword arguments only, named as the command's flags "
                                   "(gpus=1024, hb_size=8); got {} positional argument{}",
                                   function, args.size(), args.size() == 1 ? "" : "s"));
}

// Ctrl-C during a call. The work runs without the GIL, so Python's own
// handler only marks the signal; the loops of the work poll (core/
// interrupt.h), and on Python's main thread the poll runs the pending
// handlers (PyErr_CheckSignals). What the handler raised (KeyboardInterrupt,
// or the user's handler's exception) is kept here and raised when the call
// unwinds. Calls from other threads stop too once a stop is recorded (a
// Ctrl-C stops every railsim call of the process), with KeyboardInterrupt.
std::atomic<std::thread::id> g_signal_thread;  // Python's main thread while it is in a call
int g_calls = 0;                               // calls running; changed with the GIL held
// The exception the signal handler raised; never destroyed (the interpreter
// may be gone at exit).
std::optional<py::error_already_set>& PendingSignalError() {
  static auto* pending = new std::optional<py::error_already_set>();
  return *pending;
}

bool PollSignals() {
  if (std::this_thread::get_id() != g_signal_thread.load()) return false;
  py::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() == 0) return false;
  PendingSignalError().emplace();  // takes the error indicator
  return true;
}

class InterruptibleCall {
 public:
  // With the GIL held.
  InterruptibleCall() {
    if (g_calls++ == 0) {
      ClearInterrupt();
      SetInterruptPoll(&PollSignals);
    }
    const py::object main_thread = py::module_::import("threading").attr("main_thread")();
    main_ = main_thread.attr("ident").cast<unsigned long>() == PyThread_get_thread_ident();
    if (main_) g_signal_thread = std::this_thread::get_id();
  }
  // With the GIL held.
  ~InterruptibleCall() {
    if (main_) g_signal_thread = std::thread::id();
    if (--g_calls == 0) {
      SetInterruptPoll(nullptr);
      ClearInterrupt();
    }
  }
  InterruptibleCall(const InterruptibleCall&) = delete;
  InterruptibleCall& operator=(const InterruptibleCall&) = delete;

  // Raises what the signal handler raised, else KeyboardInterrupt.
  [[noreturn]] void Raise() {
    std::optional<py::error_already_set>& pending = PendingSignalError();
    if (main_ && pending) {
      py::error_already_set e = std::move(*pending);
      pending.reset();
      throw e;
    }
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }

  // A handler that ran at a poll the work did not stop at raises now.
  void RaiseIfSignalled() {
    if (main_ && PendingSignalError()) Raise();
  }

 private:
  bool main_ = false;
};

// Runs `work` (which returns a report's JSON text) without the GIL, so that
// other Python threads run, stoppable by Ctrl-C; returns the JSON as dicts.
template <typename Work>
py::object RunReleased(Work work) {
  InterruptibleCall call;
  std::string json;
  try {
    py::gil_scoped_release release;
    json = work();
  } catch (const Interrupted&) {
    call.Raise();
  }
  call.RaiseIfSignalled();
  return py::module_::import("json").attr("loads")(json);
}

// JSON text (a report/ document) as Python values.
py::object Loads(const std::string& json) { return py::module_::import("json").attr("loads")(json); }

// Binds every row of a flag table (request/flag_table.h) as the keyword its
// flag spells.
template <typename Flags>
void BindRows(Keywords& k, const std::vector<request::FlagRow<Flags>>& table, Flags* f) {
  for (const request::FlagRow<Flags>& row : table) {
    const std::string keyword = request::KeywordOf(row.flag);
    if (row.on) {
      k.Flag(keyword, row.on(*f));
      continue;
    }
    auto bind = [&](const std::string& name) { return row.list ? k.List(name, row.text(*f)) : k.Text(name, row.text(*f)); };
    // The alias ("network" for "design") is a keyword too, when the flag's own name is not given.
    if ((bind(keyword) || (row.alias && bind(request::KeywordOf(row.alias)))) && row.given) *row.given(*f) = true;
  }
}

void BindModel(Keywords& k, request::ModelFlags* f) { BindRows(k, request::ModelFlagTable(), f); }

void BindStrategy(Keywords& k, request::StrategyFlags* f) {
  BindRows(k, request::StrategyFlagTable(), f);
  // The short keyword the module took first, kept beside the flag's own.
  k.Text("microbatch_group_size_per_vp_stage", &f->group_size);
}

// The job flags; `design`: traffic calls --network --design; `search`:
// gpus_per_domain may be a list (search tries each).
void BindJob(Keywords& k, request::JobFlags* f, bool design, bool search = false) {
  BindModel(k, &f->model);
  BindRows(k, request::JobFlagTable(design, search), f);
}

py::object Estimate(const py::args& args, const py::kwargs& kwargs) {
  NoPositional("estimate", args);
  request::JobFlags job;
  request::StrategyFlags strategy;
  Keywords k(kwargs);
  BindJob(k, &job, false);
  BindStrategy(k, &strategy);
  k.Finish();
  return RunReleased([&] {
    request::Job j = request::ParseJob(job);
    spec::Strategy s = request::ParseStrategy(strategy, j.context, j.global_batch, j.attention, j.cuda_graph_impl);
    request::PrintWarning(j.warning);
    return report::EstimateJson(j.context, s, perf::EstimateIteration(j.context, s));
  });
}

py::object Search(const py::args& args, const py::kwargs& kwargs) {
  NoPositional("search", args);
  request::JobFlags job;
  request::SearchFlags search;
  Keywords k(kwargs);
  bool document = false, timing = false;
  k.Flag("document", &document, "document");
  k.Flag("timing", &timing);
  BindJob(k, &job, false, true);
  BindRows(k, request::SearchFlagTable(), &search);
  k.Finish();
  py::object out = RunReleased([&] {
    const std::vector<request::Job> jobs = request::ParseSearchJobs(job);
    const request::Job& j = jobs.front();
    request::SearchRequest request = request::ParseSearch(search, jobs);
    request::PrintWarning(j.warning);
    std::vector<perf::PerfContext> contexts;
    for (const request::Job& one : jobs) contexts.push_back(one.context);
    search::SearchResult r = study::SearchSegments(contexts, request.options, request.idle_gpus);
    return report::SearchJson(j.context, r, timing);
  });
  return document ? out : out["results"];
}

py::object Traffic(const py::args& args, const py::kwargs& kwargs) {
  NoPositional("traffic", args);
  request::JobFlags job;
  job.network = "rail-optimized";
  request::StrategyFlags strategy;
  Keywords k(kwargs);
  BindJob(k, &job, true);
  BindStrategy(k, &strategy);
  k.Finish();
  return RunReleased([&] {
    study::TrafficOptions o;
    request::Job j = request::ParseTrafficJob(job, &o.design);
    spec::Strategy s = request::ParseStrategy(strategy, j.context, j.global_batch, j.attention, j.cuda_graph_impl);
    request::PrintWarning(j.warning);
    return report::TrafficJson(j.context, s, study::AnalyzeTraffic(j.context, s, o));
  });
}

py::object Network(const py::args& args, const py::kwargs& kwargs) {
  NoPositional("network", args);
  request::NetworkFlags f;
  Keywords k(kwargs);
  BindRows(k, request::NetworkFlagTable(false), &f);
  k.Finish();
  if (f.design.empty()) throw Error("--design", "needed: rail-only, rail-optimized or fat-tree");
  return RunReleased([&] {
    return report::NetworkJson(request::RunNetworkFlags(f, f.design));
  });
}

py::object Cost(const py::args& args, const py::kwargs& kwargs) {
  NoPositional("cost", args);
  request::NetworkFlags f;
  Keywords k(kwargs);
  BindRows(k, request::NetworkFlagTable(true), &f);
  k.Finish();
  return RunReleased([&] {
    request::CostStudy cost = request::RunCostFlags(f, f.server);
    return report::CostJson(cost.designs, cost.clusters);
  });
}

py::object AllToAll(const py::args& args, const py::kwargs& kwargs) {
  NoPositional("alltoall", args);
  request::AllToAllFlags f;
  Keywords k(kwargs);
  BindRows(k, request::AllToAllFlagTable(), &f);
  k.Finish();
  if (f.bytes_per_pair.empty()) throw Error("--bytes-per-pair", "needed: the bytes each GPU sends to every other");
  return RunReleased([&] {
    request::AllToAllRun run = request::RunAllToAllFlags(f);
    return report::AllToAllJson(run.request, run.outcome, run.baseline);
  });
}

py::object Collective(const py::args& args, const py::kwargs& kwargs) {
  NoPositional("collective", args);
  request::CollectiveFlags f;
  Keywords k(kwargs);
  BindRows(k, request::CollectiveFlagTable(), &f);
  BindModel(k, &f.model);
  k.Finish();
  return RunReleased([&] {
    request::CollectiveRun run = request::RunCollectiveFlags(f);
    return report::CollectiveJson(run.request, run.outcome);
  });
}

py::object Failures(const py::args& args, const py::kwargs& kwargs) {
  NoPositional("failures", args);
  request::FailureFlags f;
  Keywords k(kwargs);
  BindRows(k, request::FailureFlagTable(), &f);
  BindModel(k, &f.model);
  // The short keyword the module took first, kept beside the flag's own.
  k.Text("microbatch_group_size_per_vp_stage", &f.strategy.group_size);
  k.Finish();
  return RunReleased([&] {
    request::FailureStudy s = request::RunFailureFlags(f);
    return report::FailureJson({&s.setup, s.radix, s.explicit_failures, s.monte_carlo, s.options, s.notes});
  });
}

// railsim.cluster(trace=..., gpus=..., network="all", policy="all", ...): the
// study (not the CLI), its JSON as dicts.
py::object Cluster(const py::args& args, const py::kwargs& kwargs) {
  NoPositional("cluster", args);
  request::ClusterStudyFlags f;
  Keywords k(kwargs);
  BindRows(k, request::ClusterStudyFlagTable(), &f);
  k.Finish();
  return RunReleased([&] { return report::ClusterJson(request::RunClusterFlags(f)); });
}

py::object Compare(const py::args& args, const py::kwargs& kwargs) {
  NoPositional("compare", args);
  request::CompareFlags f;
  Keywords k(kwargs);
  BindRows(k, request::CompareFlagTable(), &f);
  k.Finish();
  return RunReleased([&] {
    return report::CompareJson(request::RunCompareFlags(f));
  });
}

py::object Report(const py::args& args, const py::kwargs& kwargs) {
  NoPositional("report", args);
  request::ReportFlags f;
  Keywords k(kwargs);
  BindRows(k, request::ReportFlagTable(), &f);
  k.Finish();
  return RunReleased([&] {
    InputFileRecord read;  // so that no file of the report replaces an input
    study::ReportInputs inputs = request::ParseReportFlags(f);
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
    return report::ReportFilesJson(f.out, written, inputs.notes);
  });
}

py::object Presets(const py::args& args, const py::kwargs& kwargs) {
  NoPositional("presets", args);
  Keywords(kwargs).Finish();
  return Loads(report::PresetsJson(spec::ListPresets()))["presets"];
}

// As `railsim presets show NAME`: a preset's JSON, or a model file or Hugging
// Face config.json as railsim reads it. `name` by position or keyword.
py::object PresetShow(const py::args& args, const py::kwargs& kwargs) {
  const bool by_keyword = args.empty() && kwargs.size() == 1 && kwargs.contains("name");
  if (!by_keyword && (args.size() != 1 || !kwargs.empty())) {
    throw py::type_error("railsim.preset_show() takes one argument, name: a preset name or a model file path");
  }
  const py::object value = by_keyword ? py::object(kwargs["name"]) : py::object(args[0]);
  if (!py::isinstance<py::str>(value)) {
    throw Error("name", fmt::format("expected a preset name or a file path (str), got {}", TypeName(value)));
  }
  const std::string name = value.cast<std::string>();
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
      PyErr_SetString(PyExc_ValueError, railsim::request::InKeywords(e).c_str());
    } catch (const railsim::Interrupted&) {
      PyErr_SetNone(PyExc_KeyboardInterrupt);
    }
  });
  m.def("presets", &rp::Presets, "Every embedded preset: a list of {kind, name, description}.");
  m.def("preset_show", &rp::PresetShow,
        "A preset's JSON as a dict, or a model file / Hugging Face config.json as railsim reads it.");
  m.def("network", &rp::Network, "railsim network: one design built and counted (bill of materials, cost, power).");
  m.def("cost", &rp::Cost, "railsim cost: every design side by side with Rail-only's savings.");
  m.def("estimate", &rp::Estimate, "railsim estimate: iteration time, breakdown, MFU and memory of one strategy.");
  m.def("search", &rp::Search,
        "railsim search: the best strategies, a list of rows (document=True: the whole JSON document).");
  m.def("traffic", &rp::Traffic, "railsim traffic: bytes per GPU pair by parallelism, class and tier.");
  m.def("collective", &rp::Collective, "railsim collective: one collective on a placed group, analytic and simulated.");
  m.def("alltoall", &rp::AllToAll, "railsim alltoall: uniform all-to-all on Rail-only or rail-optimized.");
  m.def("failures", &rp::Failures, "railsim failures: explicit failures per design and the Monte Carlo.");
  m.def("cluster", &rp::Cluster,
        "railsim cluster: a job trace on a shared cluster per design and scheduler policy (occupancy, queueing, "
        "contention).");
  m.def("compare", &rp::Compare, "railsim compare: every design of a scenario side by side and the verdict.");
  m.def("report", &rp::Report, "railsim report: writes the HTML report into out=DIR; returns the files written.");
}
