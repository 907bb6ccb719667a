#!/usr/bin/env python3
"""Sweep a model over cluster sizes into a pandas DataFrame.

GPT-3 175B at global batch 1536 on 256 to 8,192 DGX H100 GPUs, on Rail-only
and rail-optimized: the best strategy at each size, its iteration time, MFU
and tokens per second, one row per (cluster size, network). Prints the table
and writes it as CSV. Run from the repository after building with
RAILSIM_PYTHON (scripts/build.sh does):

    PYTHONPATH=build/release/python python3 examples/cluster_size_sweep.py [out.csv]
"""
import sys

import pandas

import railsim


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "cluster_sizes.csv"
    rows = []
    for gpus in [256, 512, 1024, 2048, 4096, 8192]:
        for network in ["rail-optimized", "rail-only"]:
            best = railsim.search(model="gpt3-175b", system="dgx-h100", gpus=gpus, global_batch_size=1536,
                                  network=network, top=1)
            if not best:
                continue
            s, e = best[0]["strategy"], best[0]["estimate"]
            rows.append(dict(gpus=gpus, network=network, tp=s["tp"], pp=s["pp"], cp=s["cp"], dp=s["dp"], vp=s["vp"],
                             micro_batch_size=s["micro_batch_size"], iteration_time_s=e["iteration_time_s"],
                             mfu=e["mfu"], tokens_per_s=e["tokens_per_s"]))
    frame = pandas.DataFrame(rows)
    # Rail-only's slowdown against rail-optimized at each size.
    times = frame.pivot(index="gpus", columns="network", values="iteration_time_s")
    print(frame.to_string(index=False, float_format=lambda x: f"{x:.4g}"))
    print()
    print("Rail-only / rail-optimized iteration time:")
    print((times["rail-only"] / times["rail-optimized"]).to_string(float_format=lambda x: f"{x:.4f}"))
    frame.to_csv(out, index=False)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
