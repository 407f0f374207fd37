#!/usr/bin/env python3
"""Golly's bgolly as an outside oracle for `lifegen run` (python3 standard library only).

For every rule x torus size x seed it writes a random soup as RLE (rule with a `:T<w>,<h>`
suffix), runs Golly's command-line simulator and `lifegen run` on it for each generation count,
reads both results back as sets of live cells on the torus, and reports IDENTICAL or the first
differing cells. The exit status is 1 when any case differs or fails, 0 otherwise. With
`--topology P` the same runs on bounded planes (`:P<w>,<h>`: cells past the edges dead at every
generation; the soup is written at the grid's full size, so both programs put it at the grid's
top-left corner), and with `--topology K*`, `K`, `K*+1`, `K+1`, `C` or `S` on Klein bottles
(`:Kw*,h`, `:Kw,h*`, `:Kw*+1,h`, `:Kw,h*+1`), cross-surfaces (`:Cw,h`) and spheres (`:Sw`, square
sizes only), written the same way; `--topology T+` and `T,+` run shifted tori (`:Tw+s,h`,
`:Tw,h+s`), s drawn for each case (either sign, up to twice the side, a whole turn included),
and check that both programs write back Golly's canonical suffix.

    scripts/golly/build-bgolly.sh /work/.mirror/jimblandy+golly/repo   # -> target/golly/bgolly
    cargo build --release                                              # -> target/release/lifegen
    scripts/golly/compare.py                                           # the built-in list
    scripts/golly/compare.py --rules 'B36/S23;R2,C0,M1,S3..5,B3..4,NN' --sizes 64x64,67x45 \
        --gens 1,7,64 --seeds 1,2 --backends reference,cpu[,gpu]
    scripts/golly/compare.py --topology P                               # bounded planes
    scripts/golly/compare.py --topology 'K*' --sizes 64x40,67x45       # a Klein bottle
    scripts/golly/compare.py --topology T+ --seeds 1,2,3                # shifted tori

Rules in --rules are separated by ';' (LtL rules contain commas). See docs/GOLLY.md.

How the two sides are run and aligned (read from Golly's source, see docs/GOLLY.md):

* Golly: `bgolly -a ALGO -m N -o out.rle soup.rle` (cmdline/bgolly.cpp). bgolly writes plain RLE
  (writepattern.cpp: writerle(..., xrle=false)): the live cells' bounding box and no
  `#CXRLE Pos=` line, so the box's top-left is taken from a second run of the same bgolly with a
  test script (`--exec`: `step 1` N times, then `edges`, `copy` of the whole grid and `showcut`),
  which prints the bounding box and every live cell in Golly's coordinates; the two must agree.
* Golly's torus `:Tw,h` spans x = -(w/2) .. -(w/2)+w-1 and y = -(h/2) .. (lifealgo::setgridsize,
  ltlalgo::create_grids; integer division, y grows downwards). An RLE of size wd x ht without a
  `#CXRLE Pos=` line is placed with its top-left at (-(wd/2), -(ht/2)) when it fits the grid
  (readpattern.cpp: readrle). lifegen puts the pattern's top-left at (0, 0). So Golly's cell
  (gx, gy) is lifegen's ((gx + wd/2) mod W, (gy + ht/2) mod H), W x H being the torus as both
  report it (Larger than Life raises sides below 2r to 2r: ltlalgo::setrule). The alignment is
  this fixed offset, never a search.
* B0 rules: Golly never runs a B0 rule as given (liferules::saveRule, ltlalgo::setup_b0_emulation).
  - B0 and Smax (Golly's test: the all-alive neighbourhood survives): Golly runs the dual rule
    NOT(f(NOT x)) on every generation, so what it shows is the complement of the rule's true
    evolution from the complemented pattern. The oracle gives Golly the complement of the soup
    and complements Golly's result.
  - B0 without Smax: Golly alternates NOT(f(x)) (from even generations) and f(NOT x) (from odd
    ones): what it shows at an even generation is the true state, at an odd generation the
    complement of it. The oracle complements Golly's result at odd generations.
  For Larger than Life, Golly's Smax test is survivals[maxn] in the rule's own count (with the
  centre for M1), which the oracle mirrors. Golly's LtL B0 emulation is wrong for M1 rules
  (docs/GOLLY.md, "Findings"), so by default Golly gets such a rule in its equivalent M0 form
  (--ltl-m1-b0 as-is shows the bug).
"""

import argparse
import hashlib
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The built-in list: every family lifegen runs today.
DEFAULT_RULES = [
    # life-like
    "B3/S23",
    "B36/S23",
    "B0/S8",            # B0 with Smax: Golly runs the dual rule (complemented input/output)
    "B01/S",            # B0 without Smax: Golly complements odd generations
    "B013/S2567",
    "B2/S",
    "B0123478/S01234678",  # AntiLife: B0 with Smax, the dual of B3/S23
    "B03/S23",
    # Larger than Life, two states
    "R5,C0,M1,S34..58,B34..45,NM",
    "R3,C0,M0,S2..6,B3..5,NN",
    "R2,C0,M1,S3..5,B3..4,NN",
    "R2,C2,M0,S2..4,B3..5,NC",
    "R3,C0,M1,S5..14,B6..9,NC",
    "R4,C0,M0,S20..40,B25..35,NM",
    "R4,C2,M1,S8..20,B10..14,NN",
    "R5,C0,M0,S20..40,B30..45,NC",
    "R2,C0,M0,S0..12,B0..6,NM",   # LtL B0 without Smax (M0)
    "R2,C0,M0,S10..24,B0..8,NM",  # LtL B0 with Smax (M0)
    "R2,C0,M1,S2..10,B0..5,NM",   # LtL B0 without Smax, M1: Golly gets the M0 form
    "R2,C0,M1,S5..13,B0..6,NN",   # LtL B0 with Smax, M1: Golly gets the M0 form
    # Generations (Golly's Generations algorithm) and Larger than Life with C > 2
    "/2/3",
    "345/2/4",
    "B3/S23/3",
    "B2a/S/5",
    "B2/S34/4H",
    "12/34/3V",
    "R2,C3,M1,S2..5,B3..4,NM",
    "R3,C5,M0,S2..6,B3..5,NN",
]

DEFAULT_SIZES = ["64x64", "67x45", "100x37", "1x37", "7x45"]
DEFAULT_GENS = [1, 7, 64]
DEFAULT_SEEDS = [1]
DEFAULT_BACKENDS = ["reference", "cpu"]

LTL_RE = re.compile(
    r"^R(\d+),C(\d+),M([01]),S(\d+)\.\.(\d+),B(\d+)\.\.(\d+),N([A-Z0-9@#+*])", re.IGNORECASE)
# HROT: R<r>,C<c>,S<list>,B<list>[,N<n>] (radius and states only: the oracle runs no B0 HROT)
HROT_RE = re.compile(r"^R(\d+),C(\d+),S[0-9,\-]*B", re.IGNORECASE)
BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


class CaseError(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# Rules: family, Golly algorithm, and how Golly emulates B0


def file_rule(path):
    """The rule a pattern file names (B3/S23 when it names none), as bgolly reads it."""
    import gzip
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", errors="replace") as f:
        text = f.read(200000)
    if path.endswith((".mc", ".mc.gz", ".lif")):
        m = re.search(r"^#R\s*(\S+)", text, re.M)
        return m.group(1) if m else "B3/S23"
    m = re.search(r"^\s*x\s*=.*rule\s*=\s*(\S+)", text, re.M | re.I)
    return m.group(1) if m else "B3/S23"


def strip_suffix(rule):
    return rule.split(":", 1)[0].strip()


def ltl_maxn(r, n):
    """Neighbours without the centre (ltlalgo::max_neighbors)."""
    n = n.upper()
    if n == "M":
        return (2 * r + 1) ** 2 - 1
    if n == "N":
        return 2 * r * (r + 1)
    if n in "+X":
        return 4 * r
    if n in "*#":
        return 8 * r
    if n == "H":
        return (2 * r + 1) ** 2 - r * (r + 1) - 1
    if n in "BD":
        return ((2 * r + 1) ** 2 - 1) // 2
    if n == "A":
        return 6 * r
    if n == "3":
        return 3 * r
    if n == "G":
        return (r + 1) ** 4
    if n in "C2":
        count = 0
        r2 = r * r + r if n == "C" else r * r
        for i in range(-r, r + 1):
            w = 0
            while (w + 1) * (w + 1) + i * i <= r2:
                w += 1
            count += 2 * w + 1
        return count - 1
    raise CaseError("neighbourhood N%s: the oracle knows the B0 emulation of every shape but "
                    "N@ and NW" % n)


def rule_states(rule):
    """States a cell of `rule` takes: Larger than Life's C (0, 1, 2: two), a Generations rule's
    number after its second slash, else 2."""
    body = strip_suffix(rule)
    m = LTL_RE.match(body) or HROT_RE.match(body)
    if m:
        return max(2, int(m.group(2)))
    if body[:3].upper() == "MAP":
        # base64 holds '/': the table is 86, 22 or 6 characters (optionally '=='), then /states
        m = re.match(r"^MAP(?:[A-Za-z0-9+/]{86}|[A-Za-z0-9+/]{22}|[A-Za-z0-9+/]{6})(?:==)?/(\d+)$",
                     body, re.IGNORECASE)
        return int(m.group(1)) if m else 2
    parts = re.split(r"[/_]", body)
    if len(parts) == 3:
        return int(re.sub(r"[HhVv]$", "", parts[2]))
    return 2


def classify(rule):
    """(family, golly_algorithm, b0_scheme) where b0_scheme is None, 'dual' or 'alternate'."""
    body = strip_suffix(rule)
    if HROT_RE.match(body):
        if re.search(r",B0", body, re.IGNORECASE):
            raise CaseError("HROT rules with B0: the oracle reads B0 in LtL notation only")
        return "ltl", "Larger than Life", None
    if rule_states(body) > 2 and not LTL_RE.match(body):
        # Generations refuses B0 (generationsalgo::setrule)
        return "generations", "Generations", None
    m = LTL_RE.match(body)
    if m:
        r, _c, mid, _s1, s2, b1, _b2, n = m.groups()
        r, mid, s1, s2, b1 = int(r), int(m.group(3)), int(m.group(4)), int(s2), int(b1)
        scheme = None
        if b1 == 0:
            maxn = ltl_maxn(r, n)
            # ltlalgo::setup_b0_emulation tests survivals[maxn], indexed by the rule's own count
            scheme = "dual" if s1 <= maxn <= s2 else "alternate"
        return "ltl", "Larger than Life", scheme
    if body[:3].upper() == "MAP":
        code = body[3:]
        if code.endswith("=="):
            code = code[:-2]
        nbits = {86: 512, 22: 128, 6: 32}.get(len(code))
        if nbits is None:
            raise CaseError("MAP rule of %d base64 characters" % len(code))
        bits = []
        for ch in code:
            v = BASE64.index(ch)
            bits.extend((v >> (5 - k)) & 1 for k in range(6))
        b0, smax = bits[0], bits[nbits - 1]
        return "life", "QuickLife", (None if not b0 else ("dual" if smax else "alternate"))
    # life-like: B.../S..., b3s23, S/B digits; optional H or V; Hensel letters allowed
    low = body.lower()
    nmax = 8
    if low.endswith("h"):
        nmax, low = 6, low[:-1]
    elif low.endswith("v"):
        nmax, low = 4, low[:-1]
    if "b" in low or "s" in low:
        mb = re.search(r"b([0-9a-z\-]*)", low)
        ms = re.search(r"s([0-9a-z\-]*)", low)
        births = mb.group(1) if mb else ""
        survivals = ms.group(1) if ms else ""
    elif "/" in low or "_" in low:
        survivals, births = re.split(r"[/_]", low, maxsplit=1)
    else:
        raise CaseError("cannot read rule %r" % rule)
    # a count is present when its digit appears; 0 and Smax take no letters
    b0 = "0" in births
    smax = str(nmax) in survivals
    return "life", "QuickLife", (None if not b0 else ("dual" if smax else "alternate"))


def golly_rule_for(rule, m1_b0):
    """The rule given to Golly. Golly's Larger than Life B0 emulation is wrong for M1 rules
    (ltlalgo::setup_b0_emulation indexes the survival list by the neighbour count without the
    centre, which only M0 lists are; docs/GOLLY.md, "Results"), so with m1_b0 == "m0" an M1 rule
    with B0 is given to Golly in its M0 form: S s1..s2 counted with the centre is S s1-1..s2-1
    without it (s1 >= 1 for M1), births unchanged (clamped to maxn)."""
    body = strip_suffix(rule)
    m = LTL_RE.match(body)
    if not m or m1_b0 != "m0":
        return body
    r, c, mid, s1, s2, b1, b2, n = m.groups()
    if mid != "1" or int(b1) != 0:
        return body
    maxn = ltl_maxn(int(r), n)
    return "R%s,C%s,M0,S%d..%d,B%d..%d,N%s%s" % (r, c, int(s1) - 1, int(s2) - 1, int(b1),
                                                min(int(b2), maxn), n, body[m.end():])


# ---------------------------------------------------------------------------------------------
# RLE


def parse_rle(text):
    """(header dict with x, y, rule; dict of the cells not dead, (x, y) relative to the top-left
    -> state: `o` and `A` are 1, `B`..`X` 2..24, `pA`..`yO` 25..255)."""
    info, runs = rle_runs(text)
    cells = {}
    for y, x, length, state in runs:
        for k in range(length):
            cells[(x + k, y)] = state
    return info, cells


def rle_runs(text):
    """(header dict, generator of the maximal runs of cells not dead, row by row, left to right:
    (y, x, length, state)), whatever runs the writer split or wrapped: a check of millions of
    cells holds none of them."""
    lines = text.splitlines()
    header = None
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        if not line or line.startswith("#"):
            continue
        header = line
        break
    if header is None:
        raise CaseError("RLE without a header line")
    hm = re.match(r"x\s*=\s*(\d+)\s*,\s*y\s*=\s*(\d+)(?:\s*,\s*rule\s*=\s*(\S+))?", header,
                  re.IGNORECASE)
    if not hm:
        raise CaseError("bad RLE header %r" % header)
    info = {"x": int(hm.group(1)), "y": int(hm.group(2)), "rule": hm.group(3) or ""}

    body = "".join(l.strip() for l in lines[i:])

    def tokens():
        x = y = 0
        n = 0
        j = 0
        while j < len(body):
            c = body[j]
            j += 1
            if c.isdigit():
                n = n * 10 + int(c)
                continue
            count = n or 1
            n = 0
            if c in "b.":
                x += count
            elif c == "$":
                x = 0
                y += count
            elif c == "!":
                return
            elif c == "o" or ("A" <= c <= "X") or ("p" <= c <= "y"):
                if c == "o":
                    state = 1
                elif "A" <= c <= "X":
                    state = ord(c) - ord("A") + 1
                else:
                    state = 24 * (ord(c) - ord("p") + 1) + ord(body[j]) - ord("A") + 1
                    j += 1
                yield y, x, count, state
                x += count
            elif c.isspace():
                continue
            else:
                raise CaseError("bad RLE character %r" % c)

    def merged():
        run = None
        for y, x, length, state in tokens():
            if run and run[0] == y and run[1] + run[2] == x and run[3] == state:
                run = (y, run[1], run[2] + length, state)
                continue
            if run:
                yield run
            run = (y, x, length, state)
        if run:
            yield run

    return info, merged()


TOPOLOGIES = ["T", "P", "K*", "K", "K*+1", "K+1", "C", "S", "T+", "T,+"]


def suffix_for(topology, w, h, shift=0):
    """The suffix of a w x h grid of `topology` (one of TOPOLOGIES: `K*` twists the top and
    bottom edges, `K` the left and right ones, `+1` shifts the twisted edges; `T+` shifts the
    top and bottom edges of a torus by `shift`, `T,+` the left and right ones), Golly's
    canonical one but for a torus's shift, written as given (`:T10+13,7`)."""
    if topology == "T+":
        return ":T%d%+d,%d" % (w, shift, h)
    if topology == "T,+":
        return ":T%d,%d%+d" % (w, h, shift)
    if topology == "S":
        return ":S%d" % w
    if topology.startswith("K"):
        shift = "+1" if topology.endswith("+1") else ""
        if topology.startswith("K*"):
            return ":K%d*%s,%d" % (w, shift, h)
        return ":K%d,%d*%s" % (w, h, shift)
    return ":%s%d,%d" % (topology, w, h)


def canonical_shifted(topology, w, h, shift):
    """Golly's canonical suffix of `suffix_for(topology, w, h, shift)` for `T+` and `T,+`
    (lifealgo::setgridsize keeps the sign and takes the size below the side; canonicalsuffix
    writes no shift of zero)."""
    side = w if topology == "T+" else h
    s = abs(shift) % side * (1 if shift > 0 else -1)
    if s == 0:
        return ":T%d,%d" % (w, h)
    return suffix_for(topology, w, h, s)


def case_shift(rule, w, h, seed, topology):
    """The shift of a `T+` or `T,+` case (the same for every run): either sign, of size 1 to
    twice the side, so that some cases are a whole turn and some past it."""
    rng = random.Random("shift|%s|%dx%d|%d|%s" % (rule, w, h, seed, topology))
    side = w if topology == "T+" else h
    return rng.choice([1, -1]) * rng.randint(1, 2 * side)


def grid_of(rule, topology):
    """The sides of the rule's suffix, which must be of `topology` (see suffix_for)."""
    m = re.search(r":([A-Z])(\d+)\*?(?:[+-]\d+)?(?:,(\d+)\*?(?:[+-]\d+)?)?$", rule)
    if not m or m.group(1) != topology[0]:
        raise CaseError("no :%s suffix in rule %r" % (topology, rule))
    w = int(m.group(2))
    return w, int(m.group(3)) if m.group(3) else w


def soup_cells(rule, w, h, seed, density):
    """The soup's cells not dead, (x, y) with 0 <= x < w, 0 <= y < h -> state (the same for
    every run): `density` of them alive and, with more than two states, `density` of the others
    dying, of every age."""
    rng = random.Random("%s|%dx%d|%d" % (rule, w, h, seed))
    states = rule_states(rule)
    cells = {}
    for y in range(h):
        for x in range(w):
            if rng.random() < density:
                cells[(x, y)] = 1
            elif states > 2 and rng.random() < density:
                cells[(x, y)] = rng.randrange(2, states)
    return cells


def state_letters(state, states):
    """A state as Golly writes it (writepattern.cpp:AddRun): b/o for two states, else . and
    A..X, pA..yO."""
    if states == 2:
        return "o" if state else "b"
    if state == 0:
        return "."
    if state <= 24:
        return chr(ord("A") + state - 1)
    high = (state - 25) // 24
    return chr(ord("p") + high) + chr(ord("A") + state - (high + 1) * 24 - 1)


def write_rle(path, rule, w, h, cells, topology="T", shift=0):
    """An RLE of size w x h whose rule carries the suffix of a w x h grid of `topology`
    (suffix_for, with `shift` for a shifted torus); runs within rows, lines <= 70. `cells` is a dict of states or, for two
    states, a set of live cells."""
    if isinstance(cells, set):
        cells = {c: 1 for c in cells}
    states = rule_states(rule)
    toks = []
    pending = 0
    for y in range(h):
        runs = []
        x = 0
        while x < w:
            v = cells.get((x, y), 0)
            e = x
            while e < w and cells.get((e, y), 0) == v:
                e += 1
            runs.append((e - x, state_letters(v, states)))
            x = e
        if runs and runs[-1][1] in "b.":
            runs.pop()
        if runs:
            if pending:
                toks.append("%s$" % (pending if pending > 1 else ""))
                pending = 0
            toks.extend("%s%s" % (n if n > 1 else "", t) for n, t in runs)
        pending += 1
    toks.append("!")
    out, line = [], ""
    for t in toks:
        if len(line) + len(t) > 70:
            out.append(line)
            line = ""
        line += t
    out.append(line)
    with open(path, "w") as f:
        f.write("x = %d, y = %d, rule = %s%s\n"
                % (w, h, strip_suffix(rule), suffix_for(topology, w, h, shift)))
        f.write("\n".join(out) + "\n")


def torus_for(rule, w, h):
    """The torus both programs make of `:Tw,h`: Larger than Life raises sides below 2r to 2r
    (ltlalgo::setrule: minsize = 2 * range)."""
    m = LTL_RE.match(strip_suffix(rule)) or HROT_RE.match(strip_suffix(rule))
    if m:
        r = int(m.group(1))
        return max(w, 2 * r), max(h, 2 * r)
    return w, h


# ---------------------------------------------------------------------------------------------
# Golly


def run_cmd(cmd, cwd, timeout):
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True, timeout=timeout)
    return p.returncode, p.stdout


def golly_exec(bgolly, algo, soup, gens_list, w, h, work, timeout):
    """Runs bgolly's test script once to max(gens); per generation: bounding box and cells.
    The copied square is wider than any torus here (Larger than Life may raise the size)."""
    half = max(w, h, 1024)
    gl, gt, gr, gb = -half, -half, half, half
    script = []
    done = 0
    for g in sorted(set(gens_list)):
        script += ["step 1"] * (g - done)
        done = g
        script += ["show", "edges", "copy %d %d %d %d" % (gl, gt, gr, gb),
                   "showcut"]
    spath = os.path.join(work, "script.txt")
    with open(spath, "w") as f:
        f.write("\n".join(script) + "\n")
    rc, out = run_cmd([bgolly, "-a", algo, "--exec", spath, soup], work, timeout)
    if rc != 0 or "Fatal error" in out or "Warning" in out:
        raise CaseError("bgolly --exec failed (rc %d): %s" % (rc, out.strip()[-400:]))
    result = {}
    lines = out.splitlines()
    i = 0
    order = sorted(set(gens_list))
    k = -1
    cur = None
    while i < len(lines):
        line = lines[i]
        i += 1
        # bigint::tostring() groups digits with commas: "1: 1,151"
        m = re.match(r"^([\d,]+): ([\d,]+)$", line)
        if m:
            m = [None, m.group(1).replace(",", ""), m.group(2).replace(",", "")]
        if m and cur is None and k + 1 < len(order) and int(m[1]) == order[k + 1]:
            # the `show` line of the next dump (the `step` lines before it print the same form)
            if i < len(lines) and lines[i].startswith("Bounding box"):
                k += 1
                cur = {"gen": int(m[1]), "pop": int(m[2])}
            continue
        if cur is not None and line.startswith("Bounding box"):
            # Coordinates past 999 carry commas too: "Bounding box -2,066 -48 .. 2,066 48".
            bm = re.match(r"Bounding box (-?[\d,]+) (-?[\d,]+) \.\. (-?[\d,]+) (-?[\d,]+)", line)
            cur["box"] = tuple(int(v.replace(",", "")) for v in bm.groups())
            continue
        if cur is not None and re.match(r"^\d+ pixels copied\.$", line):
            n = int(line.split()[0])
            cells = set()
            for _ in range(n):
                xs, ys = lines[i].split()
                i += 1
                cells.add((int(xs) + gl, int(ys) + gt))
            cur["cells"] = cells
            result[cur["gen"]] = cur
            cur = None
    for g in order:
        if g not in result:
            raise CaseError("bgolly --exec output lacks generation %d" % g)
        if result[g]["pop"] != len(result[g]["cells"]):
            raise CaseError("bgolly: population %d but %d cells copied at generation %d"
                            % (result[g]["pop"], len(result[g]["cells"]), g))
    return result


def golly_cli(bgolly, algo, soup, gens, work, timeout):
    out = os.path.join(work, "golly-%d.rle" % gens)
    if os.path.exists(out):
        os.remove(out)  # writepattern copies the comments of an existing file
    rc, log = run_cmd([bgolly, "-q", "-q", "-a", algo, "-m", str(gens), "-o", out, soup], work,
                      timeout)
    if rc != 0 or not os.path.exists(out) or "Fatal error" in log:
        raise CaseError("bgolly -m %d failed (rc %d): %s" % (gens, rc, log.strip()[-400:]))
    with open(out) as f:
        return parse_rle(f.read())


# ---------------------------------------------------------------------------------------------
# lifegen


def lifegen_run(lifegen, backend, soup, gens, work, timeout, extra):
    out = os.path.join(work, "lifegen-%s-%d.rle" % (backend, gens))
    if os.path.exists(out):
        os.remove(out)
    cmd = [lifegen, "run", "--input", soup, "--gens", str(gens), "--backend", backend,
           "--output", out] + extra
    rc, log = run_cmd(cmd, work, timeout)
    if rc != 0 or not os.path.exists(out):
        raise CaseError("lifegen failed (rc %d): %s" % (rc, log.strip()[-400:]))
    with open(out) as f:
        info, cells = parse_rle(f.read())
    return info, cells, log


# ---------------------------------------------------------------------------------------------


def fmt_cells(cells, limit=6):
    s = sorted(cells, key=lambda c: (c[1], c[0]))
    text = " ".join("(%d,%d)" % c for c in s[:limit])
    return text + (" ..." if len(s) > limit else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bgolly", default=os.path.join(ROOT, "target", "golly", "bgolly"))
    ap.add_argument("--lifegen", default=os.path.join(ROOT, "target", "release", "lifegen"))
    ap.add_argument("--rules", help="rules separated by ';' (default: the built-in list)")
    ap.add_argument("--sizes", default=",".join(DEFAULT_SIZES), help="WxH,WxH,...")
    ap.add_argument("--gens", default=",".join(map(str, DEFAULT_GENS)), help="N,N,...")
    ap.add_argument("--seeds", default=",".join(map(str, DEFAULT_SEEDS)), help="N,N,...")
    ap.add_argument("--density", type=float, default=0.5)
    ap.add_argument("--backends", default=",".join(DEFAULT_BACKENDS),
                    help="lifegen backends: reference,cpu,gpu (gpu: widths that are multiples "
                         "of 32; other sizes are reported SKIP)")
    ap.add_argument("--algo", default="auto",
                    help="Golly algorithm: auto (QuickLife for life-like rules, Larger than "
                         "Life for LtL), or a name such as HashLife")
    ap.add_argument("--ltl-m1-b0", choices=["m0", "as-is"], default="m0",
                    help="how Golly gets a Larger than Life M1 rule with B0: m0 (default: its "
                         "equivalent M0 form, working round Golly's M1 B0 emulation bug) or "
                         "as-is (shows the bug)")
    ap.add_argument("--topology", choices=TOPOLOGIES, default="T",
                    help="T: tori (default); P: bounded planes (`:Pw,h`, cells past the edges "
                         "dead; B0 rules are skipped: Golly's B0 emulation keeps the edges dead "
                         "in its complemented frame, alive in the rule's own); K*, K, K*+1, "
                         "K+1: Klein bottles (`:Kw*,h`, `:Kw,h*`, `:Kw*+1,h`, `:Kw,h*+1`); C: "
                         "cross-surfaces; S: spheres (square sizes only); T+, T,+: tori "
                         "whose top and bottom (left and right) edges are joined with a shift "
                         "(`:Tw+s,h`, `:Tw,h+s`), s drawn for each case")
    ap.add_argument("--lifegen-arg", action="append", default=[],
                    help="an extra argument for `lifegen run` (repeatable)")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per command")
    ap.add_argument("--keep", help="keep the soups and outputs in this directory")
    ap.add_argument("--quiet", action="store_true", help="print only differences and the summary")
    args = ap.parse_args()
    # The tools run from a scratch directory: a path given relative to here must still find them.
    args.bgolly = os.path.abspath(args.bgolly)
    args.lifegen = os.path.abspath(args.lifegen)

    for tool in (args.bgolly, args.lifegen):
        if not os.access(tool, os.X_OK):
            sys.exit("error: %s is not there (see the header of this script)" % tool)
    rules = [r.strip() for r in args.rules.split(";")] if args.rules else DEFAULT_RULES
    rules = [r for r in rules if r]
    sizes = []
    for s in args.sizes.split(","):
        w, _, h = s.lower().partition("x")
        sizes.append((int(w), int(h or w)))
    gens_list = [int(g) for g in args.gens.split(",")]
    seeds = [int(s) for s in args.seeds.split(",")]
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]

    commit = "unknown"
    cpath = args.bgolly + ".commit"
    if os.path.exists(cpath):
        commit = open(cpath).read().strip()
    topology = args.topology
    plane = topology == "P"
    # Every grid but a torus gets the soup at its full size (where a pattern lies matters).
    bounded = topology != "T"
    if topology == "S" and any(w != h for (w, h) in sizes):
        sys.exit("error: a sphere (:S) is square; give square --sizes")
    print("bgolly: %s (Golly commit %s)" % (args.bgolly, commit))
    shifted = topology in ("T+", "T,+")
    names = {"T": "tori", "P": "bounded planes", "C": "cross-surfaces", "S": "spheres",
             "T+": "shifted tori", "T,+": "shifted tori"}
    print("topology: %s (%s, for example)" % (names.get(topology, "Klein bottles"),
                                                 suffix_for(topology, 40, 40 if topology == "S" else 20, -3)))
    print("lifegen: %s" % args.lifegen)
    print("%-34s %-8s %4s %-9s %-16s %s" % ("rule", "size", "gens", "backend", "golly algo",
                                             "result"))

    work_root = args.keep or tempfile.mkdtemp(prefix="golly-compare-")
    os.makedirs(work_root, exist_ok=True)
    counts = {"IDENTICAL": 0, "DIFFERENT": 0, "ERROR": 0, "SKIP": 0}
    rows = []

    def report(rule, w, h, g, backend, algo, seed, result, detail=""):
        counts[result.split()[0]] += 1
        line = "%-34s %-8s %4d %-9s %-16s %s%s" % (
            rule, "%dx%d" % (w, h), g, backend, algo, result,
            ("  seed %d" % seed) + (("  " + detail) if detail else ""))
        rows.append(line)
        if not args.quiet or not result.startswith("IDENTICAL"):
            print(line, flush=True)

    for rule in rules:
        try:
            grule = golly_rule_for(rule, args.ltl_m1_b0)
            family, algo, scheme = classify(grule)
        except CaseError as e:
            print("%-34s ERROR %s" % (rule, e))
            counts["ERROR"] += 1
            continue
        if args.algo != "auto":
            algo = args.algo
        if grule != strip_suffix(rule):
            print("# Golly runs %s for %s" % (grule, rule))
        if plane and scheme:
            for (w, h) in sizes:
                for seed in seeds:
                    for g in gens_list:
                        for b in backends:
                            report(rule, w, h, g, b, algo, seed, "SKIP",
                                   "B0 on a bounded plane: Golly keeps the cells past the edges "
                                   "dead in its emulation's complemented frame")
            continue
        if algo == "HashLife" and scheme == "alternate":
            for (w, h) in sizes:
                for seed in seeds:
                    for g in gens_list:
                        for b in backends:
                            report(rule, w, h, g, b, algo, seed, "SKIP",
                                   "HashLife refuses B0 rules without Smax (hlifealgo::setrule)")
            continue
        for (w, h) in sizes:
            for seed in seeds:
                name = re.sub(r"[^A-Za-z0-9]+", "_", rule)
                if len(name) > 80:
                    # N@ and NW digits: a folder name has at most 255 bytes.
                    name = name[:60] + "_" + hashlib.sha1(rule.encode()).hexdigest()[:12]
                tag = name + "_%dx%d_s%d" % (w, h, seed)
                work = os.path.join(work_root, tag)
                os.makedirs(work, exist_ok=True)
                soup = os.path.join(work, "soup.rle")
                gsoup = os.path.join(work, "soup-golly.rle")
                W, H = torus_for(rule, w, h)
                live0 = soup_cells(rule, w, h, seed, args.density)
                shift = case_shift(rule, W, H, seed, topology) if shifted else 0
                try:
                    if bounded:
                        # Where a pattern lies in a plane (a Klein bottle, ...) matters: both
                        # get the whole W x H grid (Larger than Life raises sides below 2r), so
                        # that Golly centres the grid where lifegen has it, from (0, 0).
                        write_rle(soup, rule, W, H, live0, topology, shift)
                    else:
                        write_rle(soup, rule, w, h, live0)
                    if scheme == "dual":
                        # Golly runs NOT f NOT: give it the complement of lifegen's whole
                        # starting universe (W x H: the soup at (0, 0), dead cells elsewhere)
                        gw, gh = W, H
                        everything = {(x, y) for y in range(H) for x in range(W)}
                        write_rle(gsoup, grule, W, H, everything - set(live0), topology, shift)
                    elif bounded:
                        gw, gh = W, H
                        write_rle(gsoup, grule, W, H, live0, topology, shift)
                    else:
                        gw, gh = w, h
                        write_rle(gsoup, grule, w, h, live0)
                    dumps = golly_exec(args.bgolly, algo, gsoup, gens_list, gw, gh, work,
                                       args.timeout)
                except (CaseError, subprocess.TimeoutExpired) as e:
                    for g in gens_list:
                        for b in backends:
                            report(rule, w, h, g, b, algo, seed, "ERROR", str(e))
                    continue
                for g in gens_list:
                    try:
                        ginfo, gbox_states = golly_cli(args.bgolly, algo, gsoup, g, work,
                                                       args.timeout)
                        if grid_of(ginfo["rule"], topology) != (W, H):
                            raise CaseError("Golly's grid is %dx%d, expected %dx%d"
                                            % (grid_of(ginfo["rule"], topology) + (W, H)))
                        gsuffix = ":" + ginfo["rule"].partition(":")[2]
                        if shifted and gsuffix != canonical_shifted(topology, W, H, shift):
                            raise CaseError("Golly wrote %s for %s, expected %s"
                                            % (gsuffix, suffix_for(topology, W, H, shift),
                                               canonical_shifted(topology, W, H, shift)))
                        d = dumps[g]
                        # the -o RLE is the bounding box; place it with `edges`' top-left
                        if ginfo["x"] == 0:
                            gstates = {}
                        else:
                            left, top = d["box"][0], d["box"][1]
                            gstates = {(x + left, y + top): v
                                       for (x, y), v in gbox_states.items()}
                        if set(gstates) != d["cells"]:
                            raise CaseError("bgolly's -o output and its --exec cell list differ")
                        # Golly coordinates -> lifegen's (pattern top-left at (0, 0)): Golly
                        # put the gw x gh soup's top-left at (-(gw/2), -(gh/2))
                        ox, oy = gw // 2, gh // 2
                        expect = {((x + ox) % W, (y + oy) % H): v
                                  for (x, y), v in gstates.items()}
                        if len(expect) != len(gstates):
                            raise CaseError("Golly cells outside its torus")
                        if bounded and any(not (0 <= x + ox < W and 0 <= y + oy < H)
                                           for (x, y) in gstates):
                            raise CaseError("Golly cells outside its grid")
                        if scheme == "dual" or (scheme == "alternate" and g % 2 == 1):
                            expect = {(x, y): 1 for y in range(H) for x in range(W)
                                      if (x, y) not in expect}
                    except (CaseError, subprocess.TimeoutExpired) as e:
                        for b in backends:
                            report(rule, w, h, g, b, algo, seed, "ERROR", str(e))
                        continue
                    for b in backends:
                        try:
                            linfo, lcells, _log = lifegen_run(args.lifegen, b, soup, g, work,
                                                              args.timeout, args.lifegen_arg)
                        except (CaseError, subprocess.TimeoutExpired) as e:
                            report(rule, w, h, g, b, algo, seed, "ERROR", str(e))
                            continue
                        lsuffix = ":" + linfo["rule"].partition(":")[2]
                        if shifted and lsuffix != gsuffix:
                            report(rule, w, h, g, b, algo, seed, "DIFFERENT",
                                   "suffix: Golly %s, lifegen %s" % (gsuffix, lsuffix))
                            continue
                        if (linfo["x"], linfo["y"]) != (W, H):
                            report(rule, w, h, g, b, algo, seed, "DIFFERENT",
                                   "torus: Golly %dx%d, lifegen %dx%d"
                                   % (W, H, linfo["x"], linfo["y"]))
                            continue
                        if lcells == expect:
                            report(rule, w, h, g, b, algo, seed, "IDENTICAL",
                                   "pop %d%s%s" % (len(lcells),
                                                   (" b0:" + scheme) if scheme else "",
                                                   (" %s -> %s" % (suffix_for(topology, W, H,
                                                                              shift), lsuffix))
                                                   if shifted else ""))
                        else:
                            only_g = {c for c, v in expect.items() if lcells.get(c) != v}
                            only_l = {c for c, v in lcells.items() if expect.get(c) != v}
                            report(rule, w, h, g, b, algo, seed,
                                   "DIFFERENT (%d cells)" % (len(only_g) + len(only_l)),
                                   "cells Golly has otherwise: %s; cells lifegen has otherwise: %s "
                                   "(lifegen coordinates)" % (fmt_cells(only_g),
                                                              fmt_cells(only_l)))
    print()
    print("cases: %d identical, %d different, %d errors, %d skipped"
          % (counts["IDENTICAL"], counts["DIFFERENT"], counts["ERROR"], counts["SKIP"]))
    if not args.keep:
        shutil.rmtree(work_root, ignore_errors=True)
    sys.exit(1 if counts["DIFFERENT"] or counts["ERROR"] else 0)


if __name__ == "__main__":
    main()
