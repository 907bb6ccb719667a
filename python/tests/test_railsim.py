"""The Python module against the command line: every function once, its
errors, and equality with the CLI's --format json for the same inputs."""
import decimal
import json
import os
import re
import signal
import subprocess
import threading
import time

import pytest

import railsim
from conftest import BUILD, ROOT

CLI = os.path.join(BUILD, "railsim")


def cli_json(*args):
    """The CLI's JSON document for `args` (railsim COMMAND --flags ...)."""
    out = subprocess.run([CLI, *args, "--format", "json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def cli_error(*args):
    """The CLI's one-line error for `args`, without the 'railsim: error: ' prefix."""
    out = subprocess.run([CLI, *args], capture_output=True, text=True)
    assert out.returncode == 2, out.stderr
    line = out.stderr.strip()
    assert line.startswith("railsim: error: ")
    return line[len("railsim: error: "):]


def as_keyword(message):
    """A CLI error as the module raises it: its leading flag spelled as the keyword ("--micro-batch-size: ..." ->
    "micro_batch_size: ...")."""
    match = re.match(r"--([a-z0-9][a-z0-9-]*)(.*)", message, re.S)
    return match.group(1).replace("-", "_") + match.group(2) if match else message


def flags(**kw):
    """Keyword arguments as the CLI's flags, for the same call both ways."""
    args = []
    for key, value in kw.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            args.append(flag)
        elif isinstance(value, dict):
            args += [flag, json.dumps(value)]
        elif isinstance(value, list):
            args += [flag, ",".join(str(v) for v in value)]
        else:
            args += [flag, str(value)]
    return args


ESTIMATE = dict(model="gpt3-175b", system="dgx-h100", gpus=1024, tp=8, pp=8, micro_batch_size=1,
                global_batch_size=1536, sequence_parallel=True, network="rail-only")
SEARCH = dict(model="gpt3-175b", system="dgx-h100", gpus=256, global_batch_size=512, top=5)
SMALL_SCENARIO = dict(gpus=1024, hb_sizes=[8], radixes=[64], global_batch_sizes=[512], model="gpt3-175b",
                      system="dgx-h100", moe_model="mixtral-8x22b", moe_global_batch_size=256)


def test_presets_list_and_show():
    rows = railsim.presets()
    assert rows == cli_json("presets")["presets"]
    assert {"kind": "system", "name": "dgx-h100"}.items() <= next(r for r in rows if r["name"] == "dgx-h100").items()
    system = railsim.preset_show("dgx-h100")
    shown = subprocess.run([CLI, "presets", "show", "dgx-h100"], capture_output=True, text=True, check=True)
    assert system == json.loads(shown.stdout)


def test_network_and_cost_equal_cli():
    kw = dict(gpus=1024, hb_size=8, radix=64)
    assert railsim.network(design="rail-only", **kw) == cli_json("network", *flags(design="rail-only", **kw))
    assert railsim.cost(server="dgx-h100", **kw) == cli_json("cost", *flags(server="dgx-h100", **kw))


def test_estimate_equals_cli():
    py = railsim.estimate(**ESTIMATE)
    assert py == cli_json("estimate", *flags(**ESTIMATE))
    assert py["iteration_time_s"] > 0 and py["breakdown"]["compute_s"] > 0


def test_estimate_iteration_overhead_is_a_run_input():
    """iteration_overhead= is --iteration-overhead: 150 ms more fixed cost, the rest unchanged."""
    base = railsim.estimate(iteration_overhead="0s", **ESTIMATE)
    slow = railsim.estimate(iteration_overhead="150ms", **ESTIMATE)
    assert slow == cli_json("estimate", *flags(iteration_overhead="150ms", **ESTIMATE))
    assert abs(slow["breakdown"]["overhead_s"] - base["breakdown"]["overhead_s"] - 0.15) < 1e-9
    assert slow["breakdown"]["compute_s"] == base["breakdown"]["compute_s"]
    with pytest.raises(ValueError, match="iteration_overhead"):
        railsim.estimate(iteration_overhead="61s", **ESTIMATE)


def test_every_strategy_keyword_is_its_flags_name():
    """Keywords come from the flags' table: the flag's own name works, and the module's first spelling too."""
    job = dict(model="gpt3-175b", system="dgx-h100", gpus=1024, tp=8, pp=8, vp=2, micro_batch_size=1,
               global_batch_size=1536)
    by_flag = railsim.estimate(microbatch_group_size_per_virtual_pipeline_stage="16", **job)
    assert by_flag == cli_json("estimate", *flags(microbatch_group_size_per_virtual_pipeline_stage="16", **job))
    assert by_flag == railsim.estimate(microbatch_group_size_per_vp_stage="16", **job)
    assert by_flag != railsim.estimate(**job)


def test_estimate_cuda_graph_impl_is_a_run_input():
    """cuda_graph_impl= is --cuda-graph-impl: an eager run at tp 8 on GB200 is host-bound, a graphed one is not."""
    job = dict(model="llama3.1-8b", system="gb200-nvl72", gpus=72, tp=8, pp=1, micro_batch_size=1,
               global_batch_size=72, sequence_parallel=True)
    unstated = railsim.estimate(**job)
    eager = railsim.estimate(cuda_graph_impl="none", **job)
    graphed = railsim.estimate(cuda_graph_impl="transformer_engine", **job)
    assert eager == cli_json("estimate", *flags(cuda_graph_impl="none", **job))
    assert eager["strategy"]["cuda_graph_impl"] == "none" and "cuda_graph_impl" not in unstated["strategy"]
    assert eager["breakdown"]["compute_s"] > 1.2 * unstated["breakdown"]["compute_s"]
    assert graphed["iteration_time_s"] == unstated["iteration_time_s"]
    with pytest.raises(ValueError, match="cuda_graph_impl"):
        railsim.estimate(cuda_graph_impl="full", **job)


def test_estimate_model_and_system_from_dicts():
    """A dict is the JSON a file would hold: the same answer as the preset names."""
    by_name = railsim.estimate(**ESTIMATE)
    kw = dict(ESTIMATE, model=railsim.preset_show("gpt3-175b"), system=railsim.preset_show("dgx-h100"))
    by_dict = railsim.estimate(**kw)
    for key in ["iteration_time_s", "mfu", "breakdown", "memory", "strategy"]:
        assert by_dict[key] == by_name[key]


def test_search_rows_document_and_dataframe():
    pandas = pytest.importorskip("pandas")
    doc = railsim.search(document=True, **SEARCH)
    assert doc == cli_json("search", *flags(**SEARCH))
    rows = railsim.search(**SEARCH)
    assert rows == doc["results"] and len(rows) == 5
    frame = pandas.json_normalize(rows)
    assert list(frame["estimate.iteration_time_s"]) == sorted(frame["estimate.iteration_time_s"])
    assert len(pandas.DataFrame(rows)) == 5


def test_traffic_equals_cli():
    kw = dict(model="gpt3-175b", system="dgx-h100", gpus=256, tp=8, pp=8, micro_batch_size=1,
              global_batch_size=512, design="rail-only")
    assert railsim.traffic(**kw) == cli_json("traffic", *flags(**kw))


@pytest.mark.parametrize("simulate", [False, True])
def test_collective_equals_cli(simulate):
    kw = dict(op="all-reduce", bytes="64MiB", group="dp", system="dgx-h100", gpus=256, tp=8, network="rail-only")
    if simulate:
        kw["simulate"] = True
    assert railsim.collective(**kw) == cli_json("collective", *flags(**kw))


@pytest.mark.parametrize("simulate", [False, True])
def test_alltoall_equals_cli(simulate):
    kw = dict(system="dgx-a100", gpus=72, hb_bw="300GB/s", nic_bw="200Gbps", bytes_per_pair="1MB",
              network="rail-only", schedule="pipelined")
    if simulate:
        kw["simulate"] = True
    assert railsim.alltoall(**kw) == cli_json("alltoall", *flags(**kw))


def test_failures_explicit_and_monte_carlo_equal_cli():
    explicit = dict(gpus=1024, network="rail-only", radix=64, fail="switch:rail2/leaf1", model="gpt3-175b",
                    tp=8, pp=8, micro_batch_size=1, global_batch_size=512)
    assert railsim.failures(**explicit) == cli_json("failures", *flags(**explicit))
    monte_carlo = dict(gpus=1024, radix=64, trials=200, days=10, seed=7)
    py = railsim.failures(**monte_carlo)
    assert py == cli_json("failures", *flags(**monte_carlo))


def test_compare_with_a_job_trace_quantifies_the_shared_cluster():
    """A scenario dict's job_trace: the cluster study per design and policy, as the CLI runs it."""
    scenario = {"name": "shared", "gpus": 64, "hb_domain_sizes": [8], "radixes": [16], "port_speed": "400Gbps",
                "job_trace": "synthetic", "job_trace_policies": ["first-fit", "domain-packing"]}
    doc = railsim.compare(scenario=scenario)
    assert doc == cli_json("compare", "--scenario", json.dumps(scenario))
    runs = doc["shared_cluster"]["runs"]
    assert {(r["design"], r["policy"]) for r in runs} == {
        (d, p) for d in ("rail-only", "rail-optimized", "fat-tree") for p in ("first-fit", "domain-packing")}
    assert all(0 <= r["occupancy_mean"] <= 1 and r["jct_slowdown"]["mean"] >= 1 for r in runs)
    assert any("running the job trace 'synthetic'" in line for line in doc["verdict"])


def test_compare_equals_cli():
    assert railsim.compare(**SMALL_SCENARIO) == cli_json("compare", *flags(**SMALL_SCENARIO))


def test_report_writes_the_page(tmp_path):
    out = tmp_path / "page"
    files = railsim.report(out=str(out), **SMALL_SCENARIO)
    assert (out / "index.html").stat().st_size > 10000
    cli = cli_json("report", *flags(out=str(tmp_path / "cli"), **SMALL_SCENARIO))
    assert sorted(files["files"]) == sorted(cli["files"])


@pytest.mark.parametrize("kw", [
    dict(ESTIMATE, tp=7),
    dict(ESTIMATE, gpus="many"),
    dict(ESTIMATE, model="gpt3-175"),
    dict(ESTIMATE, recompute="most"),
    dict(ESTIMATE, model={"name": "tiny"}),
])
def test_bad_input_raises_value_error_with_the_cli_message(kw):
    with pytest.raises(ValueError) as raised:
        railsim.estimate(**kw)
    message = as_keyword(cli_error("estimate", *flags(**kw)))
    print(f"ValueError: {raised.value}")
    assert str(raised.value) == message


def test_keyword_errors():
    with pytest.raises(ValueError, match="unknown keyword argument.*did you mean 'micro_batch_size'"):
        railsim.estimate(**dict(ESTIMATE, micro_batchsize=1))
    with pytest.raises(ValueError, match="^tp: expected a number or text, got True"):
        railsim.estimate(**dict(ESTIMATE, tp=True))
    with pytest.raises(ValueError, match="^sequence_parallel: expected True or False"):
        railsim.estimate(**dict(ESTIMATE, sequence_parallel=1))
    with pytest.raises(ValueError, match="^design: needed"):
        railsim.network(gpus=64, hb_size=8, radix=64)
    with pytest.raises(ValueError, match="^out: cannot"):
        railsim.report(out="/proc/railsim-report", **SMALL_SCENARIO)


def test_a_value_that_is_no_flag_text():
    """A Python value with no text form is refused naming the flag."""
    with pytest.raises(ValueError, match="^gpus: expected a number, text, list or dict, got object"):
        railsim.estimate(**dict(ESTIMATE, gpus=object()))


def test_search_releases_the_gil():
    """Python keeps running while a search runs in another thread."""
    done = threading.Event()
    ticks = 0

    def run():
        railsim.search(**dict(SEARCH, gpus=1024, global_batch_size=1536, threads=1))
        done.set()

    worker = threading.Thread(target=run)
    worker.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    worker.join()
    print(f"main thread ran {ticks} times during the search")
    assert ticks > 10


def test_report_never_replaces_devices_fifos_links_or_inputs(tmp_path):
    """report(out=...) is a folder: "-", a device (one made by mknod where that
    is allowed), a FIFO and a link to a device are refused as the CLI refuses
    them and stay what they were; a page file that is an input is refused."""
    import stat
    os.mkfifo(tmp_path / "fifo")
    os.symlink("/dev/null", tmp_path / "null-link")
    outs = ["-", "/dev/null", str(tmp_path / "fifo"), str(tmp_path / "null-link")]
    try:
        os.mknod(tmp_path / "node", stat.S_IFCHR | 0o666, os.makedev(1, 3))
        outs.append(str(tmp_path / "node"))
    except PermissionError:
        pass
    for out in outs:
        before = os.stat(out).st_mode if out != "-" else None
        with pytest.raises(ValueError) as raised:
            railsim.report(out=out, **SMALL_SCENARIO)
        assert str(raised.value) == as_keyword(cli_error("report", *flags(out=out, **SMALL_SCENARIO)))
        if out == "-":
            assert str(raised.value) == "out: expected a directory name, got '-' (a folder cannot be standard output)"
            assert not os.path.exists("-")
        else:
            assert str(raised.value) == f"out: cannot make the directory '{out}': '{out}' is not a directory"
            assert os.stat(out).st_mode == before
    assert os.path.islink(tmp_path / "null-link")
    # The scenario is the page's own index.html: refused, and kept.
    folder = tmp_path / "page"
    folder.mkdir()
    scenario = subprocess.run([CLI, "presets", "show", "paper-headline"], capture_output=True, text=True,
                              check=True).stdout
    (folder / "index.html").write_text(scenario)
    kw = dict(SMALL_SCENARIO, scenario=str(folder / "index.html"))
    with pytest.raises(ValueError) as raised:
        railsim.report(out=str(folder), **kw)
    assert str(raised.value) == (f"out: '{folder}/index.html' is an input of this command (--scenario); "
                                 "an output must not replace it")
    assert str(raised.value) == as_keyword(cli_error("report", *flags(out=str(folder), **kw)))
    assert (folder / "index.html").read_text() == scenario
    assert sorted(os.listdir(folder)) == ["index.html"]


# Every function of the module and the command whose flags it takes.
FUNCTIONS = {"network": "network", "cost": "cost", "estimate": "estimate", "search": "search",
             "traffic": "traffic", "collective": "collective", "alltoall": "alltoall", "failures": "failures",
             "compare": "compare", "report": "report"}
# Flags with no keyword: the output ones the module returns instead.
OUTPUT_FLAGS = {"help", "format", "export", "heatmap", "export-links", "quiet", "trace", "trace-png",
                "print-scenario"}


def keywords_of(command):
    """The keywords a function takes: its command's flags, read off --help."""
    out = subprocess.run([CLI, command, "--help"], capture_output=True, text=True, check=True).stdout
    flags = set(re.findall(r"^\s+(?:-\w,)?--([a-z0-9-]+)", out, re.M)) - OUTPUT_FLAGS
    return sorted(flag.replace("-", "_") for flag in flags)


def self_referencing_list():
    items = [8]
    items.append(items)
    return items


@pytest.mark.parametrize("function", sorted(FUNCTIONS))
def test_a_list_that_holds_itself_is_refused_for_every_keyword(function):
    """It recursed until the interpreter died (SIGSEGV); now one line naming the keyword."""
    keywords = keywords_of(FUNCTIONS[function])
    assert len(keywords) > 3
    for keyword in keywords:
        with pytest.raises(ValueError) as raised:
            getattr(railsim, function)(**{keyword: self_referencing_list()})
        message = str(raised.value)
        assert message.startswith(keyword + ": "), message
        assert "\n" not in message
    loop = {"name": "x"}
    loop["self"] = loop
    with pytest.raises(ValueError, match=r"^model: expected a dict of JSON values .*Circular reference"):
        railsim.estimate(**dict(ESTIMATE, model=loop))


def test_preset_show_takes_one_name():
    with pytest.raises(ValueError, match=r"^name: expected a preset name or a file path \(str\), got list$"):
        railsim.preset_show(self_referencing_list())
    with pytest.raises(TypeError, match=r"^railsim.preset_show\(\) takes one argument, name"):
        railsim.preset_show("gpt3-175b", "dgx-h100")
    assert railsim.preset_show(name="dgx-h100")["name"] == "dgx-h100"


@pytest.mark.parametrize("function, kw, flag, cli_value", [
    ("network", dict(design="rail-only", gpus=[8], hb_size=8, radix=64), "--gpus", None),
    ("network", dict(design="rail-only", gpus=(8,), hb_size=8, radix=64), "--gpus", None),
    ("network", dict(design="rail-only", gpus=64, hb_size=8, radix=""), "--radix", ""),
    ("search", dict(SEARCH, threads=""), "--threads", ""),
    ("failures", dict(gpus=1024, radix=64, trials=[]), "--trials", None),
])
def test_what_the_command_line_refuses_the_module_refuses(function, kw, flag, cli_value):
    """A scalar takes no list, an empty value is no default: the CLI's rules."""
    with pytest.raises(ValueError) as raised:
        getattr(railsim, function)(**kw)
    message = str(raised.value)
    assert message.startswith(flag[2:].replace("-", "_") + ": "), message
    if cli_value is not None:
        args = flags(**{k: v for k, v in kw.items() if k.replace("_", "-") != flag[2:]})
        assert message == as_keyword(cli_error(function, *args, flag, cli_value))
    else:
        assert "expected one value (a number or text), got a " in message


def test_empty_or_nested_lists_are_refused():
    with pytest.raises(ValueError, match=r"^hb_sizes: expected one or more values, got an empty list$"):
        railsim.compare(hb_sizes=[])
    with pytest.raises(ValueError, match=r"^hb_sizes: expected a list of numbers or text, got a list in it$"):
        railsim.compare(hb_sizes=[8, [256]])
    with pytest.raises(ValueError, match=r"^gpus: expected one value \(a number or text\), got a tuple of 1$"):
        railsim.estimate(**dict(ESTIMATE, gpus=(1024,)))


def test_positional_arguments_are_one_line():
    with pytest.raises(TypeError) as raised:
        railsim.network("rail-only", gpus=64, hb_size=8, radix=64)
    assert str(raised.value) == ("railsim.network() takes keyword arguments only, named as the command's flags "
                                 "(gpus=1024, hb_size=8); got 1 positional argument")


def test_a_dict_model_with_a_decimal_names_the_keyword():
    model = railsim.preset_show("gpt3-175b")
    model["hidden_dropout"] = decimal.Decimal("0.1")
    with pytest.raises(ValueError) as raised:
        railsim.estimate(**dict(ESTIMATE, model=model))
    assert str(raised.value) == ("model: expected a dict of JSON values (str, int, float, bool, None, list, dict), "
                                 "got one json cannot write: Object of type Decimal is not JSON serializable")


def test_numpy_style_integers_are_integers():
    class Index:
        def __index__(self):
            return 1024
    assert railsim.estimate(**dict(ESTIMATE, gpus=Index()))["gpus"] == 1024


def stopped_by_sigint(call, **kw):
    """Seconds from a SIGINT 0.5 s into `call` to its KeyboardInterrupt."""
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            call(**kw)
    finally:
        timer.cancel()
    return time.monotonic() - start - 0.5


# Each takes many seconds uninterrupted (see src/railsim/study/interrupt_test.cc).
# Calls that run for seconds (this VM, release build: simulation 4.9 s,
# search 11 s, monte_carlo 3.2 s, compare 2.0 s), so that a SIGINT 0.5 s in
# always lands inside them, however much faster the code gets.
LONG_CALLS = {
    "simulation": (railsim.alltoall, dict(system="dgx-h100", gpus=4096, network="rail-only", bytes_per_pair="1MB",
                                          simulate=True)),
    # With the optimizer's precisions explored; without them 0.5 s.
    "search": (railsim.search, dict(model="deepseek-v3", system="dgx-h100", gpus=32768, hb_size=256,
                                    global_batch_size=15360, moe_max_domains=4, moe_overlap=True, threads=1,
                                    explore_optimizer=True)),
    "monte_carlo": (railsim.failures, dict(gpus=4096, radix=64, network="rail-only", trials=500000, days=30)),
    "compare": (railsim.compare, dict()),
}


@pytest.mark.parametrize("name", sorted(LONG_CALLS))
def test_ctrl_c_stops_a_long_call_within_a_second(name):
    call, kw = LONG_CALLS[name]
    seconds = stopped_by_sigint(call, **kw)
    print(f"{name}: KeyboardInterrupt {seconds:.2f} s after SIGINT")
    assert seconds < 1.0
    # The next call runs as usual.
    assert railsim.network(design="rail-only", gpus=64, hb_size=8, radix=64)["gpus"] == 64


def test_ctrl_c_raises_what_the_handler_raises():
    class Stop(Exception):
        pass

    def handler(signum, frame):
        raise Stop()

    previous = signal.signal(signal.SIGINT, handler)
    try:
        call, kw = LONG_CALLS["simulation"]
        timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        with pytest.raises(Stop):
            call(**kw)
        timer.cancel()
    finally:
        signal.signal(signal.SIGINT, previous)


def test_outputs_name_the_sequence_length_and_compare_its_notes():
    assert railsim.estimate(**ESTIMATE)["seq_length"] == 2048
    doc = railsim.compare(**dict(SMALL_SCENARIO, moe_model="none", system="aws-p5"))
    assert "moe" not in doc and doc["seq_length"] == 2048
    assert doc["notes"] == cli_json("compare", *flags(**dict(SMALL_SCENARIO, moe_model="none",
                                                               system="aws-p5")))["notes"]
    assert any("no server named aws-p5" in note for note in doc["notes"])


def test_ctrl_c_still_raises_after_report_wrote_files(tmp_path):
    """Writing files installed railsim's own SIGINT handler over Python's: Ctrl-C then killed the interpreter."""
    railsim.report(out=str(tmp_path / "page"), **SMALL_SCENARIO)
    call, kw = LONG_CALLS["monte_carlo"]
    assert stopped_by_sigint(call, **kw) < 1.0


def test_uneven_pipeline_split_keywords_equal_cli():
    """Megatron-Core's four split flags as keywords: Llama 3.1 405B on 16 x 8 virtual stages, which the
    even split refuses (126 layers leave the last stage 7, fewer than 8 virtual stages)."""
    kw = dict(model="llama3-405b", system="dgx-h100", gpus=1024, tp=8, pp=16, vp=8, micro_batch_size=1,
              global_batch_size=256, sequence_parallel=True)
    with pytest.raises(ValueError, match=r"^vp: expected at most 7 virtual stages"):
        railsim.estimate(**kw)
    kw.update(account_for_embedding_in_pipeline_split=True, account_for_loss_in_pipeline_split=True)
    py = railsim.estimate(**kw)
    assert py == cli_json("estimate", *flags(**kw))
    assert py["strategy"]["account_for_embedding_in_pipeline_split"] is True
    assert py["strategy"]["decoder_first_pipeline_num_layers"] == 0
    first_last = dict(kw, vp=1, account_for_embedding_in_pipeline_split=False,
                      account_for_loss_in_pipeline_split=False, decoder_first_pipeline_num_layers=7,
                      decoder_last_pipeline_num_layers=7)
    assert railsim.estimate(**first_last)["strategy"]["decoder_last_pipeline_num_layers"] == 7


GB200_JOB = dict(model="llama3-70b", system="gb200-nvl72", gpus=256, tp=8, pp=8, micro_batch_size=1,
                 global_batch_size=256, gpus_per_domain=64)


def test_gpus_per_domain_equals_cli():
    """256 GPUs on 64 of each of 4 NVL72 racks, in every function that takes gpus_per_domain."""
    e = railsim.estimate(**GB200_JOB)
    assert e == cli_json("estimate", *flags(**GB200_JOB))
    assert (e["gpus_per_domain"], e["hb_domains"], e["idle_gpus_in_domains"]) == (64, 4, 32)
    t = dict(GB200_JOB, placement="tp-pp-dp")
    assert railsim.traffic(**t) == cli_json("traffic", *flags(**t))
    c = dict(op="all-reduce", bytes="64MiB", group="dp", system="gb200-nvl72", gpus=256, tp=8, pp=8,
             placement="tp-pp-dp", gpus_per_domain=64)
    assert railsim.collective(**c) == cli_json("collective", *flags(**c))
    f = dict(gpus=128, gpus_per_domain=64, system="gb200-nvl72", network="rail-optimized", fail=["gpu64"])
    doc = railsim.failures(**f)
    assert doc == cli_json("failures", *flags(**f))
    assert doc["failures"][0]["interrupts"] is False


def test_search_tries_a_list_of_gpus_per_domain():
    kw = dict(model="llama3.1-8b", system="gb200-nvl72", gpus=128, global_batch_size=128, top=20,
              gpus_per_domain=[64, 16])
    doc = railsim.search(document=True, **kw)
    assert doc == cli_json("search", *flags(**kw))
    assert doc["gpus_per_domain_tried"] == [64, 16]
    assert {r["gpus_per_domain"] for r in doc["results"]} <= {64, 16}
    assert railsim.search(document=True, **dict(kw, gpus_per_domain="auto"))["gpus_per_domain_tried"] == [64, 16, 4]


def test_gpus_per_domain_errors_name_the_keyword():
    with pytest.raises(ValueError) as e:
        railsim.estimate(**dict(GB200_JOB, gpus_per_domain=80))
    assert str(e.value) == as_keyword(cli_error("estimate", *flags(**dict(GB200_JOB, gpus_per_domain=80))))
    assert str(e.value).startswith("gpus_per_domain: expected an integer in [1, 72]")
    with pytest.raises(ValueError, match="^gpus_per_domain"):
        railsim.estimate(**dict(GB200_JOB, gpus_per_domain=[64, 16]))


FOLDED = dict(model="deepseek-v3", system="dgx-h100", gpus=256, tp=2, pp=8, ep=32, expert_tensor_parallel_size=1,
              micro_batch_size=1, global_batch_size=1024, sequence_parallel=True)


def test_expert_tensor_parallel_size_keyword_equals_cli():
    """MoE parallel folding: ep 32 over tp 2 x dp 16 with the experts whole (etp 1), on every command."""
    py = railsim.estimate(**FOLDED)
    assert py == cli_json("estimate", *flags(**FOLDED))
    assert py["strategy"]["etp"] == 1 and py["strategy"]["ep"] == 32
    traffic = dict(FOLDED, design="rail-only")
    assert railsim.traffic(**traffic) == cli_json("traffic", *flags(**traffic))
    dispatch = dict(op="moe-dispatch", group="ep", model="deepseek-v3", system="dgx-h100", gpus=256, tp=2, pp=8,
                    ep=32, expert_tensor_parallel_size=1)
    placed = railsim.collective(**dispatch)
    assert placed == cli_json("collective", *flags(**dispatch))
    assert placed["group"]["stride"] == 1  # etp 1: the EP group is 32 consecutive GPUs
    search = dict(model="mixtral-8x22b", system="dgx-h100", gpus=32, global_batch_size=32, top=3,
                  expert_tensor_parallel_size="tp")
    assert railsim.search(document=True, **search) == cli_json("search", *flags(**search))
    with pytest.raises(ValueError) as raised:
        railsim.estimate(**dict(FOLDED, expert_tensor_parallel_size=None))
    assert str(raised.value).startswith("expert_tensor_parallel_size: expected")
    unfolded = dict(FOLDED)
    del unfolded["expert_tensor_parallel_size"]
    with pytest.raises(ValueError) as raised:
        railsim.estimate(**unfolded)
    assert str(raised.value) == as_keyword(cli_error("estimate", *flags(**unfolded)))
    assert str(raised.value).endswith("--expert-tensor-parallel-size 1 fits")


def test_cluster_equals_cli_and_names_its_keys():
    trace = os.path.join(ROOT, "tests", "data", "job-traces", "lingjun2023-jobs.csv")
    kw = dict(trace=trace, gpus=2048, network="rail-only", policy="first-fit", threads=1)
    py = railsim.cluster(**kw)
    assert py == cli_json("cluster", *flags(**kw))
    run = py["runs"][0]
    assert run["design"] == "rail-only" and run["policy"] == "first-fit"
    for key in ("occupancy_mean", "jobs_contended_share", "gpu_time_contended_share"):
        assert 0 <= run[key] <= 1
    assert set(run["queue_wait_s"]) == {"mean", "p50", "p99"}
    assert set(run["jct_slowdown"]) == {"mean", "p99"}
    synthetic = railsim.cluster(jobs=200, gpus=512, policy="all", network="all", no_backfill=True)
    assert len(synthetic["runs"]) == 15


def test_cluster_errors_name_the_flag():
    with pytest.raises(ValueError, match="policy"):
        railsim.cluster(gpus=64, policy="frist-fit")
