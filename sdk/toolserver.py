"""Start a tool bundle's stdio MCP server inside the sandbox: `python -m dreamer.sdk.toolserver MODULE [ARGS]`.

The kernel runs a manifest's `server: {command: [python, -m, MODULE, ...]}` through this
launcher, so the bundle (read-only at /agent) is importable while the interpreter
still starts with -S (no site hooks) like every worker.
"""

from __future__ import annotations

import os
import runpy
import sys


def main() -> None:
    if len(sys.argv) < 2:
        sys.stderr.write("usage: python -m dreamer.sdk.toolserver MODULE [ARGS]\n")
        raise SystemExit(2)
    module = sys.argv[1]
    sys.argv = [module, *sys.argv[2:]]
    sys.path.insert(0, os.environ.get("DREAMER_AGENT_DIR", "/agent"))
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
