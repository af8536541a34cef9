"""What every command shares: the --json and --user options, the client, error handling."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import typer

from dreamer.cli.client import CLIError, Client
from dreamer.cli.config import load_config
from dreamer.cli.output import Output

JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")]
UserOpt = Annotated[
    str | None,
    typer.Option("--user", metavar="NAME", help="Act as user NAME (administrators only; audited)."),
]
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Approve without asking.")]

F = TypeVar("F", bound=Callable[..., Any])


def guarded(fn: F) -> F:
    """Turn every failure of a command into one sentence (or {"error": ...}) and exit 1.

    Reads the command's own `json_out` argument to pick the error format, so the
    wrapped function must take it as a keyword (typer always passes keywords).
    """

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        out = Output(bool(kwargs.get("json_out", False)))
        try:
            return fn(*args, **kwargs)
        except (typer.Exit, typer.Abort):
            raise
        except CLIError as err:
            out.error(err.code, err.message)
            raise typer.Exit(err.exit_code) from None
        except KeyboardInterrupt:
            out.error("interrupted", "Interrupted.")
            raise typer.Exit(130) from None
        except Exception as exc:  # noqa: BLE001 - the promise is: never a traceback
            out.error("internal", f"Unexpected failure ({type(exc).__name__}): {exc}")
            raise typer.Exit(1) from None

    return wrapper  # type: ignore[return-value]


def client(user: str | None = None) -> Client:
    config = load_config()
    return Client(config.url, config.token, act_as=user)


def confirm(question: str, yes: bool, refusal: str) -> None:
    """Ask [y/N] on the terminal unless --yes; without a terminal, demand --yes.

    The prompt goes to stderr so `--json` output on stdout stays one document.
    """
    if yes:
        return
    if not sys.stdin.isatty():
        raise CLIError("confirmation_required", refusal)
    if not typer.confirm(question, default=False, err=True):
        raise CLIError("cancelled", "Cancelled; nothing was changed.")
