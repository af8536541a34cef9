"""ctx.emit_reward: an agent's judgement of its own run, kept with the invocation and capped."""

from __future__ import annotations

from pathlib import Path

from kernelproc import KernelProc, write_bundle

CODE = '''
from dreamer.sdk import CallError, Context, function

@function(exported=True)
def judged(ctx: Context, value: float, times: int = 1) -> str:
    """Emits `value` as its reward `times` times."""
    for _ in range(times):
        ctx.emit_reward(value, note="the plan was kept")
    return "ok"

@function(exported=True)
def out_of_range(ctx: Context) -> str:
    try:
        ctx.emit_reward(7)
    except CallError as exc:
        return exc.kind
    return "accepted"
'''


def test_rewards_are_kept_with_the_invocation_and_bad_ones_refused(kernel: KernelProc, tmp_path: Path) -> None:
    done = kernel.cli("install", str(write_bundle(tmp_path, "judge", CODE)), "--yes")
    assert done.returncode == 0, done.stderr
    with kernel.client() as c:
        called = c.post("/v1/agents/judge/functions/judged", json={"args": {"value": 0.75}}).json()
        run = c.get(f"/v1/invocations/{called['invocation_id']}").json()
        assert [(r["value"], r["note"]) for r in run["rewards"]] == [(0.75, "the plan was kept")]
        refused = c.post("/v1/agents/judge/functions/out_of_range", json={"args": {}}).json()
        assert refused["result"] == "invalid_argument"
        # A loop cannot fill the store: the 21st reward of one invocation fails the call.
        flood = c.post("/v1/agents/judge/functions/judged", json={"args": {"value": 0.1, "times": 25}}).json()
        assert flood["error"]["code"] == "conflict" and "at most 20 rewards" in flood["error"]["message"]
        kept = c.get(f"/v1/invocations/{flood['error']['details']['invocation_id']}").json()["rewards"]
        assert len(kept) == 20
