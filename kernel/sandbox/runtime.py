"""What a worker needs from the host: the running interpreter, its packages, the SDK.

The sandbox binds exactly these folders read-only, so the worker runs on the same
Python and the same pinned packages as the kernel without seeing anything else.
"""

from __future__ import annotations

import importlib.util
import sys
import sysconfig
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from dreamer.contracts.errors import DreamerError

# Where the SDK package appears inside a bwrap sandbox: /opt/dreamer is put first on
# PYTHONPATH, so `import dreamer.sdk` resolves there and nowhere else in the kernel.
SDK_ROOT_IN_SANDBOX = "/opt/dreamer"
SDK_DIR_IN_SANDBOX = f"{SDK_ROOT_IN_SANDBOX}/dreamer/sdk"

WORKER_MODULE = "dreamer.sdk.worker"


@dataclass(frozen=True)
class Runtime:
    """The interpreter in use and the host folders it needs to run a worker."""

    python: str
    # Folders to bind read-only at their own (resolved) path, outermost first.
    roots: tuple[Path, ...]
    # Paths the interpreter was found through that are symlinks into `roots`:
    # (link, target). Recreated in the sandbox so those paths still resolve.
    links: tuple[tuple[Path, Path], ...]
    # purelib and platlib of the running interpreter, deduplicated.
    site_dirs: tuple[str, ...]
    # The host folder of the dreamer.sdk package.
    sdk_dir: Path

    def worker_argv(self) -> list[str]:
        # -S: no site module, so no .pth files run; the path is exactly PYTHONPATH.
        return [self.python, "-S", "-m", WORKER_MODULE]


def _dedupe(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def _covered(path: Path, roots: list[Path]) -> bool:
    return any(path == root or path.is_relative_to(root) for root in roots)


def _outermost(paths: list[Path], already: list[Path]) -> list[Path]:
    """Drop paths inside another path of the list or inside `already`."""
    kept: list[Path] = []
    for path in sorted(set(paths), key=lambda p: len(p.parts)):
        if not _covered(path, already + kept):
            kept.append(path)
    return kept


def _sdk_dir() -> Path:
    # Located, not imported: the kernel never needs to run the SDK's code itself.
    spec = importlib.util.find_spec("dreamer.sdk")
    if spec is None or spec.origin is None:
        raise DreamerError("sandbox_unavailable", "the dreamer.sdk package is not installed next to the kernel")
    return Path(spec.origin).resolve().parent


@lru_cache(maxsize=1)
def current_runtime() -> Runtime:
    """Computed once per process: the interpreter cannot change under us."""
    if not sys.executable:
        raise DreamerError("sandbox_unavailable", "the kernel's Python has no executable path to start workers with")
    paths = sysconfig.get_paths()
    site_dirs = _dedupe([paths["purelib"], paths["platlib"]])

    wanted = [Path(sys.base_prefix), Path(sys.prefix)]
    links: list[tuple[Path, Path]] = []
    resolved: list[Path] = []
    for path in wanted:
        real = path.resolve()
        resolved.append(real)
        if real != path:
            links.append((path, real))
    executable = Path(sys.executable).resolve()
    resolved.append(executable.parent)
    resolved.extend(Path(site).resolve() for site in site_dirs)

    # /usr is bound on its own by every backend that binds anything.
    roots = _outermost(resolved, [Path("/usr")])
    if Path("/") in roots:
        raise DreamerError(
            "sandbox_unavailable",
            "the kernel's Python is installed at /; use a virtualenv so the sandbox can bind it alone",
        )
    return Runtime(
        python=sys.executable,
        roots=tuple(roots),
        links=tuple(links),
        site_dirs=site_dirs,
        sdk_dir=_sdk_dir(),
    )


def check_not_exposed(runtime: Runtime, protected: list[Path]) -> None:
    """Refuse to bind a runtime folder that would show a protected folder to agents.

    A Python installed in, say, $HOME itself would carry $DREAMER_HOME into every
    sandbox; better to refuse than to leak every user's data.
    """
    for root in runtime.roots:
        for path in protected:
            real = path.resolve()
            if real == root or real.is_relative_to(root):
                raise DreamerError(
                    "sandbox_unavailable",
                    f"the Python runtime folder {root} contains {real}; install dreamer in a virtualenv outside it",
                )

