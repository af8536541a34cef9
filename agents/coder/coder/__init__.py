"""The coder agent: a sandboxed coding agent over the user's repositories."""
