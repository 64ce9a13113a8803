#!/usr/bin/env bash
# Builds tether's binaries into DIR: tether-hook and tether-sweep, and with
# --standin the stand-in agent as "claude". install.sh and demo.sh both
# build through here, with the same flags, so that Go's build cache serves
# one what the other compiled. The first build compiles every dependency
# (about a minute on a small machine): it shows how far it has got.
#
#   bash scripts/build.sh DIR [--standin]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:?usage: build.sh DIR [--standin]}

if ! command -v go >/dev/null 2>&1; then
  echo "Go is needed to build tether, and there is no go command on PATH: install Go 1.26 or later (https://go.dev/dl), then run this again." >&2
  exit 1
fi

mkdir -p "$dest"
log=$(mktemp "${TMPDIR:-/tmp}/tether-build.XXXXXX")
trap 'rm -f "$log"' EXIT

# build OUT PKG: go build -v names each package it compiles, one a line: the
# count is the progress. Nothing compiled means the cache had it all.
# -buildvcs=auto overrides a GOFLAGS=-buildvcs=false of the environment: in a
# checkout, tether-sweep --version then names the commit it was built from.
build() {
  local out=$1 pkg=$2 n=0 waited=0
  (cd "$root" && exec go build -v -trimpath -buildvcs=auto -o "$out" "$pkg") 2>"$log" &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    waited=$((waited + 1))
    n=$(wc -l <"$log")
    if [ -t 1 ]; then
      printf '\r  building %s: %d packages compiled, %ds' "$(basename "$out")" "$n" "$waited"
    elif [ $((waited % 10)) -eq 0 ]; then
      echo "  building $(basename "$out"): $n packages compiled, ${waited}s"
    fi
  done
  [ -t 1 ] && printf '\r\033[K'
  if ! wait "$pid"; then
    echo "build of $pkg failed:" >&2
    grep -v '^[a-z0-9._/-]*$' "$log" >&2 || cat "$log" >&2
    exit 1
  fi
  n=$(wc -l <"$log")
  if [ "$n" -gt 0 ]; then
    echo "  built $(basename "$out"): $n packages compiled in ${waited}s"
  fi
}

build "$dest/tether-hook" ./cmd/hook
build "$dest/tether-sweep" ./cmd/sweep
if [ "${2:-}" = --standin ]; then
  build "$dest/claude" ./internal/standin
fi
