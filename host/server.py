"""`dreamer up` and `python -m dreamer.host.server [HOST] [PORT]`: serve a whole installation."""

from __future__ import annotations

import sys

from dreamer.host.build import create_app
from dreamer.kernel import server


def serve(host: str, port: int) -> None:
    server.serve(host, port, create_app)


if __name__ == "__main__":
    serve(sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1", int(sys.argv[2]) if len(sys.argv) > 2 else 8700)
