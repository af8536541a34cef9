"""`dreamer gallery serve`: a gallery server, started from the CLI the way `dreamer up` starts a kernel."""

from __future__ import annotations

from pathlib import Path


def serve_gallery(host: str, port: int, home: Path, database_url: str | None, invite: str | None) -> None:
    import uvicorn

    from dreamer.gallery.app import create_app
    from dreamer.gallery.rules import GallerySettings

    settings = GallerySettings.at(home, database_url, invite=invite)
    uvicorn.run(create_app(settings), host=host, port=port, log_level="warning")
