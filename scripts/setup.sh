#!/usr/bin/env bash
# Installs what dreamer needs on a Debian machine: bubblewrap for the sandbox,
# and a virtual environment in .venv with dreamer itself (editable).
#   scripts/setup.sh          the runtime
#   scripts/setup.sh --test   the runtime plus what the tests use, including a real local
#                             model for tests/llm_local (scripts/local_model.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

echo "setup: 1/3 checking for bubblewrap (the sandbox)${1:+ and a C++ toolchain for the local model build}"
need_apt=()
command -v bwrap >/dev/null 2>&1 || need_apt+=(bubblewrap)
if [ "${1:-}" = "--test" ]; then
  # llama-cpp-python compiles llama.cpp when scripts/local_model.sh first builds it.
  command -v cmake >/dev/null 2>&1 || need_apt+=(cmake)
  { command -v g++ >/dev/null 2>&1 && command -v make >/dev/null 2>&1; } || need_apt+=(build-essential)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing ${need_apt[*]} from Debian" >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    echo "setup: please install ${need_apt[*]} (Debian: sudo apt-get install ${need_apt[*]})" >&2
    exit 1
  fi
fi

if [ -x .venv/bin/python ]; then
  echo "setup: 2/3 using the virtual environment in .venv"
else
  echo "setup: 2/3 making a virtual environment in .venv"
  python3 -m venv .venv
fi
extra=""
[ "${1:-}" = "--test" ] && extra="[test]"
echo "setup: 3/3 installing dreamer${extra:+ with its test tools} into .venv (pip, about a minute on a first run)"
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".${extra}"
# An editable install compiles nothing, and where PYTHONDONTWRITEBYTECODE is set (as on these machines)
# every kernel, sandboxed worker and CLI process compiled dreamer's sources anew at each start: a quarter
# of a kernel's start (docs/PERFORMANCE.md). Compiled once here, they are read; an edited file is still
# compiled afresh, since Python checks each source's time and size against its .pyc.
.venv/bin/python -m compileall -q -j 0 agents cli contracts gallery host kernel sdk sidekick web > /dev/null
if [ -n "$extra" ]; then
  # The tests/llm_local lane's model. A failed build does not stop the setup: the lane
  # then skips and names the reason this leaves in .venv/local-model-unavailable.
  rm -f .venv/local-model-unavailable
  if ! bash scripts/local_model.sh; then
    [ -s .venv/local-model-unavailable ] \
      || echo "scripts/local_model.sh failed at $(date -u +%FT%TZ); run it again to see why" > .venv/local-model-unavailable
    echo "setup: the local model could not be installed; tests/llm_local will skip (see .venv/local-model-unavailable)" >&2
  fi
  echo "setup: done. next: .venv/bin/python -m pytest -q   (or .venv/bin/dreamer up to start the kernel)"
else
  echo "setup: done. next: .venv/bin/dreamer up   (starts the kernel on http://127.0.0.1:8700 with the starter agents)"
fi
