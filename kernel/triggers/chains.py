"""The budget of one chain of events: how many runs it may set off in all.

Depth alone bounds how long a chain gets, not how wide it fans out (an event that
sets off two runs, each emitting it twice, doubles at every level). So every run a
chain's events set off is counted against the chain (named by the invocation that
started it), in the store: a restart or a second node continues the count instead
of handing a runaway chain a fresh budget.
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import delete, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from dreamer.kernel.store.models import ChainRun, utcnow

MAX_CHAIN_RUNS = 64  # runs one chain of events may set off in all, however it fans out
KEPT_FOR = timedelta(days=1)  # a chain still going after a day is counted afresh


def spend(s: Session, chain: str, user_id: int) -> int:
    """Counts one more run against `chain`; the runs spent so far, this one included."""
    now = utcnow()
    for _ in range(2):
        counted = s.execute(
            update(ChainRun).where(ChainRun.chain == chain).values(runs=ChainRun.runs + 1, updated_at=now)
            .returning(ChainRun.runs)
        ).scalar_one_or_none()
        if counted is not None:
            return int(counted)
        # A new chain: the first run of it, and old chains pruned while we are here.
        s.execute(delete(ChainRun).where(ChainRun.updated_at < now - KEPT_FOR))
        try:
            with s.begin_nested():
                s.add(ChainRun(chain=chain, user_id=user_id, runs=1, updated_at=now))
            return 1
        except IntegrityError:
            continue  # another node counted its first run at the same moment: count again
    raise RuntimeError(f"could not count a run of chain {chain}")
