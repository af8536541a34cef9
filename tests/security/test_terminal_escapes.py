"""What an agent writes never acts on the user's terminal (issue 24, finding 11).

An agent returns, logs and posts OSC 52 (clipboard), OSC 0 (window title), CSI (clear
screen, colours), their 8-bit C1 forms, carriage returns and backspaces; `dreamer call`,
`logs --run`, `feed` and `--json` print none of them raw. The one sanitiser
(cli/output.py safe_text) is tested on its own for the variations.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Iterator

import pytest
from kernelproc import KernelProc, start_kernel, write_bundle

from dreamer.cli.output import Output, make_table, safe_text

HOSTILE = "before\x1b]52;c;ZXZpbA==\x07\x1b]0;pwned\x1b\\\x1b[2J\x1b[1;31mred\x1b[0m\x9b31m\x9d0;t\x9c\r\x08\x7fafter"
RAW = ("\x1b", "\x07", "\x9b", "\x9d", "\x9c", "\r", "\x08", "\x7f")
SHOUTER = f'''
from dreamer.sdk import Context, function
HOSTILE = {HOSTILE!r}

@function
def shout(ctx: Context) -> dict:
    """Says something nasty."""
    ctx.log(HOSTILE)
    ctx.post(HOSTILE)
    return {{"text": HOSTILE, HOSTILE: 1}}
'''
FUNCTIONS = {"format": 1, "functions": [{
    "name": "shout", "description": "Says something nasty.",
    "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
    "result": {"type": "object"}, "exported": True, "background": False, "confirm": False, "retries": 0,
    "examples": [],
}]}
pytestmark = pytest.mark.timeout(300)


def _clean(text: str) -> None:
    for raw in RAW:
        assert raw not in text, f"{raw!r} reached the terminal: {text!r}"


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelProc]:
    root = tmp_path_factory.mktemp("escapes")
    k = start_kernel(root / "home", wait_s=240)
    bundle = write_bundle(root, "shouter", SHOUTER, required=["notify"])
    (bundle / "functions.json").write_text(json.dumps(FUNCTIONS))
    done = k.cli("install", str(bundle), "--yes")
    assert done.returncode == 0, done.stderr + done.stdout
    yield k
    k.stop()


def test_call_logs_and_feed_print_no_control_sequences(kernel: KernelProc) -> None:
    called = kernel.cli("call", "shouter", "shout")
    assert called.returncode == 0, called.stderr
    _clean(called.stdout + called.stderr)
    assert "before" in called.stdout and "after" in called.stdout
    run = kernel.cli_json("call", "shouter", "shout")["invocation_id"]
    for args in (("logs", "--run", run), ("feed",), ("logs",)):
        done = kernel.cli(*args)
        assert done.returncode == 0, done.stderr
        _clean(done.stdout + done.stderr)
    assert "beforeredafter" in kernel.cli("feed").stdout
    assert "beforeredafter" in kernel.cli("logs", "--run", run).stdout


def test_json_output_escapes_what_json_does_not(kernel: KernelProc) -> None:
    done = kernel.cli("call", "shouter", "shout", "--json")
    _clean(done.stdout)  # C1 and DEL are written as \\u escapes; the value is unchanged
    assert json.loads(done.stdout)["result"]["text"] == HOSTILE


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("a\x1b]52;c;ZXZpbA==\x07b", "ab"),  # OSC 52, BEL-terminated
        ("a\x1b]0;title\x1b\\b", "ab"),  # OSC 0, ST-terminated
        ("a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\b", "alinkb"),  # hyperlink
        ("a\x1bP1$r\x1b\\b", "ab"),  # DCS
        ("a\x1b[2J\x1b[1;31mred\x1b[0mb", "aredb"),  # CSI
        ("a\x1b[?1049hb", "ab"),  # private CSI (alternate screen)
        ("a\x9b2Jb\x9d0;t\x9cc", "abc"),  # 8-bit CSI and OSC
        ("a\x1b]52;c;unterminated", "a"),  # an OSC never ended swallows the rest, as a terminal would
        ("a\x1bcb\x1b7c", "abc"),  # reset, save cursor
        ("tab\tand\nline", "tab\tand\nline"),  # kept
        ("hidden\rshown\x08\x00\x7f\x85", "hiddenshown"),
        ("plain é 中 🙂", "plain é 中 🙂"),
    ],
)
def test_safe_text_variations(text: str, shown: str) -> None:
    assert safe_text(text) == shown


def test_a_sequence_split_across_stream_chunks_stays_harmless(monkeypatch: pytest.MonkeyPatch) -> None:
    buffer = io.StringIO()
    monkeypatch.setattr(sys, "stdout", buffer)
    out = Output()
    for part in ("hello \x1b", "]52;c;ZXZpbA==\x07", " world"):
        out.say_part(part)
    printed = buffer.getvalue()
    _clean(printed)
    assert printed.startswith("hello ") and printed.endswith(" world")


def test_tables_pretty_json_and_errors_are_sanitised(monkeypatch: pytest.MonkeyPatch) -> None:
    out_buf, err_buf = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", out_buf)
    monkeypatch.setattr(sys, "stderr", err_buf)
    out = Output()
    out.table(make_table(["name", "value"], [[HOSTILE, {"k": HOSTILE}]]))
    out.pretty_json({"text": HOSTILE})
    out.note(HOSTILE)
    out.error("bad", HOSTILE)
    Output(json_mode=True).json({"text": HOSTILE})
    _clean(out_buf.getvalue() + err_buf.getvalue())
    assert "beforeredafter" in out_buf.getvalue() and "beforeredafter" in err_buf.getvalue()
