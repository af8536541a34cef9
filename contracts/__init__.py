"""Shared contracts: what the kernel, the CLI and the gallery agree on.

Errors and their codes, the manifest model and name rules, the bundle archive
format, functions.json as a typed FunctionSpec, version order. Everything here is
plain data and pure functions; this package imports nothing else of dreamer.
"""
