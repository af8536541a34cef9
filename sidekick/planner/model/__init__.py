"""Sidekick's model-driven planner: a tool-use loop over the user's exported functions.

    from dreamer.sidekick.planner.model import ModelLoop
    async for event in ModelLoop().run(text, tools, history, call, gateway, user_id, context): ...

See loop.py for the events and the rules, history.py for compaction.
"""

from dreamer.sidekick.planner.model.history import Budget, Compaction
from dreamer.sidekick.planner.model.loop import ModelLoop
from dreamer.sidekick.planner.model.names import ASK_USER, model_name

__all__ = ["ASK_USER", "Budget", "Compaction", "ModelLoop", "model_name"]
