"""The whole syscall table, as Kernel.build hands it to the invoker.

events.emit and tasks.create live in modules that import the invoker's types, so
they join the table here, above both, instead of being imported by syscalls.py on
first use (which made a cycle: invocations.invoker → syscalls → tasks → invoker).
"""

from __future__ import annotations

from dreamer.kernel.invocations.syscalls import Handler, default_table
from dreamer.kernel.tasks.syscall import tasks_create
from dreamer.kernel.triggers.events import events_emit


def syscall_table() -> dict[str, Handler]:
    return {**default_table(), "events.emit": events_emit, "tasks.create": tasks_create}
