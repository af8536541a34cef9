"""A Docker engine for the tests: the one that answers, or one started here.

These machines have docker.io installed but no engine running by default, so a
developer running the README's test line would otherwise never run the docker
tests. When no engine answers and dockerd is installed (and we are root, which
dockerd needs), it is started in the background and left running afterwards, as
.ci/run does: it is the machine's service, not the test session's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from functools import lru_cache

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.sandbox.docker import DEFAULT_ENGINE, connect, engine_url

START_TIMEOUT_S = 60.0
LOG = "/tmp/dockerd.log"


def _answers() -> bool:
    try:
        connect().close()
    except DreamerError:
        return False
    return True


@lru_cache(maxsize=1)
def engine_unavailable() -> str | None:
    """None when an engine answers (perhaps after starting dockerd), else why the docker tests skip."""
    if _answers():
        return None
    url = engine_url()
    dockerd = shutil.which("dockerd") or shutil.which("dockerd", path="/usr/sbin:/sbin")
    if dockerd is None:
        return f"no Docker engine answers at {url} and dockerd is not installed (apt-get install -y docker.io)"
    if url != DEFAULT_ENGINE:
        return f"no Docker engine answers at {url} (DOCKER_HOST); not starting one for another address"
    if os.geteuid() != 0:
        return f"no Docker engine answers at {url} and starting dockerd needs root"
    with open(LOG, "ab") as log:
        process = subprocess.Popen(
            [dockerd], stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if _answers():
            return None
        if process.poll() is not None:
            # Another dockerd (started by a parallel run) may hold the lock and be
            # about to answer; give it a little while before giving up.
            deadline = min(deadline, time.monotonic() + 10)
        time.sleep(0.25)
    if process.poll() is not None:
        return f"dockerd exited with status {process.returncode} at start and no engine answers; see {LOG}"
    return f"dockerd did not answer within {START_TIMEOUT_S:.0f} s; see {LOG}"
