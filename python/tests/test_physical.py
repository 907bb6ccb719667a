"""What the module returns stays physical: MFU, HFU and TFLOP/s per GPU under
the GPU's peak at long sequences, memory in whole bytes, a bare integer size
taken as bytes."""
import railsim

H100_PEAK_TFLOPS = 989


def test_long_sequence_mfu_stays_under_the_peak():
    # It returned mfu 1.051 and 1039 TFLOP/s per GPU on a 989 TFLOP/s H100.
    e = railsim.estimate(model="llama3.1-8b", system="dgx-h100", gpus=64, tp=8, cp=8, pp=1,
                         global_batch_size=1, micro_batch_size=1, seq_length=524288,
                         sequence_parallel=True, distributed_optimizer=True)
    assert 0 < e["mfu"] <= e["hfu"] <= 1
    assert e["tflops_per_gpu"] <= H100_PEAK_TFLOPS
    assert isinstance(e["memory_per_gpu_bytes"], int)
    assert all(isinstance(v, int) for v in e["memory"].values())


def test_search_at_a_million_tokens_stays_under_the_peak():
    results = railsim.search(model="llama3.1-8b", system="dgx-h100", gpus=64, global_batch_size=1,
                             seq_length=1048576, top=50, precision="any")
    assert results
    for r in results:
        assert r["estimate"]["mfu"] <= r["estimate"]["hfu"] <= 1


def test_bare_integer_bytes():
    kw = dict(op="all-reduce", group="dp", system="dgx-h100", gpus=128, tp=8)
    assert railsim.collective(bytes=1048576, **kw) == railsim.collective(bytes="1MiB", **kw)
