#!/usr/bin/env bash
# Build Golly's command-line simulator `bgolly` with g++ alone (no make, no cmake, no wxWidgets).
#
#   scripts/golly/build-bgolly.sh GOLLY_SRC [OUT_DIR]
#
# GOLLY_SRC is one of
#   - a Golly source tree (a directory holding gollybase/ and cmdline/), or
#   - a git directory of Golly's repository, bare (e.g. the mirror
#     /work/.mirror/jimblandy+golly/repo) or not: its HEAD (or $GOLLY_REV if set) is extracted
#     with `git archive` into OUT_DIR/src first.
# OUT_DIR defaults to ./target/golly. The result is OUT_DIR/bgolly; OUT_DIR/bgolly.commit holds the
# Golly commit it was built from ("unknown" for a plain source tree outside git).
#
# Needs: bash, g++ (C++11 or later; tested with Debian's g++ 12.2), git (only for a git dir), and
# optionally zlib's header and library (Debian package zlib1g-dev): when <zlib.h> compiles, the
# build adds -DZLIB and -lz (Golly then also reads/writes .rle.gz/.mc.gz); without it bgolly is
# built without gzip support, which the oracle does not need. Nothing is downloaded or installed.
#
# The flags are those of Golly's gui-wx/makefile-gtk for bgolly: -DVERSION=<x> -D_FILE_OFFSET_BITS=64
# -D_LARGE_FILES -I gollybase -O3 -fno-strict-aliasing [-DZLIB ... -lz]. bgolly links every
# gollybase/*.cpp (the makefile's BASEOBJ list is exactly those files) and cmdline/bgolly.cpp.
# JOBS (default 2) sets how many files compile at once.
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 GOLLY_SRC_DIR|GOLLY_GIT_DIR [OUT_DIR]" >&2
    exit 2
fi
SRC=$1
OUT=${2:-target/golly}
JOBS=${JOBS:-2}
CXX=${CXX:-g++}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

commit=unknown
if [ -d "$SRC/gollybase" ] && [ -d "$SRC/cmdline" ]; then
    TREE=$(cd "$SRC" && pwd)
    # the tree's commit only when the tree is itself the top of a git work tree
    if [ "$(git -C "$TREE" rev-parse --show-toplevel 2>/dev/null)" = "$TREE" ]; then
        commit=$(git -C "$TREE" rev-parse HEAD)
    fi
elif git --git-dir="$SRC" rev-parse --verify -q "${GOLLY_REV:-HEAD}^{commit}" >/dev/null 2>&1 \
     || git --git-dir="$SRC/.git" rev-parse --verify -q "${GOLLY_REV:-HEAD}^{commit}" >/dev/null 2>&1; then
    GITDIR=$SRC
    [ -d "$SRC/.git" ] && GITDIR=$SRC/.git
    commit=$(git --git-dir="$GITDIR" rev-parse "${GOLLY_REV:-HEAD}^{commit}")
    TREE=$OUT/src
    rm -rf "$TREE"
    mkdir -p "$TREE"
    git --git-dir="$GITDIR" archive "$commit" gollybase cmdline | tar -x -C "$TREE"
else
    echo "error: $SRC is neither a Golly source tree (gollybase/, cmdline/) nor a git directory" >&2
    exit 1
fi

# Golly's version, for bgolly's banner line: APP_VERSION in gui-wx/makefile-gtk when present.
VERSION=5.0
if [ -n "${GITDIR:-}" ]; then
    v=$(git --git-dir="$GITDIR" show "$commit:gui-wx/makefile-gtk" 2>/dev/null \
        | sed -n 's/^APP_VERSION *= *//p' | head -1 || true)
    [ -n "$v" ] && VERSION=$v
elif [ -f "$TREE/gui-wx/makefile-gtk" ]; then
    v=$(sed -n 's/^APP_VERSION *= *//p' "$TREE/gui-wx/makefile-gtk" | head -1)
    [ -n "$v" ] && VERSION=$v
fi

ZFLAGS=()
ZLIBS=()
if printf '#include <zlib.h>\nint main(){return zlibVersion()==0;}\n' \
   | "$CXX" -x c++ - -o "$OUT/.zlibtest" -lz >/dev/null 2>&1; then
    ZFLAGS=(-DZLIB)
    ZLIBS=(-lz)
    echo "zlib: found (-DZLIB -lz)"
else
    echo "zlib: not found (Debian: apt-get install zlib1g-dev); building without gzip support"
fi
rm -f "$OUT/.zlibtest"

CXXFLAGS=(-DVERSION="$VERSION" -D_FILE_OFFSET_BITS=64 -D_LARGE_FILES -I"$TREE/gollybase"
          -O3 -Wall -Wno-non-virtual-dtor -fno-strict-aliasing -w "${ZFLAGS[@]}")
OBJ=$OUT/obj
mkdir -p "$OBJ"
rm -f "$OBJ"/*.o
export CXX OBJ
printf '%s\n' "$TREE"/gollybase/*.cpp "$TREE"/cmdline/bgolly.cpp \
    | xargs -P "$JOBS" -I{} sh -c 'f="{}"; b=$(basename "$f" .cpp); echo "  CXX $b.cpp"; "$CXX" "$@" -c -o "$OBJ/$b.o" "$f"' sh "${CXXFLAGS[@]}"
"$CXX" -o "$OUT/bgolly" "$OBJ"/*.o "${ZLIBS[@]}"
echo "$commit" > "$OUT/bgolly.commit"
echo "built $OUT/bgolly from Golly commit $commit (VERSION=$VERSION)"
"$OUT/bgolly" 2>&1 </dev/null | head -1 || true
