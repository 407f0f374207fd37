#!/usr/bin/env python3
"""Golly's Patterns collection on the unbounded plane: every .rle and .mc file whose rule names no
bounded grid (or one bounded along one side only, a tube like `:T0,68`), run as a user runs it (`lifegen run --input F --gens G --output out.rle`, no other
option) and by bgolly (the algorithm Golly picks for the rule's family), compared cell for cell at
Golly's coordinates after each generation count.

    scripts/golly/build-bgolly.sh /work/.mirror/jimblandy+golly/repo     # -> target/golly/bgolly
    git --git-dir=/work/.mirror/jimblandy+golly/repo archive HEAD Patterns | tar x -C /tmp/golly
    cargo build --release
    scripts/golly/plane-check.py /tmp/golly/Patterns [--gens 100,1000] [--backend cpu] [--algo hashlife]

`--golly-cache DIR` keeps Golly's answers (by the file's bytes, the algorithm and the generation
count), so a second backend's check, or one on a machine without bgolly (the GPU hosts), reads
them instead of running bgolly again; `--jobs N` checks N files at once.

Golly's side: `bgolly -o` writes the live cells' box as plain RLE (no position), and a test script
(`--exec`: `step G`, or `step 1` G times on a tube, `show`, `edges`) prints the box's corners on
Golly's plane; the two place Golly's cells. lifegen's side: its RLE's `#CXRLE Pos=x,y` and its cells. Each file is
IDENTICAL, DIFFERENT, REFUSED (lifegen says why; listed) or SKIPPED (grids bounded on both sides,
rules bgolly cannot run); the exit status is 1 when any differs.
"""

import argparse
import concurrent.futures
import gzip
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402


class Cells:
    """A side's live cells at Golly's coordinates: its RLE file (None for no cells) and the offset
    of the RLE's top-left. Two sides whose RLE header sizes, bodies (whitespace aside) and offsets
    agree hold the same cells: that is decided on a digest of each body taken as its file streams,
    with its cells counted on the way, so neither file is held (a metacell's RLE at 2^20 is 3 GB;
    holding the texts took the harness to 15 GB on the third metacell). Otherwise they are counted
    and hashed run by run, and expanded only to show where two sides differ."""

    def __init__(self, path, x0, y0):
        self.path, self.x0, self.y0 = path, x0, y0
        self._body = None
        self._runs = None

    def text(self):
        if self.path is None:
            return None
        with open(self.path) as f:
            return f.read()

    def body(self):
        """(header's width and height, digest of the body without whitespace, cells not dead)."""
        if self._body is None:
            self._body = body_summary(self.path) if self.path is not None else (None, None, 0)
        return self._body

    def runs_summary(self):
        """(cells, digest of the runs at Golly's coordinates), walked once."""
        if self._runs is None:
            digest = hashlib.sha256()
            count = 0
            text = self.text()
            if text is not None:
                for y, x, length, state in compare.rle_runs(text)[1]:
                    digest.update(b"%d %d %d %d\n" % (x + self.x0, y + self.y0, length, state))
                    count += length
            self._runs = (count, digest.hexdigest())
        return self._runs

    @property
    def count(self):
        return self.body()[2]

    def __eq__(self, other):
        if (self.body()[:2], self.x0, self.y0) == (other.body()[:2], other.x0, other.y0):
            return True
        return self.runs_summary() == other.runs_summary()

    def cells(self):
        text = self.text()
        if text is None:
            return {}
        _, cells = compare.parse_rle(text)
        return {(x + self.x0, y + self.y0): s for (x, y), s in cells.items()}


# The last character of an RLE token: a run of dead cells, of live ones, a row's end, the end.
TOKEN_END = re.compile(r"[bo$!.A-X][^bo$!.A-X]*$")


def body_summary(path, piece=1 << 24):
    """(header's width and height, SHA-256 of the body without whitespace, cells not dead) of an
    RLE file, read a piece at a time."""
    digest, live, carry, size = hashlib.sha256(), 0, "", None
    with open(path) as f:
        while True:
            line = f.readline()
            if not line:
                break
            line = line.strip()
            if line and not line.startswith("#"):
                m = re.match(r"x\s*=\s*(\d+)\s*,\s*y\s*=\s*(\d+)", line)
                size = m.groups() if m else line
                break
        while True:
            text = f.read(piece)
            if not text:
                break
            text = re.sub(r"\s+", "", text)
            digest.update(text.encode())
            # Count whole tokens only: a run's count or a state's prefix may go on in the next.
            text = carry + text
            end = TOKEN_END.search(text)
            cut = end.start() + 1 if end else 0
            live += live_in_body(text[:cut])
            carry = text[cut:]
    return size, digest.hexdigest(), live + live_in_body(carry)


def live_in_body(body):
    """Cells not dead in an RLE body: the run counts of its live tokens (`o`, `A`..`X`, `pA`..)."""
    return sum(int(n or 1) for n in re.findall(r"(\d*)(?:o|[p-y]?[A-X])", body))


# Cells a side may hold when the two differ and the check shows some of the difference.
SHOWN_BELOW = 2_000_000


def golly_cells_cached(cache, bgolly, algo, path, gens, work, timeout):
    """Golly's cells, from `cache` (a folder, or None) when an earlier check of the same file's
    bytes, algorithm and generation count put them there: Golly's answer does not depend on
    which of lifegen's backends is checked, and a machine without bgolly can check with it. An
    entry is Golly's RLE gzipped and its place (`.rle.gz`, `.json`); the first form kept both in
    one JSON (`.json.gz`), still read."""
    if cache is None:
        return golly_cells(bgolly, algo, path, gens, work, timeout)
    with open(path, "rb") as f:
        key = "%s-%s-%d" % (hashlib.sha256(f.read()).hexdigest()[:32], algo.replace(" ", "-"),
                            gens)
    stored, place, first_form = (os.path.join(cache, key + end)
                                 for end in (".rle.gz", ".json", ".json.gz"))
    out = os.path.join(work, "golly.rle")
    if os.path.exists(place):
        with open(place) as f:
            kept = json.load(f)
        if kept["empty"]:
            return Cells(None, 0, 0)
        with gzip.open(stored, "rb") as f, open(out, "wb") as to:
            shutil.copyfileobj(f, to, 1 << 24)
        return Cells(out, kept["x0"], kept["y0"])
    if os.path.exists(first_form):
        with gzip.open(first_form, "rt") as f:
            kept = json.load(f)
        if kept["rle"] is None:
            return Cells(None, 0, 0)
        with open(out, "w") as to:
            to.write(kept["rle"])
        return Cells(out, kept["x0"], kept["y0"])
    if not os.path.exists(bgolly):
        raise compare.CaseError("Golly's cells are not in %s and there is no bgolly at %s"
                                % (cache, bgolly))
    cells = golly_cells(bgolly, algo, path, gens, work, timeout)
    os.makedirs(cache, exist_ok=True)
    partial = ".%d.tmp" % os.getpid()
    if cells.path is not None:
        with open(cells.path, "rb") as f, gzip.open(stored + partial, "wb") as to:
            shutil.copyfileobj(f, to, 1 << 24)
        os.replace(stored + partial, stored)
    with open(place + partial, "w") as f:
        json.dump({"empty": cells.path is None, "x0": cells.x0, "y0": cells.y0}, f)
    os.replace(place + partial, place)
    return cells


def golly_cells(bgolly, algo, path, gens, work, timeout):
    out = os.path.join(work, "golly.rle")
    if os.path.exists(out):
        os.remove(out)
    rc, log = compare.run_cmd([bgolly, "-q", "-q", "-a", algo, "-m", str(gens), "-o", out, path],
                              work, timeout)
    if rc != 0 or not os.path.exists(out) or "Fatal error" in log:
        raise compare.CaseError("bgolly -m %d failed (rc %d): %s" % (gens, rc, log.strip()[-300:]))
    cells = Cells(out, 0, 0)
    if cells.count == 0:
        return Cells(None, 0, 0)
    script = os.path.join(work, "script.txt")
    # `step N` advances N generations at once; on a grid (a tube) bgolly steps one a command.
    bounded = ":" in compare.file_rule(path)
    with open(script, "w") as f:
        f.write(("step 1\n" * gens if bounded else "step %d\n" % gens) + "show\nedges\n")
    rc, log = compare.run_cmd([bgolly, "-a", algo, "--exec", script, path], work, timeout)
    m = re.search(r"Bounding box (-?[\d,]+) (-?[\d,]+) \.\.", log)
    if not m:
        raise compare.CaseError("bgolly --exec printed no bounding box: %s" % log.strip()[-300:])
    # Placed where Golly's box puts it; its body, read once for the count above, is kept.
    cells.x0, cells.y0 = (int(v.replace(",", "")) for v in m.groups())
    return cells


def lifegen_cells(lifegen, backend, algo, path, gens, work, timeout):
    out = os.path.join(work, "lifegen.rle")
    if os.path.exists(out):
        os.remove(out)
    cmd = [lifegen, "run", "--input", path, "--gens", str(gens), "--output", out]
    if backend:
        cmd += ["--backend", backend]
    if algo:
        cmd += ["--algo", algo]
    rc, log = compare.run_cmd(cmd, work, timeout)
    if rc != 0 or not os.path.exists(out):
        return None, log.strip().splitlines()[-1] if log.strip() else "rc %d" % rc
    x0, y0 = 0, 0
    with open(out) as f:
        for line in iter(f.readline, ""):
            if not line.startswith("#"):
                break
            m = re.match(r"#CXRLE Pos=(-?\d+),(-?\d+)", line)
            if m:
                x0, y0 = int(m.group(1)), int(m.group(2))
    return Cells(out, x0, y0), None


def check_file(args, bgolly, lifegen, gens, path):
    """The verdict on one file and the line that says it."""
    work = tempfile.mkdtemp(prefix="plane-check-")
    try:
        return check_in(args, bgolly, lifegen, gens, path, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def check_in(args, bgolly, lifegen, gens, path, work):
    name = os.path.relpath(path, args.patterns)
    rule = compare.file_rule(path)
    verdicts = []
    # A grid bounded along one side only (:T0,68, a tube) runs on the plane's engines.
    strip = re.search(r":[TP](0,\d+|\d+,0)$", rule)
    if ":" in rule and not strip:
        verdicts.append(("SKIPPED", "bounded grid %s (compare.py covers grids)" % rule))
    else:
        try:
            _, algo, _ = compare.classify(rule.split(":")[0])
            # Only HashLife reads macrocell files.
            if path.endswith((".mc", ".mc.gz")) and algo == "QuickLife":
                algo = "HashLife"
        except compare.CaseError as e:
            algo = None
            verdicts.append(("SKIPPED", "rule %s: %s" % (rule, e)))
        except Exception:
            algo = None
            verdicts.append(("SKIPPED", "rule %s: not read by the oracle" % rule))
        for g in gens if algo else []:
            try:
                mine, refused = lifegen_cells(lifegen, args.backend, args.algo, path, g, work,
                                              args.timeout)
                if refused:
                    verdicts = [("REFUSED", refused)]
                    break
                theirs = golly_cells_cached(args.golly_cache, bgolly, algo, path, g, work,
                                            args.timeout)
            except compare.CaseError as e:
                verdicts.append(("SKIPPED", "gen %d: %s" % (g, e)))
                continue
            except Exception as e:  # a timeout
                verdicts.append(("ERROR", "gen %d: %s" % (g, e)))
                continue
            if mine == theirs:
                verdicts.append(("IDENTICAL", "gen %d, %d cells" % (g, mine.count)))
            elif max(mine.count, theirs.count) > SHOWN_BELOW:
                verdicts.append(("DIFFERENT", "gen %d: %d against Golly's %d cells"
                                 % (g, mine.count, theirs.count)))
            else:
                mine_cells, theirs_cells = mine.cells(), theirs.cells()
                only_mine = sorted(set(mine_cells.items()) - set(theirs_cells.items()))[:3]
                only_theirs = sorted(set(theirs_cells.items()) - set(mine_cells.items()))[:3]
                verdicts.append(("DIFFERENT", "gen %d: %d against Golly's %d cells; only "
                                 "lifegen %s, only Golly %s" % (g, mine.count, theirs.count,
                                                                only_mine, only_theirs)))
    worst = next((v for v in ("ERROR", "DIFFERENT", "REFUSED", "SKIPPED") if
                  any(k == v for k, _ in verdicts)), "IDENTICAL")
    return worst, "%-9s %s: %s" % (worst, name, "; ".join(d for _, d in verdicts))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("patterns")
    ap.add_argument("--gens", default="100,1000")
    ap.add_argument("--backend", default="", help="lifegen's --backend (default: none given)")
    ap.add_argument("--algo", default="", help="lifegen's --algo (default: none given)")
    ap.add_argument("--bgolly", default="target/golly/bgolly")
    ap.add_argument("--lifegen", default="target/release/lifegen")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--golly-cache", help="a folder keeping Golly's cells between checks (no "
                    "bgolly needed where they are all there)")
    ap.add_argument("--jobs", type=int, default=1, help="files checked at once")
    args = ap.parse_args()
    bgolly, lifegen = os.path.abspath(args.bgolly), os.path.abspath(args.lifegen)
    gens = [int(g) for g in args.gens.split(",")]
    # The runs' working folders are elsewhere.
    args.patterns = os.path.abspath(args.patterns)
    if args.golly_cache:
        args.golly_cache = os.path.abspath(args.golly_cache)
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(args.patterns) for f in fs
                   if f.endswith((".rle", ".mc", ".rle.gz", ".mc.gz", ".lif", ".cells")))
    counts = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        verdicts = pool.map(lambda path: check_file(args, bgolly, lifegen, gens, path), files)
        for worst, line in verdicts:
            counts[worst] = counts.get(worst, 0) + 1
            print(line, flush=True)
    print("totals: " + ", ".join("%s %d" % kv for kv in sorted(counts.items())))
    sys.exit(1 if counts.get("DIFFERENT") or counts.get("ERROR") else 0)


if __name__ == "__main__":
    main()
