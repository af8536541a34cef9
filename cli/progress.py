"""A transfer progress bar on stderr (so --json output on stdout stays one document)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from dreamer.cli.output import Output
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TransferSpeedColumn,
)


@contextmanager
def transfer(out: Output, label: str) -> Iterator[Callable[[int, int], None]]:
    with Progress(
        TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
        console=out.err, transient=True,
    ) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update
