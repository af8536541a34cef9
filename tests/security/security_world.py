"""One kernel with two users, a victim agent holding both users' secrets, and a hostile
agent installed for the first user; plus a bystander that keeps calling the second
user's victim while the attacks run."""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from hostile_agents import HOSTILE, VAULT, VICTIM
from kernelproc import KernelProc, start_kernel, write_bundle

CALL_TIMEOUT_S = 5
LIMITS = {"processes": 64, "memory_mb": 512, "file_mb": 64}
ME_NOTES = ["me: the spare key is under the mat"]
OTHER_NOTES = ["other: my bank PIN is 4321"]
NOTES_QUERY = "select id, text from notes order by id"


class Bystander(threading.Thread):
    """Calls the other user's victim over and over; every answer must be that user's notes."""

    def __init__(self, kernel: KernelProc, token: str) -> None:
        super().__init__(name="bystander", daemon=True)
        self.kernel = kernel
        self.token = token
        self.successes = 0
        self.failures: list[str] = []
        self._halt = threading.Event()
        self._lock = threading.Lock()

    def run(self) -> None:
        with self.kernel.client(self.token) as client:
            while not self._halt.wait(0.1):
                try:
                    response = client.post("/v1/agents/victim/functions/read", json={"args": {}}, timeout=30)
                    body = response.json()
                    good = response.status_code == 200 and body.get("result") == OTHER_NOTES
                    problem = None if good else f"HTTP {response.status_code}: {json.dumps(body)[:300]}"
                except (httpx.HTTPError, ValueError) as error:
                    problem = f"{type(error).__name__}: {error}"
                with self._lock:
                    if problem is None:
                        self.successes += 1
                    else:
                        self.failures.append(problem)

    def served(self) -> int:
        with self._lock:
            return self.successes

    def stop(self) -> None:
        self._halt.set()
        self.join(60)


@dataclass
class World:
    backend: str
    kernel: KernelProc
    root: Path  # where the bundles were written (outside the kernel's home)
    other_token: str
    marker: str  # in the name of every file an attack tries to create
    canary: str  # in the kernel's environment only
    bystander: Bystander
    notes_before: dict[str, Any] = field(default_factory=dict)
    credentials_sha256: str = ""

    @property
    def home(self) -> Path:
        return self.kernel.home

    @property
    def tokens(self) -> dict[str, str]:
        return {"me": self.kernel.token, "other": self.other_token}

    def data_dir(self, user: str, agent: str) -> Path:
        return self.home / "users" / user / "agents" / agent / "data"

    def bundle_dir(self, agent: str) -> Path:
        """The folder of the agent's 0.1.0 bundle (bundles/NAME/VERSION-DIGEST: one per content)."""
        found = sorted((self.home / "bundles" / agent).glob("0.1.0-*"))
        assert len(found) == 1, found
        return found[0]

    # -- calls -----------------------------------------------------------------------------

    def answer(
        self, agent: str, function: str, args: dict[str, Any] | None = None, user: str = "me"
    ) -> tuple[int, dict[str, Any]]:
        with self.kernel.client(self.tokens[user]) as client:
            response = client.post(f"/v1/agents/{agent}/functions/{function}", json={"args": args or {}}, timeout=120)
        return response.status_code, response.json()

    def ok(self, function: str, /, **args: Any) -> Any:
        """The result of the hostile agent's `function`, called by its user, which must succeed."""
        status, body = self.answer("hostile", function, args)
        assert status == 200, body
        return body["result"]

    def fail(self, function: str, /, **args: Any) -> dict[str, Any]:
        """The error of the hostile agent's `function`, which must fail; also checks the
        invocation was recorded as failed with that same error, so the refusal is on
        record and not only in the answer."""
        status, body = self.answer("hostile", function, args)
        assert status >= 400, f"hostile.{function} did not fail: {body}"
        error = body["error"]
        invocation = (error.get("details") or {}).get("invocation_id")
        if invocation is not None:
            run = self.invocation(invocation)
            assert run["status"] == "failed", run
            assert run["error"]["code"] == error["code"], run
        return error

    def invocation(self, invocation_id: str, user: str = "me") -> dict[str, Any]:
        with self.kernel.client(self.tokens[user]) as client:
            return client.get(f"/v1/invocations/{invocation_id}").json()

    def audit(self, user: str = "me", limit: int = 500) -> list[dict[str, Any]]:
        with self.kernel.client(self.tokens[user]) as client:
            return client.get("/v1/audit", params={"limit": limit}).json()

    def still_serving(self) -> None:
        """The hostile agent answers again and the kernel is healthy."""
        assert self.ok("ok") == "fine"
        with self.kernel.client() as client:
            assert client.get("/healthz").status_code == 200

    @contextmanager
    def bystander_served(self) -> Iterator[None]:
        """The other user's calls were answered while the body ran (use for attacks lasting seconds)."""
        before = self.bystander.served()
        yield
        assert self.bystander.served() > before, "the other user's calls were not answered during the attack"
        assert not self.bystander.failures, self.bystander.failures

    def notes(self, user: str) -> Any:
        """The victim's database of `user`, read with `dreamer database`."""
        return self.kernel.cli_json("database", "victim", "--query", NOTES_QUERY, token=self.tokens[user])


def credentials_digest(home: Path) -> str:
    return hashlib.sha256((home / "credentials").read_bytes()).hexdigest()


def build_world(backend: str, root: Path) -> World:
    canary = "canary-" + secrets.token_hex(8)
    kernel = start_kernel(
        root / "home",
        {
            "DREAMER_SANDBOX": backend,
            "DREAMER_CALL_TIMEOUT": str(CALL_TIMEOUT_S),
            "DREAMER_LIMIT_PROCESSES": str(LIMITS["processes"]),
            "DREAMER_LIMIT_MEMORY_MB": str(LIMITS["memory_mb"]),
            "DREAMER_LIMIT_FILE_MB": str(LIMITS["file_mb"]),
            # Only the kernel's environment holds it: no attack may find it.
            "HOSTILE_CANARY": canary,
        },
    )
    try:
        other = kernel.cli_json("users", "add", "other")["token"]
        bundles = {
            "victim": write_bundle(root, "victim", VICTIM),
            "vault": write_bundle(root, "vault", VAULT),
            "hostile": write_bundle(root, "hostile", HOSTILE, required=["agent:victim"]),
        }
        for name, token in (("victim", None), ("victim", other), ("vault", None), ("hostile", None)):
            done = kernel.cli("install", str(bundles[name]), "--yes", token=token)
            assert done.returncode == 0, done.stderr + done.stdout
        world = World(
            backend=backend, kernel=kernel, root=root, other_token=other,
            marker="pwned-" + secrets.token_hex(6), canary=canary, bystander=Bystander(kernel, other),
        )
        for user, notes in (("me", ME_NOTES), ("other", OTHER_NOTES)):
            for text in notes:
                world.answer("victim", "seed", {"text": text}, user=user)
            assert world.answer("victim", "read", user=user)[1]["result"] == notes
            world.notes_before[user] = world.notes(user)
        world.credentials_sha256 = credentials_digest(kernel.home)
        world.bystander.start()
        # The bystander's worker is warm before the first attack.
        deadline = time.monotonic() + 60
        while world.bystander.served() == 0 and time.monotonic() < deadline and not world.bystander.failures:
            time.sleep(0.05)
        return world
    except BaseException:
        kernel.stop()
        raise
