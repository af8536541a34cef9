"""The `dreamer` command: a client of the kernel's HTTP API (and `dreamer up`, which starts it)."""

from __future__ import annotations

import sys

import typer

from dreamer.cli.commands import register_all

app = typer.Typer(
    name="dreamer",
    help="dreamer: an operating system for personal agents.",
    no_args_is_help=True,
    add_completion=False,
    # Errors are one sentence, never a traceback; see commands.common.guarded.
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
register_all(app)


def main() -> None:
    """Console-script entry point."""
    try:
        app(prog_name="dreamer")
    except SystemExit:
        raise
    except KeyboardInterrupt:
        sys.stderr.write("Interrupted.\n")
        sys.exit(130)
    except Exception as exc:  # noqa: BLE001 - last line of defence: one sentence, exit 1
        sys.stderr.write(f"error: unexpected failure ({type(exc).__name__}): {exc}\n")
        sys.exit(1)


if __name__ == "__main__":
    main()
