#!/usr/bin/env python3
"""The report's figure "iteration time against HB domain size", from Python.

For each HB domain size K = 1, 2, 4, ... 256, the best strategy's iteration
time of GPT-1T (megatron-1t) on 32,768 DGX H100 GPUs at global batch 256, on
the rail-optimized network and on Rail-only: railsim report's figure, drawn
with matplotlib. Run from the repository after building with RAILSIM_PYTHON
(scripts/build.sh does):

    PYTHONPATH=build/release/python python3 examples/hb_domain_figure.py [out.png]
"""
import sys

import matplotlib
matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt
import matplotlib.ticker
import pandas

import railsim

JOB = dict(model="megatron-1t", system="dgx-h100", gpus=32768, global_batch_size=256, top=1)


def best_time(network, hb_size):
    rows = railsim.search(network=network, hb_size=hb_size, **JOB)
    return rows[0]["estimate"]["iteration_time_s"] if rows else float("nan")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "hb_domain.png"
    sizes = [2 ** i for i in range(9)]
    frame = pandas.DataFrame({
        "hb_domain_size": sizes,
        "rail-optimized": [best_time("rail-optimized", k) for k in sizes],
        "rail-only": [best_time("rail-only", k) for k in sizes],
    })
    print(frame.to_string(index=False))

    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(frame["hb_domain_size"], frame["rail-optimized"], "o-", ms=8, label="rail-optimized")
    ax.plot(frame["hb_domain_size"], frame["rail-only"], "s--", ms=4, label="Rail-only")
    # Where the two differ, say by how much (they coincide where no
    # cross-rail traffic is exposed).
    for k, opt, only in zip(frame["hb_domain_size"], frame["rail-optimized"], frame["rail-only"]):
        if only > opt * 1.001:
            ax.annotate(f"Rail-only +{100 * (only / opt - 1):.1f}%", (k, only), textcoords="offset points",
                        xytext=(0, 12), ha="center", fontsize=9)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_yticks([0.25, 0.5, 1, 2, 4], ["0.25", "0.5", "1", "2", "4"])
    ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xticks(sizes, [str(k) for k in sizes])
    ax.set_xlabel("HB domain size K (GPUs)")
    ax.set_ylabel("best iteration time (s)")
    ax.set_title("GPT-1T, 32,768 H100 GPUs, global batch 256")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
