"""Shared contracts: what the kernel, the CLI and the gallery agree on.

Errors and their codes, the manifest model and name rules, the bundle archive
format, functions.json as a typed FunctionSpec, version order. Everything here is
plain data and pure functions, with three shared pieces of plumbing: the database
engine (database.py), the HTTP error envelope (http.py) and the gallery client
(gallery_client.py). It imports nothing of dreamer but sdk/replies.py (the reply
templates' grammar that a worker reads too).
"""
