#!/usr/bin/env bash
# Builds tether-hook and tether-sweep from this checkout into a directory
# (default ~/.local/bin), side by side: the git hooks and agent configs that
# `tether-sweep install` writes point at them there.
#
#   bash scripts/install.sh [DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$HOME/.local/bin}
mkdir -p "$dest"
cd "$root"
go build -trimpath -o "$dest/tether-hook" ./cmd/hook
go build -trimpath -o "$dest/tether-sweep" ./cmd/sweep
echo "installed tether-hook and tether-sweep in $dest"
case ":$PATH:" in
  *":$dest:"*) ;;
  *) echo "note: $dest is not on your PATH" ;;
esac
echo "next: cd your-repo && tether-sweep install && tether-sweep doctor"
