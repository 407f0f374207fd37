#!/usr/bin/env python3
"""The unbounded-plane issue's chaos goal on one CPU thread: a random soup (4096x4096, density
0.5, seed 1) to 1000 on the plane's active tiles against the same soup on its torus (their rates,
as each run prints them), and against Golly's QuickLife (its stepping time: bgolly -b's timestamp
at the last generation less at generation 0). Rounds alternate, because a shared machine's speed
drifts; the ratios are given best against best, median against median, and as the median of each
round's own ratio.

    scripts/golly/build-bgolly.sh /work/.mirror/jimblandy+golly/repo   # -> target/golly/bgolly
    cargo build --release
    scripts/golly/chaos-bench.py [--rounds 21] [--quicklife-rounds 6]
"""

import argparse
import os
import re
import statistics
import subprocess
import tempfile


def run(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return out


def lifegen_rate(out):
    seconds = float(re.search(r"^generations: \d+ in ([\d.]+) s", out, re.M).group(1))
    rate = float(re.search(r"^cell updates/s: ([\d.e+]+)", out, re.M).group(1))
    return seconds, rate


def quicklife_seconds(out, gens):
    stamps = {int(g.replace(",", "")): float(t)
              for t, g in re.findall(r"^([\d.]+) ([\d,]+)$", out, re.M)}
    return stamps[gens] - stamps[0]


def summary(name, a, b):
    """`a` over `b` (lists of one round each): best, median, median of the rounds' ratios."""
    paired = statistics.median(x / y for x, y in zip(a, b))
    print("%s: best %.2f, median %.2f, median of rounds %.2f"
          % (name, max(a) / max(b), statistics.median(a) / statistics.median(b), paired))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lifegen", default="target/release/lifegen")
    ap.add_argument("--bgolly", default="target/golly/bgolly")
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--gens", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--quicklife-rounds", type=int, default=6)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="chaos-")
    torus = os.path.join(work, "soup-torus.rle")
    plane = os.path.join(work, "soup.rle")
    n = str(args.size)
    run([args.lifegen, "run", "--size", "%sx%s" % (n, n), "--gens", "0", "--seed", "1",
         "--output", torus])
    with open(torus) as f:
        text = f.read()
    # The same cells with no bounded grid: Golly's unbounded plane.
    with open(plane, "w") as f:
        f.write(re.sub(r"(rule = [^:\n]*):T\d+,\d+", r"\1", text, count=1))
    one = ["--gens", str(args.gens), "--threads", "1", "--backend", "cpu"]
    tiles, dense = [], []
    for _ in range(args.rounds):
        tiles.append(lifegen_rate(run([args.lifegen, "run", "--input", plane, "--algo", "tiles"]
                                      + one)))
        dense.append(lifegen_rate(run([args.lifegen, "run", "--input", torus] + one)))
    print("tiles seconds:", " ".join("%.3f" % s for s, _ in tiles))
    print("torus seconds:", " ".join("%.3f" % s for s, _ in dense))
    summary("torus rate / tiles rate (goal 1.3 at most)", [r for _, r in dense],
            [r for _, r in tiles])
    summary("tiles time / torus time", [1 / s for s, _ in dense], [1 / s for s, _ in tiles])
    if not os.path.exists(args.bgolly):
        print("no bgolly at %s: QuickLife left out" % args.bgolly)
        return
    quick, ours = [], []
    for _ in range(args.quicklife_rounds):
        quick.append(quicklife_seconds(run([args.bgolly, "-b", "-a", "QuickLife", "-m",
                                            str(args.gens), plane]), args.gens))
        ours.append(lifegen_rate(run([args.lifegen, "run", "--input", plane, "--algo", "tiles"]
                                     + one))[0])
    print("QuickLife stepping seconds:", " ".join("%.3f" % s for s in quick))
    print("tiles stepping seconds:", " ".join("%.3f" % s for s in ours))
    summary("QuickLife time / tiles time (goal 10 at least)", [1 / s for s in ours],
            [1 / s for s in quick])


if __name__ == "__main__":
    main()
