#!/usr/bin/env bash
# mypy over sdk/, contracts/ and kernel/ as the dreamer.<folder> packages they are installed as.
# setup.py maps each folder to dreamer.<folder>; mypy cannot follow the editable install's
# import hook, so it reads a dreamer/ tree of symbolic links to the folders instead.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
tree="${DREAMER_TYPECHECK_DIR:-$root/.typecheck}"
mkdir -p "$tree/dreamer"
for folder in contracts sdk kernel sidekick web gallery cli agents host; do
  ln -sfn "$root/$folder" "$tree/dreamer/$folder"
done
MYPYPATH="$tree" exec .venv/bin/python -m mypy --cache-dir "$tree/.mypy_cache" -p dreamer.contracts -p dreamer.sdk -p dreamer.kernel "$@"
