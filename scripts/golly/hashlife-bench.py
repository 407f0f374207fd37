#!/usr/bin/env python3
"""Times lifegen's HashLife against Golly's HashLife and QuickLife (bgolly, one thread) on a suite
of patterns from Golly's own Patterns folder, at several horizons, as a user waits for them: the
whole process from start to exit, no output file; a run under a second is taken --best-of times
(default 5) on both sides and its least time kept. The populations each prints are compared too
(the cell-for-cell check is plane-check.py's). A Golly run that passes --limit seconds is left out
(with its algorithm named); the ratio is lifegen's time over the faster Golly algorithm's.

  scripts/golly/hashlife-bench.py PATTERNS_DIR [--gens 1000,100000,10000000,1073741824]
      [--limit 60] [--quicklife-max 100000] [--bgolly target/golly/bgolly]
      [--lifegen target/release/lifegen] [--best-of 5]

`--suite sparse --algo auto --against quicklife --gens 100000` is the unbounded-plane issue's
sparse goal instead: engineered patterns (guns, puffers, breeders, methuselahs, spaceships,
oscillators) run as a user runs them (no --algo), against Golly's QuickLife alone.

`--memory` reports peak resident memory instead of time (each run under GNU time,
/usr/bin/time): lifegen's HashLife against Golly's, with the nodes and bytes
lifegen says its tree holds.

`--suite beyond --gens 100000` is the HashLife issue's "beyond Golly" goal: Generations and
Larger-than-Life patterns, against the algorithm Golly runs their family with (Generations, a
HashLife of its own; Larger than Life, which has no tree), both columns that algorithm's.
"""

import argparse
import math
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402

# Guns, breeders, puffers, spacefillers, methuselahs, metacells, Golly's HashLife folder.
SUITE = [
    "Life/Guns/period-52-glider-gun.rle",
    "Life/Guns/vacuum-cleaner.rle",
    "Life/Guns/loafer-gun-p210.rle",
    "Life/Breeders/switch-engine-breeder.rle",
    "Life/Breeders/breeder.lif",
    "Life/Breeders/LWSS-breeder.rle",
    "Life/Breeders/spacefiller.rle",
    "Life/Breeders/c4-diag-switch-engines.rle",
    "Life/Breeders/one-cell-thick-quadratic-growth-2596x1.rle",
    "Life/Puffers/puffer-train.rle",
    "Life/Methuselahs/acorn.lif",
    "Life/Methuselahs/rabbits.lif",
    "Life/Methuselahs/iwona.rle",
    "Life/Methuselahs/lidka-predecessor.rle",
    "HashLife/Metacell/metapixel-galaxy.mc.gz",
    "HashLife/Metacell/metapixel-p216-gun.mc.gz",
    "HashLife/Eventful/catacryst.mc",
    "HashLife/Eventful/wedge-grow.mc",
    "HashLife/Eventful/ruler.mc",
    "HashLife/Eventful/unlimited-novelty.mc",
    "HashLife/Constructions/logarithmic-width.mc",
]


# The unbounded-plane issue's sparse suite: engineered patterns of every kind it names.
SPARSE = [
    "Life/Guns/period-52-glider-gun.rle",
    "Life/Guns/vacuum-cleaner.rle",
    "Life/Guns/loafer-gun-p210.rle",
    "Life/Breeders/switch-engine-breeder.rle",
    "Life/Breeders/breeder.lif",
    "Life/Breeders/c4-diag-switch-engines.rle",
    "Life/Puffers/puffer-train.rle",
    "Life/Puffers/puffer-2c5.rle",
    "Life/Puffers/line-puffer-unstable.rle",
    "Life/Methuselahs/acorn.lif",
    "Life/Methuselahs/rabbits.lif",
    "Life/Methuselahs/iwona.rle",
    "Life/Methuselahs/lidka-predecessor.rle",
    "Life/Guns/gun-p165mwss.rle",
    "Life/Spaceships/c4-orthogonal.rle",
    "Life/Spaceships/corderships.rle",
    "Life/Oscillators/p138.rle",
    "Life/Oscillators/traffic-light-hasslers.rle",
    "Life/Oscillators/honey-farm-hasslers.rle",
]


# The HashLife issue's "beyond Golly" suite: families Golly has no Life algorithm for.
BEYOND = [
    "Generations/transers.rle",
    "Generations/caterpillars.rle",
    "Generations/sawfish.rle",
    "Generations/p8009-gun.rle",
    "Generations/steeplechase.rle",
    "Generations/perfect-spiral.rle",
    "Generations/lava.rle",
    "Larger-than-Life/bosco.rle",
    "Larger-than-Life/bug-gun.rle",
    "Larger-than-Life/butterfly.rle",
    "Larger-than-Life/jitterbug.rle",
    "Larger-than-Life/slow-backrake.rle",
    "Larger-than-Life/soldier-bugs.rle",
    "Larger-than-Life/gun-collection.rle",
]


# GNU time prints a run's peak resident memory (KiB) after it; a Python parent would not do: a
# forked child's high-water mark keeps the parent's memory from before its exec.
TIME = "/usr/bin/time"


def peak_mib(text):
    found = re.search(r"^peak-kib: (\d+)", text or "", re.M)
    return int(found.group(1)) / 1024 if found else None


# Runs shorter than this are taken --best-of times: a whole process of a few milliseconds moves
# by half its time from one run to the next on a shared machine.
REPEAT_BELOW = 1.0


def timed(cmd, limit, memory=False, best_of=1):
    """Seconds and output of `cmd` (None, None past `limit`): the least of `best_of` runs when
    the first takes under REPEAT_BELOW seconds."""
    took, out = timed_once(cmd, limit, memory)
    if memory or took is None or out is None or out.startswith("error: "):
        return took, out
    for _ in range(best_of - 1):
        if took >= REPEAT_BELOW:
            break
        again, _ = timed_once(cmd, limit, memory)
        took = min(took, again if again is not None else took)
    return took, out


def timed_once(cmd, limit, memory):
    if memory:
        cmd = [TIME, "-f", "peak-kib: %M"] + cmd
    start = time.monotonic()
    # A session of its own, so a run past the limit goes with its children (GNU time's child
    # outlived a kill of time alone and took a core for the rest of the suite).
    run = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    try:
        stdout, stderr = run.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(run.pid, signal.SIGKILL)
        run.communicate()
        return None, None
    took = time.monotonic() - start
    if run.returncode != 0:
        return took, "error: " + (stderr.strip().splitlines() or ["?"])[-1]
    return took, stdout + stderr


def golly_run(bgolly, algo, gens, path, limit, memory=False, best_of=1):
    """Seconds and output of a bgolly run that printed its population; (None, None) else."""
    took, out = timed([bgolly, "-a", algo, "-m", str(gens), path], limit, memory, best_of)
    return (took, out) if golly_population(out) is not None else (None, None)


def golly_population(text):
    found = re.findall(r"^([\d,]+): ([\d,]+)\s*$", text or "", re.M)
    return int(found[-1][1].replace(",", "")) if found else None


def lifegen_population(text):
    found = re.search(r"^population: (\d+)", text or "", re.M)
    return int(found.group(1)) if found else None


def suite_runs(args):
    """(name, path, Golly's algorithm for the family or None, generations) for each run of the
    suite asked for; a missing file is said and skipped."""
    suite = {"hashlife": SUITE, "sparse": SPARSE, "beyond": BEYOND}[args.suite]
    for name in suite:
        path = os.path.join(args.patterns, name)
        if not os.path.exists(path):
            print("%-52s missing" % name)
            continue
        family = compare.classify(compare.file_rule(path))[1] if args.suite == "beyond" else None
        for gens in [int(g) for g in args.gens.split(",")]:
            yield name, path, family, gens


def lifegen_run(args, path, gens):
    """The lifegen command line for a run of `path` to `gens`, on one thread as bgolly runs."""
    algo = [] if args.algo == "auto" else ["--algo", args.algo]
    return [args.lifegen, "run", "--input", path, "--gens", str(gens), "--threads", "1"] + algo


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("patterns")
    ap.add_argument("--gens", default="1000,100000,10000000,1073741824")
    ap.add_argument("--limit", type=float, default=60)
    ap.add_argument("--quicklife-max", type=int, default=100000,
                    help="QuickLife only up to this horizon (it grows linearly in time)")
    ap.add_argument("--bgolly", default="target/golly/bgolly")
    ap.add_argument("--lifegen", default="target/release/lifegen")
    ap.add_argument("--suite", choices=["hashlife", "sparse", "beyond"], default="hashlife")
    ap.add_argument("--algo", default="hashlife", help="lifegen's --algo (auto: none given)")
    ap.add_argument("--against", choices=["best", "quicklife"], default="best",
                    help="the faster of Golly's HashLife and QuickLife, or QuickLife alone")
    ap.add_argument("--best-of", type=int, default=5,
                    help="each run under a second taken this many times, the least time kept "
                         "(both sides)")
    ap.add_argument("--memory", action="store_true",
                    help="peak memory of lifegen's HashLife against Golly's, not time")
    args = ap.parse_args()
    if args.memory:
        if not os.path.exists(TIME):
            sys.exit("--memory measures with GNU time, %s, which this machine lacks" % TIME)
        return memory_report(args)
    ratios = []
    slower = []
    print("%-52s %11s %9s %9s %9s %7s %s" % ("pattern", "gens", "golly HL", "golly QL",
                                          "lifegen", "ratio", "populations"))
    for name, path, family, gens in suite_runs(args):
        hl, hl_out = golly_run(args.bgolly, family or "HashLife", gens, path, args.limit,
                               best_of=args.best_of)
        ql, ql_out = (None, None)
        if family:
            ql, ql_out = hl, hl_out
        elif gens <= args.quicklife_max:
            ql, ql_out = golly_run(args.bgolly, "QuickLife", gens, path, args.limit,
                                   best_of=args.best_of)
        golly = [t for t in ((hl, ql) if args.against == "best" else (ql,)) if t is not None]
        if not golly:
            print("%-52s %11d  Golly takes over %.0f s: left out" % (name, gens, args.limit))
            continue
        mine, mine_out = timed(lifegen_run(args, path, gens), 10 * args.limit,
                               best_of=args.best_of)
        theirs = golly_population(hl_out) or golly_population(ql_out)
        ours = lifegen_population(mine_out)
        agree = "same" if theirs is not None and theirs == ours else \
            "DIFFERENT (Golly %s, lifegen %s)" % (theirs, ours)
        best = min(golly)
        ratio = (mine / best) if mine else float("inf")
        if mine:
            ratios.append(ratio)
        if ratio > 1:
            slower.append("%s at %d" % (name, gens))
        fmt = lambda t: "%9.4f" % t if t is not None else "  >limit"
        print("%-52s %11d %s %s %s %7.2f %s" % (name, gens, fmt(hl), fmt(ql), fmt(mine),
                                               ratio, agree))
        sys.stdout.flush()
    if ratios:
        mean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        against = "faster Golly" if args.against == "best" else "Golly's QuickLife"
        if args.suite == "beyond":
            against = "Golly's algorithm for the family"
        print("geometric mean of lifegen / %s: %.3f over %d runs" % (against, mean, len(ratios)))
    print("slower than Golly: %s" % (", ".join(slower) or "none"))


def memory_report(args):
    """Peak resident memory of lifegen and of Golly's HashLife on the suite, each horizon."""
    print("%-52s %11s %10s %10s %7s %s" % ("pattern", "gens", "golly MiB", "lifegen MiB",
                                          "ratio", "lifegen's tree"))
    ratios = []
    for name, path, family, gens in suite_runs(args):
        _, golly_out = golly_run(args.bgolly, family or "HashLife", gens, path, args.limit,
                                 memory=True)
        if golly_out is None:
            print("%-52s %11d  Golly takes over %.0f s: left out" % (name, gens, args.limit))
            continue
        _, mine_out = timed(lifegen_run(args, path, gens), 10 * args.limit, memory=True)
        theirs, ours = peak_mib(golly_out), peak_mib(mine_out)
        if theirs is None or ours is None:
            print("%-52s %11d  no peak (lifegen: %s)" % (name, gens, (mine_out or "")[-200:]))
            continue
        tree = re.search(r"(\d+) HashLife nodes \(([^)]*)\)", mine_out or "")
        ratios.append(ours / theirs)
        print("%-52s %11d %10.1f %10.1f %7.2f %s" % (
            name, gens, theirs, ours, ours / theirs,
            "%s nodes, %s" % tree.groups() if tree else "-"))
        sys.stdout.flush()
    if ratios:
        mean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print("geometric mean of lifegen's peak / Golly's: %.3f over %d runs; above Golly's: %d"
              % (mean, len(ratios), sum(r > 1 for r in ratios)))


if __name__ == "__main__":
    main()
