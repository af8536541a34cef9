"""Triggers through a real kernel: webhooks refused and run, an event chaining two agents,
shared input routed by content type, firing, pausing and rescheduling; the feed."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from bg_agents import SAVER, SAVER_YAML, SUMMARISER, SUMMARISER_YAML, wait_status, write_agent
from kernelproc import KernelProc, start_kernel

from dreamer.kernel.triggers.webhook import sign


@pytest.fixture(scope="module")
def kt(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProc]:
    root = tmp_path_factory.mktemp("triggers")
    k = start_kernel(root / "home", {"DREAMER_WEBHOOK_MAX_BYTES": "2048"})
    for name, code, extra in (("saver", SAVER, SAVER_YAML), ("summariser", SUMMARISER, SUMMARISER_YAML)):
        done = k.cli("install", str(write_agent(root, name, code, extra, ["schedule", "notify"])), "--yes")
        assert done.returncode == 0, done.stderr + done.stdout
    yield k
    k.stop()


def _hook(kt: KernelProc) -> str:
    hooks = [t for t in kt.cli_json("triggers", "saver") if t["type"] == "webhook"]
    return hooks[0]["path"]


def test_triggers_are_listed_per_agent(kt: KernelProc) -> None:
    listed = {(t["agent"], t["name"]): t for t in kt.cli_json("triggers")}
    assert {("saver", "incoming"), ("saver", "shared"), ("summariser", "on-save"), ("summariser", "morning")} <= set(listed)
    morning = listed[("summariser", "morning")]
    assert morning["schedule"] == "0 7 * * 1-5" and morning["next_run"] and not morning["paused"]
    assert listed[("saver", "incoming")]["path"].startswith("/hooks/") and len(listed[("saver", "incoming")]["path"]) > 40
    assert listed[("summariser", "on-save")]["event"] == "saver.article.saved"


def test_a_webhook_refuses_bad_tokens_big_bodies_and_bad_signatures(kt: KernelProc) -> None:
    path = _hook(kt)
    body = json.dumps({"say": "hello"}).encode()
    with httpx.Client(base_url=kt.url, timeout=30) as anon:
        wrong = anon.post(path[:-4] + "AAAA", content=body)
        assert wrong.status_code == 404 and wrong.json()["error"]["code"] == "not_found"
        assert anon.post("/hooks/x", content=body).status_code == 404
        big = anon.post(path, content=b"x" * 4096)
        assert big.status_code == 413 and "at most 2 KiB" in big.json()["error"]["message"]
        # An unsigned webhook runs; then the user sets a secret and signatures are required.
        ok = anon.post(path + "?from=test", content=body, headers={"Content-Type": "application/json", "X-Request-Id": "r1",
                                                                  "Cookie": "secret=1"})
        assert ok.status_code == 202, ok.text
        kt.cli_json("trigger", "secret", "saver", "incoming", "s" * 32)
        unsigned = anon.post(path, content=body, headers={"Content-Type": "application/json"})
        assert unsigned.status_code == 401 and "needs a signature" in unsigned.json()["error"]["message"]
        forged = anon.post(path, content=body, headers={"X-Dreamer-Signature": sign("t" * 32, body)})
        assert forged.status_code == 401 and "does not match" in forged.json()["error"]["message"]
        tampered = anon.post(path, content=body + b" ", headers={"X-Dreamer-Signature": sign("s" * 32, body)})
        assert tampered.status_code == 401
        signed = anon.post(path, content=body, headers={"Content-Type": "application/json",
                                                        "X-Hub-Signature-256": sign("s" * 32, body)})
        assert signed.status_code == 202, signed.text
    with kt.client() as c:
        first = wait_status(c, ok.json()["invocation_id"], {"succeeded", "failed"})
        assert first["status"] == "succeeded", first
        assert first["result"]["trigger"] == {"type": "webhook", "name": "incoming"}
        assert first["result"]["headers"] == ["content-type", "user-agent", "x-request-id"]  # no cookie
        assert first["result"]["query"] == "from=test"
        assert wait_status(c, signed.json()["invocation_id"], {"succeeded", "failed"})["status"] == "succeeded"
    feed = kt.cli_json("feed")
    assert [p["text"] for p in feed if p["agent"] == "saver"][:2] == ["webhook said hello", "webhook said hello"]
    assert feed[0]["priority"] == "urgent" and feed[0]["attachments"] == [{"method": "POST"}]
    kt.cli_json("trigger", "secret", "saver", "incoming", "--clear")


def test_an_event_chains_two_agents(kt: KernelProc) -> None:
    out = kt.cli_json("call", "saver", "save", '{"title": "Dune"}')
    [child] = out["result"]
    with kt.client() as c:
        run = wait_status(c, child, {"succeeded", "failed"})
        assert run["status"] == "succeeded" and run["result"] == "saver.article.saved"
        assert run["agent"] == "summariser" and run["parent_id"] == out["invocation_id"]
        assert run["trigger"]["type"] == "event" and run["trigger"]["depth"] == 1
    assert any(p["text"] == "summary of Dune (from saver)" for p in kt.cli_json("feed"))
    undeclared = kt.cli("call", "saver", "shout", '{"undeclared": true}', "--json")
    assert undeclared.returncode != 0 and "does not declare the event" in json.loads(undeclared.stdout)["error"]["message"]
    # Without the schedule grant, the subscriber is not run (and the refusal is audited).
    kt.cli_json("revoke", "summariser", "schedule")
    try:
        assert kt.cli_json("call", "saver", "shout")["result"] == []
        denied = [e for e in kt.cli_json("audit", "--limit", "20") if e["action"] == "triggers.fire" and e["decision"] == "deny"]
        assert denied and denied[0]["target"] == "summariser.on-save"
    finally:
        kt.cli_json("grant", "summariser", "schedule")


def test_shared_input_is_routed_by_content_type(kt: KernelProc) -> None:
    text = kt.cli_json("share", "remember the milk")
    assert text["content_type"] == "text/plain" and [r["agent"] for r in text["routed"]] == ["saver"]
    link = kt.cli_json("share", "https://example.com/a")
    assert link["content_type"] == "text/uri-list"
    with kt.client() as c:
        run = wait_status(c, link["routed"][0]["invocation_id"], {"succeeded", "failed"})
        assert run["result"] == {"content_type": "text/uri-list", "url": "https://example.com/a"}
        refused = c.post("/v1/inputs", json={"file": {"name": "a.png", "content_type": "image/png", "base64": "aGk="}})
        assert refused.status_code == 404 and "accepts image/png" in refused.json()["error"]["message"]
        two = c.post("/v1/inputs", json={"text": "a", "url": "https://x.y"})
        assert two.status_code == 400 and "exactly one of text, url or file" in two.json()["error"]["message"]


def test_fire_pause_resume_and_reschedule(kt: KernelProc) -> None:
    kt.cli_json("trigger", "pause", "summariser", "morning")
    assert next(t for t in kt.cli_json("triggers", "summariser") if t["name"] == "morning")["next_run"] is None
    fired = kt.cli_json("trigger", "run", "summariser", "morning")  # a paused trigger still fires by hand
    with kt.client() as c:
        run = wait_status(c, fired["invocation_id"], {"succeeded", "failed"})
    assert run["status"] == "succeeded" and run["result"]["fired"]["manual"] is True
    resumed = kt.cli_json("trigger", "resume", "summariser", "morning")
    assert resumed["next_run"] is not None
    changed = kt.cli_json("trigger", "schedule", "summariser", "morning", "30 6 * * *")
    assert changed["schedule"] == "30 6 * * *" and changed["default_schedule"] == "0 7 * * 1-5"
    assert changed["next_run"].endswith("+00:00") and "06:30:00" in changed["next_run"]  # the user's zone is UTC
    bad = kt.cli("trigger", "schedule", "summariser", "morning", "99 * * * *", "--json")
    assert bad.returncode != 0 and "is not valid" in json.loads(bad.stdout)["error"]["message"]
    assert kt.cli_json("trigger", "schedule", "summariser", "morning", "default")["schedule"] == "0 7 * * 1-5"
    missing = kt.cli("trigger", "run", "summariser", "nope", "--json")
    assert json.loads(missing.stdout)["error"]["code"] == "not_found"
    # The user's time zone moves the schedule: 06:30 in Tokyo (21:30 UTC the day before).
    kt.cli_json("trigger", "schedule", "summariser", "morning", "30 6 * * *")
    assert kt.cli_json("timezone", "Asia/Tokyo")["timezone"] == "Asia/Tokyo"
    try:
        tokyo = next(t for t in kt.cli_json("triggers", "summariser") if t["name"] == "morning")
        assert tokyo["next_run"].endswith("T06:30:00+09:00")
        bad = kt.cli("timezone", "Mars/Olympus", "--json")
        assert bad.returncode != 0 and "is not a time zone name" in json.loads(bad.stdout)["error"]["message"]
    finally:
        kt.cli_json("timezone", "UTC")
        kt.cli_json("trigger", "schedule", "summariser", "morning", "default")


class _Page(BaseHTTPRequestHandler):
    body = "<html><body><h1>Courses</h1><p>Enrollment opens soon.</p></body></html>"

    def do_GET(self) -> None:
        data = type(self).body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_the_watch_agent_posts_when_a_local_page_changes(kt: KernelProc) -> None:
    handler = type("Page", (_Page,), {})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/courses"
    try:
        # net:* is declared but not granted at install; the user grants just the local host.
        kt.cli_json("grant", "watch", "net:127.0.0.1")
        check = next(t for t in kt.cli_json("triggers", "watch") if t["name"] == "check")
        assert check["type"] == "cron" and check["schedule"] == "*/30 * * * *" and check["entrypoint"] == "check_watches"
        added = kt.cli_json("call", "watch", "add_watch", json.dumps({"url": url, "what": "enrollment  OPEN"}))
        assert added["result"]["what"] == "enrollment OPEN" and added["result"]["found"] is None

        api = kt.client()

        def check_once() -> dict:
            fired = api.post("/v1/agents/watch/triggers/check/run").json()
            run = wait_status(api, fired["invocation_id"], {"succeeded", "failed"})
            assert run["status"] == "succeeded", run
            return run["result"]

        def watch_posts() -> list[str]:
            return [p["text"] for p in api.get("/v1/feed", params={"agent": "watch"}).json()]

        assert check_once() == {"posted": 0, "errors": 0}  # not there yet
        handler.body = "<html><body><h1>Courses</h1><p>Enrollment open for spring!</p><script>x</script></body></html>"
        assert check_once() == {"posted": 1, "errors": 0}
        assert watch_posts() == [f"“enrollment OPEN” is on {url} now: Enrollment open for spring!"]
        assert check_once() == {"posted": 0, "errors": 0}  # unchanged: nothing new
        handler.body = "<p>Enrollment open for fall</p>"
        assert check_once() == {"posted": 1, "errors": 0}
        assert watch_posts()[0] == f"What {url} says about “enrollment OPEN” changed: Enrollment open for fall"
        # Without the grant the check fails softly: an error on the watch, no post.
        api.delete("/v1/agents/watch/grants", params={"scope": "net:127.0.0.1"}).raise_for_status()
        assert check_once() == {"posted": 0, "errors": 1}
        [watch] = api.post("/v1/agents/watch/functions/list_watches", json={"args": {}}).json()["result"]
        assert "net:127.0.0.1" in watch["last_error"] and watch["found"] is True
        api.close()
    finally:
        server.shutdown()


def test_install_refuses_an_entrypoint_that_is_not_a_function(kt: KernelProc, tmp_path: Path) -> None:
    unknown = write_agent(tmp_path / "a", "hooky", SUMMARISER, "triggers:\n  - {type: webhook, entrypoint: nowhere, name: h}\n", ["schedule"])
    done = kt.cli("install", str(unknown), "--yes", "--json")
    assert done.returncode != 0
    assert "names entrypoint 'nowhere', which is not a function in functions.json" in json.loads(done.stdout)["error"]["message"]
    two = SUMMARISER + '''
@function
def two(ctx: Context, a: int, b: int) -> int:
    """Needs two arguments."""
    return a + b
'''
    needy = write_agent(tmp_path / "b", "hooky", two, "triggers:\n  - {type: webhook, entrypoint: two, name: h}\n", ["schedule"])
    done = kt.cli("install", str(needy), "--yes", "--json")
    assert done.returncode != 0 and "a trigger passes at most one" in json.loads(done.stdout)["error"]["message"]
    assert "hooky" not in {a["name"] for a in kt.cli_json("agents")}
