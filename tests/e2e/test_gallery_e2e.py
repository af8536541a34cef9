"""The whole gallery path with real processes: `dreamer gallery serve`, a kernel pointed at it,
and the real CLI: init → login → publish (which builds) → search → install as a second user
(the review names the verified publisher) → call; then a republish, a yank and a tampered archive."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from dreamer.contracts.signing import fingerprint as fingerprint_of
from dreamer.contracts.signing import load_key, public_key_text
from kernelproc import DREAMER, KernelProc, gallery_and_kernel


def _version_line(yaml: str) -> str:
    """The starter's own version line, whatever version it is at now."""
    return next(line for line in yaml.splitlines() if line.startswith("version:"))


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[KernelProc, str, Path]]:
    root = tmp_path_factory.mktemp("gallery-e2e")
    with gallery_and_kernel(root) as (kernel, url):
        yield kernel, url, root


def _fill(manifest: Path, **fields: str) -> None:
    """Replace the scaffold's placeholder description and publisher, as a builder does before publishing."""
    lines = manifest.read_text().splitlines()
    fields = {"description": "Greets people by name.", "publisher": "acme"} | fields
    manifest.write_text("\n".join(
        next((f"{key}: {value}" for key, value in fields.items() if line.startswith(f"{key}: ")), line) for line in lines
    ) + "\n")


def _ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr + done.stdout
    return done.stdout


def test_publish_search_install_verified(setup: tuple[KernelProc, str, Path]) -> None:
    kernel, url, root = setup
    folder = root / "weather"
    _ok(kernel.cli("init", "weather", "--dir", str(folder)))
    manifest = folder / "agent.yaml"
    _fill(manifest)
    assert "Logged in" in _ok(kernel.cli("login", url, "--name", "acme"))
    assert (root / "config" / "publisher.key").stat().st_mode & 0o777 == 0o600

    published = kernel.cli("publish", str(folder))
    assert "Building" in published.stderr and "Published weather 0.1.0" in _ok(published)

    hits = kernel.cli_json("search", "greet")
    assert [h["name"] for h in hits] == ["weather"] and hits[0]["publisher"] == "acme"

    # A starter agent publishes the same way (under this publisher's name, with a new version).
    starter = root / "notes"
    shutil.copytree(Path(__file__).resolve().parents[2] / "agents" / "notes", starter,
                    ignore=shutil.ignore_patterns("__pycache__", "functions.json"))
    yaml = (starter / "agent.yaml").read_text()
    (starter / "agent.yaml").write_text(yaml.replace("publisher: dreamer", "publisher: acme").replace(_version_line(yaml), "version: 9.0.0"))
    assert "Published notes 9.0.0" in _ok(kernel.cli("publish", str(starter)))
    assert "notes" in [h["name"] for h in kernel.cli_json("search", "notes")]

    with kernel.client() as api:
        assert api.post("/v1/users", json={"name": "bob"}).status_code in (200, 201)
    installed = _ok(kernel.cli("install", "weather", "--yes", "--user", "bob"))
    fingerprint = fingerprint_of(public_key_text(load_key(root / "config" / "publisher.key").public_key()))
    assert f"Published by acme (verified, key fingerprint {fingerprint}" in installed
    assert "Installed weather 0.1.0" in installed
    agent = kernel.cli_json("agents", "--user", "bob")
    assert next(a for a in agent if a["name"] == "weather")["verified_publisher"] == {"gallery": url, "fingerprint": fingerprint}
    assert "Hello, gallery" in str(kernel.cli_json("call", "weather", "hello", '{"name": "gallery"}', "--user", "bob")["result"])

    # A republish of the same version is refused with a clear sentence.
    again = kernel.cli("publish", str(folder))
    assert again.returncode != 0 and "already published and versions are immutable" in again.stderr

    # Yank 0.2.0: it is not offered (latest stays 0.1.0), and outdated has nothing for bob.
    manifest.write_text(manifest.read_text().replace("version: 0.1.0", "version: 0.2.0"))
    _ok(kernel.cli("publish", str(folder)))
    _ok(kernel.cli("yank", "weather@0.2.0", "--reason", "broken"))
    assert kernel.cli_json("search", "weather")[0]["latest"] == "0.1.0"
    assert kernel.cli_json("outdated", "--user", "bob") == []
    # 0.3.0 asks for a new permission: outdated lists it, the upgrade waits for approval.
    manifest.write_text(manifest.read_text().replace("version: 0.2.0", "version: 0.3.0").replace("required: []", "required: [notify]"))
    _ok(kernel.cli("publish", str(folder)))
    assert kernel.cli_json("outdated", "--user", "bob") == [
        {"name": "weather", "installed": "0.1.0", "latest": "0.3.0", "gallery": url}]
    waiting = kernel.cli("upgrade", "weather", "--user", "bob")
    assert waiting.returncode != 0 and "New permissions: notify" in waiting.stdout and "--yes" in waiting.stderr
    assert next(a for a in kernel.cli_json("agents", "--user", "bob") if a["name"] == "weather")["version"] == "0.1.0"
    assert "Upgraded weather 0.3.0" in _ok(kernel.cli("upgrade", "weather", "--yes", "--user", "bob"))
    assert kernel.cli_json("outdated", "--user", "bob") == []

    with kernel.client() as api:
        staged = api.post("/v1/gallery/install", json={"name": "weather", "version": "0.1.0"}).json()
        assert staged["manifest"]["version"] == "0.1.0" and staged["review"]["publisher_verified"] is True

        # An archive altered on the gallery's disk is refused by the kernel, and nothing is staged.
        archive = root / "gallery" / "archives" / "weather" / "0.1.0.tar.gz"
        archive.chmod(0o644)
        data = archive.read_bytes()
        archive.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
        staging = kernel.home / "staging"
        before = sorted(staging.iterdir()) if staging.exists() else []
        refused = api.post("/v1/gallery/install", json={"name": "weather", "version": "0.1.0"})
        assert refused.status_code == 422 and refused.json()["error"]["code"] == "digest_mismatch"
        assert (sorted(staging.iterdir()) if staging.exists() else []) == before


def test_agent_tests_run_in_the_sandbox(setup: tuple[KernelProc, str, Path]) -> None:
    kernel, _, root = setup
    folder = root / "tested"
    _ok(kernel.cli("init", "tested", "--dir", str(folder)))
    (folder / "tests" / "test_server.py").unlink()  # init's own tests; these are written here
    (folder / "tests" / "test_own.py").write_text(
        "import pytest\nfrom tested_agent.server import hello\n\n"
        "class Ctx:\n    def log(self, *a, **k):\n        pass\n\n"
        "def test_hello():\n    assert hello(Ctx(), 'x') == 'Hello, x!'\n\n"
        "def test_bundle_is_read_only():\n    with pytest.raises(OSError):\n        open('/agent/new-file', 'w')\n"
    )
    passed = kernel.cli_json("test", str(folder))
    assert passed["passed"] is True and "2 passed" in passed["output"]
    (folder / "tests" / "test_own.py").write_text("def test_fails():\n    assert 1 == 2\n")
    failed = kernel.cli("test", str(folder))
    assert failed.returncode == 1 and "1 failed" in failed.stdout and "tests failed" in failed.stderr


def test_dev_reinstalls_on_change_and_shows_calls(setup: tuple[KernelProc, str, Path]) -> None:
    kernel, _, root = setup
    folder = root / "devloop"
    _ok(kernel.cli("init", "devloop", "--dir", str(folder)))
    env = dict(kernel.env, COLUMNS="200", PYTHONUNBUFFERED="1")
    dev = subprocess.Popen([DREAMER, "dev", str(folder), "--interval", "0.3", "--stop-after", "90"], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        with kernel.client() as api:
            def answer() -> str:
                r = api.post("/v1/agents/devloop/functions/hello", json={"args": {"name": "dev"}})
                return str(r.json().get("result")) if r.status_code == 200 else ""

            def wait_for(text: str) -> bool:
                deadline = time.monotonic() + 120  # generous: CI machines are shared
                while answer() != text:
                    if time.monotonic() > deadline or dev.poll() is not None:
                        return False
                    time.sleep(1.0)
                return True

            installed = wait_for("Hello, dev!")
            server = folder / "devloop_agent" / "server.py"
            server.write_text(server.read_text().replace('f"Hello, {name}!"', 'f"Howdy, {name}!"'))
            reloaded = installed and wait_for("Howdy, dev!")
            time.sleep(1.5)  # one more look, so the last call is printed
    finally:
        dev.send_signal(2)
        output = dev.communicate(timeout=60)[0]
    assert installed and reloaded, output
    assert "Reloaded devloop" in output, output
    assert "call hello" in output and "Howdy, dev!" in output, output


def test_the_web_app_installs_from_the_gallery_with_the_verified_review(
    setup: tuple[KernelProc, str, Path],
) -> None:
    """In a real browser: search the gallery on the install page, review (verified publisher,
    an optional scope switched off), approve; the grants are what the switches said."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "web"))
    from browser_kit import CHROMIUM, CHROMIUM_ARGS, chromium_missing

    missing = chromium_missing()
    if missing:
        pytest.skip(missing)
    kernel, url, root = setup
    folder = root / "sunshine"
    _ok(kernel.cli("init", "sunshine", "--dir", str(folder)))
    manifest = folder / "agent.yaml"
    _fill(manifest, description="Sunny greetings.")
    text = manifest.read_text()
    manifest.write_text(re.sub(r"optional: \[[^\]]*\]", "optional: [notify]", text))
    assert "optional: [notify]" in manifest.read_text(), manifest.read_text()
    login = kernel.cli("login", url, "--name", "acme")
    # Logged in already when the first test of this module ran (same config folder).
    assert login.returncode == 0 or "is taken" in login.stderr, login.stderr
    _ok(kernel.cli("publish", str(folder)))
    password = "sunny side up"
    done = subprocess.run([DREAMER, "users", "passwd", "me", "--password-stdin"], input=password + "\n",
                          env=kernel.env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr

    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_context(base_url=kernel.url).new_page()
        page.set_default_timeout(30_000)
        page.goto("/login")
        page.fill("input[name=name]", "me")
        page.fill("input[name=password]", password)
        page.click("button[type=submit]")
        page.wait_for_selector("#composer")
        page.goto("/install")
        page.fill("#gallery-q", "sunshine")
        page.click("#gallery-form button[type=submit]")
        page.click(".gallery-hit button")
        page.wait_for_selector("#review:not([hidden])")
        publisher = page.inner_text("#r-publisher")
        assert "acme" in publisher and "verified" in publisher and "not verified" not in publisher
        assert fingerprint_of(public_key_text(load_key(root / "config" / "publisher.key").public_key())) in publisher
        page.uncheck("input[data-scope='notify']")
        page.click("#approve")
        page.wait_for_url("**/agents/sunshine")
        browser.close()
    perms = {p["scope"]: p["granted"] for p in kernel.cli_json("permissions", "sunshine")}
    assert perms == {"notify": False}
    agent = next(a for a in kernel.cli_json("agents") if a["name"] == "sunshine")
    assert agent["verified_publisher"]["gallery"] == url
