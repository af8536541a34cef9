"""What a thumbs up/down on a Sidekick answer teaches: the answer's phrasing -> its call.

Down: every function the answer called is demoted for the words the user had said, so
the same words are not routed there again. Up on an answer that made one call: that
call is kept as a personal example (with its arguments), so it is routed straight there.
A rating of an invocation alone teaches nothing: it carries no phrasing.
"""

from __future__ import annotations

from dreamer.kernel.feedback.ratings import Rating
from dreamer.kernel.learned.examples import demote, learn
from dreamer.kernel.store.db import Store


def learn_from_rating(store: Store, user_id: int, rating: Rating) -> int:
    """Keep what the rating teaches; the number of examples kept or changed."""
    turn = rating.turn
    if turn is None or not turn.user_text.strip():
        return 0
    called = [c for c in turn.calls if c.get("ok") and isinstance(c.get("agent"), str)
              and isinstance(c.get("function"), str)]
    names = {(c["agent"], c["function"]) for c in called}
    if rating.value < 0:
        for agent, function in names:
            demote(store, user_id, turn.user_text, agent, function, source="thumbs down")
        return len(names)
    if len(names) == 1:
        args = called[0].get("args") if isinstance(called[0].get("args"), dict) else {}
        kept = learn(store, user_id, turn.user_text, called[0]["agent"], called[0]["function"], dict(args or {}),
                     source="thumbs up")
        return int(kept is not None)
    return 0
