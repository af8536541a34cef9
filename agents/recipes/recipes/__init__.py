"""The recipes agent: a built-in recipe catalog and a dinner planner."""
