#!/usr/bin/env bash
# Rewrites README.md's `lifegen count` table with the command's own output (tests/count.rs
# checks they agree). Run after `cargo build --release`.
set -eu
table=$(target/release/lifegen count --markdown)
python3 - "$table" <<'PY'
import sys
start_marker = "B3/S23 (`lifegen count --markdown`):\n\n"
end_marker = "\nShifts per word"
text = open("README.md").read()
start = text.index(start_marker) + len(start_marker)
end = text.index(end_marker, start)
open("README.md", "w").write(text[:start] + sys.argv[1] + "\n" + text[end:])
PY
