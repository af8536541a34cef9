"""What runs inside the zygote and its forks: the standard library and dreamer.sdk only.

The zygote imports this package under the top-level name `dreamer_forkserver` (see
../server.py), from a private folder that holds nothing else of the kernel, so it never
loads kernel code, settings or data. The modules use relative imports only, so they are
the same files when the kernel imports them as `dreamer.kernel.sandbox.forkserver.child`
(to check them with mypy and to test them).
"""
