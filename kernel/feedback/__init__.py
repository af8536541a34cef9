"""The user's thumbs up/down on Sidekick answers and on invocations (kept as rewards)."""
