"""`dreamer test`: run a bundle's own tests (tests/ with pytest) inside its sandbox.

Started by the kernel as `python -S -m dreamer.sdk.agenttest` with the bundle read-only
at /agent; everything pytest prints goes to stdout/stderr, the exit code says how it went.
The test kit (dreamer.sdk.testing) is loaded as a plugin, so every test can take the `kit`
fixture: the agent in a real worker, inside this same sandbox.
"""

from __future__ import annotations

import os
import sys

NO_TESTS = 4  # also pytest's "usage error"; the kernel tells them apart by the output line below
NO_PYTEST = 5


def main() -> int:
    # /agent is read-only: no bytecode files, no cache folder.
    sys.dont_write_bytecode = True
    agent = os.environ.get("DREAMER_AGENT_DIR", "/agent")
    tests = os.path.join(agent, "tests")
    if not os.path.isdir(tests):
        print("dreamer-agenttest: no tests/ folder in the bundle", flush=True)
        return NO_TESTS
    try:
        import pytest
    except ImportError:
        print("dreamer-agenttest: pytest is not installed in the sandbox's Python runtime", flush=True)
        return NO_PYTEST
    sys.path.insert(0, agent)
    os.chdir(os.environ.get("TMPDIR", "/tmp"))
    return int(pytest.main(["-q", "-p", "no:cacheprovider", "-p", "dreamer.sdk.testing", "--rootdir", agent, tests]))


if __name__ == "__main__":
    sys.exit(main())
