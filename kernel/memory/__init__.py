"""Sidekick's memory: facts and preferences the kernel keeps per user.

The memory belongs to the system (Dreamer keeps it in Sidekick, not in each
agent): the user adds to it by telling Sidekick or through the API, agents read
it under `memory:read` and add to it under `memory:write`, and the user can list
and delete every fact.
"""
