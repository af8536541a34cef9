"""The built-in tools through a real kernel: calendar (iCalendar) and files in the sandbox,
web through the kernel's net: checks, and the calendar agent reading the calendar tool."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from kernelproc import KernelProc, write_bundle

PAGE = b"<html><head><title>Soup</title><style>p{}</style></head><body><h1>Leek soup</h1><script>x()</script><p>Leeks &amp; potatoes.</p></body></html>"

READER = '''
from dreamer.sdk import CallError, Context, function

@function(exported=True)
def read(ctx: Context, url: str) -> dict:
    """Reads a page through the web tool."""
    try:
        return ctx.tools.call("web.fetch", {"url": url})
    except CallError as e:
        return {"refused": e.kind, "message": e.message}
'''


@pytest.fixture(scope="module")
def page_url() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(PAGE)))
            self.end_headers()
            self.wfile.write(PAGE)

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/soup"
    server.shutdown()


def tool(kernel: KernelProc, server: str, name: str, **args: object) -> object:
    return kernel.cli_json("call-tool", server, name, json.dumps(args))["result"]


def test_calendar_tool_keeps_events_in_an_icalendar_file(tool_kernel: KernelProc) -> None:
    made = tool(tool_kernel, "calendar", "create_event", title="Dentist", start="2026-12-03T09:30:00+01:00", end="2026-12-03T10:30:00+01:00")
    assert made["start"] == "2026-12-03T08:30:00+00:00"
    tool(tool_kernel, "calendar", "update_event", uid=made["uid"], location="Rue Neuve")
    listed = tool(tool_kernel, "calendar", "list_events", start="2026-12-03", end="2026-12-03")["events"]
    assert [(e["title"], e["location"]) for e in listed] == [("Dentist", "Rue Neuve")]
    ics = (tool_kernel.home / "users" / "me" / "tools" / "calendar" / "data" / "calendar.ics").read_text()
    assert "BEGIN:VCALENDAR" in ics and "SUMMARY:Dentist" in ics
    # The calendar agent (1.1.0) shows the tool's events in its agenda.
    agenda = tool_kernel.cli_json("call", "calendar", "agenda", '{"day": "2026-12-03"}')["result"]
    assert [(e["title"], e.get("source")) for e in agenda["events"]] == [("Dentist", "calendar tool")]
    assert tool(tool_kernel, "calendar", "delete_event", uid=made["uid"]) == {"deleted": made["uid"]}
    assert tool(tool_kernel, "calendar", "list_events")["events"] == []
    done = tool_kernel.cli("call-tool", "calendar", "create_event", '{"title": "x", "start": "someday"}', "--json")
    assert done.returncode != 0 and "is not an ISO 8601 date" in json.loads(done.stdout or done.stderr)["error"]["message"]


def test_files_tool_is_a_document_folder_of_its_own(tool_kernel: KernelProc) -> None:
    tool(tool_kernel, "files", "write_file", path="trips/lyon.md", text="Train at 9\nBring the tickets")
    assert tool(tool_kernel, "files", "read_file", path="trips/lyon.md")["text"].startswith("Train at 9")
    assert tool(tool_kernel, "files", "list_files", folder="trips")["entries"][0]["path"] == "trips/lyon.md"
    assert tool(tool_kernel, "files", "search_files", query="TICKETS")["matches"] == [{"path": "trips/lyon.md", "line": "Bring the tickets"}]
    for bad in ("../../../etc/passwd", "/etc/passwd"):
        done = tool_kernel.cli("call-tool", "files", "read_file", json.dumps({"path": bad}), "--json")
        assert done.returncode != 0 and "may not contain '..'" in json.loads(done.stdout or done.stderr)["error"]["message"]


def test_web_tool_goes_through_the_agents_net_grants(tool_kernel: KernelProc, page_url: str, tmp_path: Path) -> None:
    bundle = write_bundle(tmp_path, "reader", READER, required=["tool:web.fetch"], optional=["net:127.0.0.1"])
    assert tool_kernel.cli("install", str(bundle), "--yes", "--without", "net:127.0.0.1").returncode == 0
    refused = tool_kernel.cli_json("call", "reader", "read", json.dumps({"url": page_url}))["result"]
    assert refused["refused"] == "permission_denied" and "net:127.0.0.1" in refused["message"]
    assert tool_kernel.cli("grant", "reader", "net:127.0.0.1").returncode == 0
    page = tool_kernel.cli_json("call", "reader", "read", json.dumps({"url": page_url}))["result"]
    assert page["title"] == "Soup" and page["status"] == 200
    assert page["text"].split() == ["Leek", "soup", "Leeks", "&", "potatoes."]  # no markup, script or style
    # A person has no grant naming a private address, so loopback stays out of reach.
    done = tool_kernel.cli("call-tool", "web", "fetch", json.dumps({"url": page_url}), "--json")
    assert done.returncode != 0 and json.loads(done.stdout or done.stderr)["error"]["code"] == "permission_denied"
