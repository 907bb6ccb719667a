#!/usr/bin/env python3
"""Writes p5-8nodes/*_perf.txt: the rows of p5-8nodes.csv laid out as the
nccl-tests binaries print them (header, '#  Rank' lines, the table with
out-of-place and in-place columns, the footer), so that railsim's reader is
tested on the exact text format. Times are size / algbw, as nccl-tests
computes algbw; algbw and busbw are the published values.
Run from tests/data/nccl-tests: python3 make_p5_text.py"""
import csv, os

RANKS, NODES = 64, 8
BINARY = {"all-reduce": "all_reduce_perf", "all-gather": "all_gather_perf", "all-to-all": "alltoall_perf"}
REDOP = {"all-reduce": "sum", "all-gather": "none", "all-to-all": "none"}


def float_str(value, width):
    # nccl-tests' getFloatStr: fewer decimals as the number grows.
    power, v = 0, 1
    while value >= v:
        power += 1
        v *= 10
    if power < width - 2:
        return "%*.2f" % (width, value)
    if power < width - 1:
        return "%*.1f" % (width, value)
    if power < width + 1:
        return "%*.0f" % (width, value)
    return "%*.1e" % (width, value)


def main():
    rows = {}
    with open("p5-8nodes.csv") as f:
        for r in csv.DictReader(line for line in f if not line.startswith("#")):
            rows.setdefault(r["op"], []).append(r)
    os.makedirs("p5-8nodes", exist_ok=True)
    for op, table in rows.items():
        binary = BINARY[op]
        sizes = [int(float(r["size_mib"]) * 1048576) for r in table]
        out = []
        out.append("# nccl-tests version 2.16.9 nccl-headers=22707 nccl-library=22707")
        out.append("# Collective test starting: %s" % binary)
        out.append("# nThread 1 nGpus 1 minBytes %d maxBytes %d step: 2(factor) warmup iters: 10 iters: 1000 "
                   "agg iters: 1 validation: 1 graph: 0" % (sizes[0], sizes[-1]))
        out.append("#")
        out.append("# Using devices")
        bus = [0x53, 0x64, 0x75, 0x86, 0x97, 0xa8, 0xb9, 0xca]
        for rank in range(RANKS):
            node, dev = divmod(rank, RANKS // NODES)
            out.append("#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s" %
                       (rank, 0, 41000 + rank, "p5-node%d" % (node + 1), dev, 0, bus[dev], 0, "NVIDIA H100 80GB HBM3"))
        if op == "all-reduce":
            out.append("p5-node1:41000:41000 [0] NCCL INFO NCCL version 2.27.7+cuda12.8")
            out.append("NCCL_BUFFSIZE=8388608")
            out.append("NCCL_P2P_NET_CHUNKSIZE=524288")
        out.append("#")
        out.append("# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          " %
                   ("", "", "", "", ""))
        out.append("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s " %
                   ("size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
                    "busbw", "#wrong"))
        out.append("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s " %
                   ("(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", ""))
        total = 0.0
        for r, size in zip(table, sizes):
            count = size // 4 if op == "all-reduce" else size // 4 // RANKS
            line = "%12d  %12d  %8s  %6s  %6s" % (size, count, "float", REDOP[op], "%6i" % -1)
            for part in ("oop", "inplace"):
                algbw, busbw = float(r[part + "_algbw_GBps"]), float(r[part + "_busbw_GBps"])
                total += busbw
                line += "  %7s  %6s  %6s  %6g" % (float_str(size / (algbw * 1e3), 7), float_str(algbw, 6),
                                                  float_str(busbw, 6), 0)
            out.append(line)
        out.append("# %-20s : %d %s" % ("Out of bounds values", 0, "OK"))
        out.append("# %-20s : %g %s" % ("Avg bus bandwidth", total / (2 * len(table)), ""))
        out.append("#")
        out.append("# Collective test concluded: %s" % binary)
        out.append("")
        with open(os.path.join("p5-8nodes", binary + ".txt"), "w") as f:
            f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
