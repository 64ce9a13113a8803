#!/usr/bin/env bash
# Builds tether-hook and tether-sweep from this checkout into a directory
# (default ~/.local/bin), side by side: the git hooks and agent configs that
# `tether-sweep install` writes point at them there.
#
#   bash scripts/install.sh [DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$HOME/.local/bin}

echo "building tether-hook and tether-sweep into $dest"
bash "$root/scripts/build.sh" "$dest"
echo "installed $dest/tether-hook and $dest/tether-sweep"
case ":$PATH:" in
  *":$dest:"*) ;;
  *)
    echo
    echo "$dest is not on your PATH. Add it for this shell, and to your shell's startup file for the next ones:"
    echo "  export PATH=\"$dest:\$PATH\""
    echo "  echo 'export PATH=\"$dest:\$PATH\"' >> ~/.bashrc    # or ~/.zshrc"
    ;;
esac
echo
echo "next: cd your-repo && tether-sweep install && tether-sweep doctor"
echo "shell completion: source <(tether-sweep completion bash)    # or zsh, fish"
