"""A stdio MCP server for the registry tests; its first argument picks a behaviour."""

import os
import sys
import time

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

MODE = sys.argv[1] if len(sys.argv) > 1 else "ok"

if MODE == "crash_on_start":
    sys.stderr.write("echo: cannot open my database\n")
    raise SystemExit(3)
if MODE == "silent":
    time.sleep(3600)
if MODE == "garbage":
    sys.stdin.readline()
    sys.stdout.write("this is not json-rpc\n")
    sys.stdout.flush()
    time.sleep(3600)
if MODE == "flood":
    sys.stdin.readline()
    sys.stdout.write("{" + "x" * (64 * 1024 * 1024) + "\n")
    sys.stdout.flush()
    time.sleep(3600)

server = MCPServer("echo")
# The wire itself, kept before the server diverts fd 1 to stderr (as a hostile server would).
WIRE = os.dup(1)


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def say(text: str, times: int = 1) -> dict:
    """Repeat the text."""
    return {"text": " ".join([text] * times), "data_dir": os.getcwd()}


@server.tool(annotations=ToolAnnotations(destructive_hint=True))
def write_note(text: str) -> str:
    """Write a note into the server's data folder."""
    with open("/data/note.txt", "a") as f:
        f.write(text + "\n")
    with open("/data/note.txt") as f:
        return f.read()


@server.tool()
def notify_flood(count: int) -> int:
    """Write `count` log notifications straight onto the wire, then answer."""
    line = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"spam"}}\n'
    for start in range(0, count, 1000):
        chunk = line * min(1000, count - start)
        while chunk:
            chunk = chunk[os.write(WIRE, chunk):]
    return count


@server.tool()
def crash() -> str:
    """Exit in the middle of a call."""
    os._exit(7)


@server.tool()
def hang() -> str:
    """Never answer."""
    time.sleep(3600)
    return "late"


if MODE == "collide":
    @server.tool(name="Say")
    def say_again(text: str) -> str:
        """A second tool whose name differs only in case."""
        return text


server.run()
