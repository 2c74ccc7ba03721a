#!/usr/bin/env bash
# Build Oblige 7.70 (the level generator seed 001 uses) into .oblige/ for golem-procgen's `oblige` backend.
#   - Debian's libfltk1.3-dev (installed here when running as root with apt-get);
#   - the C++ source from the `oblige` 0.1.3 sdist on PyPI (PyOblige), pinned by version and SHA-256;
#   - modern g++ refuses std::swap on packed struct fields: those calls become a swap through a temporary.
# Result: .oblige/Oblige_src/Oblige plus its scripts, games, engines, modules and data folders.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DEST="$ROOT/.oblige"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
[ -x "$PYTHON" ] || PYTHON=python3
if [ -x "$DEST/Oblige_src/Oblige" ]; then echo "oblige: already built at $DEST/Oblige_src/Oblige"; exit 0; fi
if ! ldconfig -p 2>/dev/null | grep -q 'libfltk\.so'; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq libfltk1.3-dev >/dev/null 2>&1 || { apt-get update -qq >/dev/null && apt-get install -y -qq libfltk1.3-dev >/dev/null; }
  else
    echo "oblige: needs Debian's libfltk1.3-dev: sudo apt-get install -y libfltk1.3-dev" >&2; exit 1
  fi
fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
"$PYTHON" -m pip download --disable-pip-version-check -q --no-deps --no-binary :all: oblige==0.1.3 -d "$WORK"
# the sdist's SHA-256 as PyPI publishes it: a different file is refused before anything is compiled
SHA256=9662a89719662feeb629335fcad16ff011da5a9f2a85dbbba063435e7ce46279
echo "$SHA256  $WORK/oblige-0.1.3.tar.gz" | sha256sum -c --quiet - \
  || { echo "oblige: oblige-0.1.3.tar.gz does not have the pinned SHA-256 $SHA256; not building" >&2; exit 1; }
tar xzf "$WORK"/oblige-0.1.3.tar.gz -C "$WORK"
SRC="$WORK/oblige-0.1.3/pyoblige/Oblige_src"
for f in gui/csg_clip.cc gui/g_quake.cc gui/g_quake2.cc gui/g_quake3.cc; do
  sed -E -i 's/std::swap\(([A-Za-z_]+)\.children\[0\], *([A-Za-z_]+)\.children\[1\]\);/{ auto swap_tmp_ = \1.children[0]; \1.children[0] = \2.children[1]; \2.children[1] = swap_tmp_; }/' "$SRC/$f"
done
if grep -q 'std::swap([a-z_]*\.children' "$SRC"/gui/*.cc; then echo "oblige: the std::swap patch did not apply" >&2; exit 1; fi
echo "oblige: compiling (about two minutes)"
make -C "$SRC" -f Makefile -j"$(nproc)" >"$WORK/build.log" 2>&1 || { tail -20 "$WORK/build.log" >&2; exit 1; }
mkdir -p "$DEST"
rm -rf "$DEST/Oblige_src"
cp -r "$SRC" "$DEST/Oblige_src"
echo "oblige: built $DEST/Oblige_src/Oblige"
