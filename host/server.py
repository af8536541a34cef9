"""`dreamer up` and `python -m dreamer.host.server [HOST] [PORT]`: serve a whole installation."""

from __future__ import annotations

import sys


def serve(host: str, port: int) -> None:
    # Imported here, not at the top: Sidekick's planning processes are spawned, and a spawned
    # process imports the main module again; this one must cost them nothing.
    from dreamer.host.build import create_app
    from dreamer.kernel import server

    server.serve(host, port, create_app)


if __name__ == "__main__":
    serve(sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1", int(sys.argv[2]) if len(sys.argv) > 2 else 8700)
