"""Sidekick's side of the memory: noticing what the user tells it to remember."""
