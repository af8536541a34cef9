"""`dreamer init`, `build`, `install`, `uninstall`: from a folder on disk to an installed agent."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote

import typer
from rich.markup import escape

from dreamer.cli.client import CLIError
from dreamer.contracts.names import NAME, is_name
from dreamer.cli.commands.common import JsonOpt, UserOpt, YesOpt, client, confirm, guarded
from dreamer.cli.review import Review, read_review, render_review, render_tool_review
from dreamer.cli.output import Output, cell_text, make_table

# The scaffold's templates, named as dreamer.sdk.templates.TEMPLATES names them (tests/cli/test_cli_builder_kit.py
# checks): imported from there for this help line, the whole SDK came with them (its package imports pydantic),
# a fifth of every CLI process's start. `dreamer init` imports the SDK when it runs.
TEMPLATE_NAMES = ("plain", "database", "calls", "background", "tool")

GZIP_MAGIC = b"\x1f\x8b"
MAX_ARCHIVE_BYTES = 50 * 1024 * 1024


def pack_folder(folder: Path) -> bytes:
    """The bundle folder as .tar.gz bytes, packed exactly as the kernel expects."""
    # The packer is pure code shared with the kernel; reusing it keeps one archive format.
    from dreamer.contracts.archive import DEFAULT_EXCLUDES, pack
    from dreamer.contracts.errors import DreamerError

    # A bundle's own packed archives (`dreamer pack` writes NAME-VERSION.tar.gz next to
    # agent.yaml) never go inside the next one.
    name = manifest_fields(folder).get("name")
    own = (f"{name}-*.tar.gz",) if isinstance(name, str) and is_name(name) else ()
    try:
        return pack(folder, exclude=(*DEFAULT_EXCLUDES, *own))
    except DreamerError as exc:
        raise CLIError(exc.code, exc.message) from None


def manifest_fields(folder: Path) -> dict[str, Any]:
    """agent.yaml's top-level fields, or {} when it cannot be read (the kernel then says why)."""
    import yaml

    try:
        data = yaml.safe_load((folder / "agent.yaml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return {}
    return data if isinstance(data, dict) else {}


def needs_build(folder: Path) -> bool:
    """Whether functions.json (tools.json for a tool bundle) is missing or older than the code
    or agent.yaml: publish and pack build it first then."""
    kind = manifest_fields(folder).get("kind")
    built_file = folder / ("tools.json" if kind == "tool" else "functions.json")
    if not built_file.is_file():
        return True
    built = built_file.stat().st_mtime
    sources = [folder / "agent.yaml", *(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)]
    return any(p.stat().st_mtime > built for p in sources if p.is_file())


def read_archive(path: Path) -> bytes:
    size = path.stat().st_size
    if size > MAX_ARCHIVE_BYTES:
        raise CLIError("invalid_bundle", f"{path} is {size} bytes; bundles may be at most {MAX_ARCHIVE_BYTES} bytes.")
    data = path.read_bytes()
    if not data.startswith(GZIP_MAGIC):
        raise CLIError("invalid_bundle", f"{path} is neither a bundle folder nor a .tar.gz archive.")
    return data


# ---------------------------------------------------------------------- init


def init(
    name: Annotated[str, typer.Argument(help="The new agent's name (lowercase letters, digits and '-').")],
    folder: Annotated[
        Path | None, typer.Option("--dir", help="Folder to create (default: ./NAME).", file_okay=False)
    ] = None,
    template: Annotated[
        str, typer.Option("--template", "-t", metavar="|".join(TEMPLATE_NAMES),
                          help="plain (a greeting), database (notes in ctx.db), calls (calls the grocery agent), "
                               "background (a cron-triggered background run), tool (an MCP tool server).")
    ] = "plain",
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Create a new agent bundle folder, with tests, from a template."""
    from dreamer.cli.scaffold import ScaffoldError, scaffold

    out = Output(json_out)
    dest = folder if folder is not None else Path.cwd() / name
    try:
        made = scaffold(name, dest, template)
    except ScaffoldError as exc:
        raise CLIError(exc.code, exc.message) from None
    except OSError as exc:
        raise CLIError("invalid_argument", f"cannot create {dest}: {exc.strerror or exc}") from None
    shown = _relative(made)
    if json_out:
        out.json({"name": name, "template": template, "path": str(made.resolve())})
        return
    out.say(f"Created the agent [bold]{escape(name)}[/] ({escape(template)} template) in {escape(shown)}.")
    out.say("Next steps:")
    if shown != ".":
        out.say(f"  cd {escape(shown)}")
    out.say("  dreamer test       # its tests, in the sandbox")
    out.say("  dreamer build      # check it and write functions.json")
    out.say("  dreamer install . --yes  # a path: ./ or a slash; a bare name means the gallery")
    out.say("  dreamer pack       # the .tar.gz to share; fill in description and publisher before `dreamer publish`")


def _relative(path: Path) -> str:
    try:
        rel = path.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        return str(path)
    return f"./{rel}" if str(rel) != "." else "."


# --------------------------------------------------------------------- build


def build(
    path: Annotated[Path, typer.Argument(help="The bundle folder (default: the current folder).")] = Path("."),
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Describe a bundle's functions (in a sandbox on the kernel) and write its functions.json."""
    out = Output(json_out)
    if not path.is_dir():
        raise CLIError("invalid_argument", f"{path} is not a folder; `dreamer build` takes a bundle folder.")
    if not (path / "agent.yaml").is_file():
        raise CLIError("invalid_bundle", f"there is no agent.yaml in {path}; `dreamer init NAME` makes a bundle folder.")
    document, target = write_functions(path, user)
    if json_out:
        out.json(document)
        return
    if "tools" in document:
        count = len(document["tools"])
        out.say(f"Wrote {escape(str(target))} ({count} tool{'s' if count != 1 else ''}).")
        return
    functions = document["functions"]
    out.table(functions_table(functions))
    out.say(f"Wrote {escape(str(target))} ({len(functions)} function{'s' if len(functions) != 1 else ''}).")


def write_functions(path: Path, user: str | None) -> tuple[dict[str, Any], Path]:
    """Have the kernel describe the bundle in its sandbox and write functions.json
    (for a tool bundle: tools.json, the tools its server declares)."""
    archive = pack_folder(path)
    with client(user) as api:
        answer = api.build(archive)
    if isinstance(answer, dict) and "tools" in answer:
        tools = answer["tools"] if isinstance(answer["tools"], list) else []
        document: dict[str, Any] = {"format": 1, "tools": tools}
        target = path / "tools.json"
    else:
        functions = answer.get("functions", []) if isinstance(answer, dict) else []
        document = {"format": 1, "functions": functions}
        target = path / "functions.json"
    try:
        target.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    except OSError as exc:
        raise CLIError("internal", f"cannot write {target}: {exc.strerror or exc}") from None
    return document, target


def functions_table(functions: list[Any]) -> Any:
    rows = []
    for fn in functions:
        if not isinstance(fn, dict):
            continue
        flags = [flag for flag in ("exported", "background", "confirm") if fn.get(flag)]
        description = cell_text(fn.get("description")).strip().splitlines()
        rows.append([fn.get("name"), ", ".join(flags), description[0] if description else ""])
    return make_table(["function", "flags", "description"], rows)


# ---------------------------------------------------------------------- pack


def pack(
    path: Annotated[Path, typer.Argument(help="The bundle folder (default: the current folder).")] = Path("."),
    output: Annotated[
        Path | None, typer.Option("--output", "-o", metavar="FILE", help="Where to write it (default: NAME-VERSION.tar.gz in the bundle folder).")
    ] = None,
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Pack a bundle folder as the .tar.gz that `dreamer install FILE` and the web install page take.

    The same folder always gives the same bytes. functions.json is built first when it is
    missing or older than the code, as `dreamer publish` does.
    """
    import hashlib

    out = Output(json_out)
    if not path.is_dir():
        raise CLIError("invalid_argument", f"{path} is not a folder; `dreamer pack` takes a bundle folder.")
    if not (path / "agent.yaml").is_file():
        raise CLIError("invalid_bundle", f"there is no agent.yaml in {path}; `dreamer init NAME` makes a bundle folder.")
    fields = manifest_fields(path)
    name, version = fields.get("name"), fields.get("version")
    if not isinstance(name, str) or not isinstance(version, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9.+-]*", f"{name}-{version}"):
        raise CLIError("invalid_bundle", f"{path}/agent.yaml needs a `name:` and a `version:` such as 0.1.0.")
    built = needs_build(path)
    if built:
        out.note(f"Building {escape(str(path))} (functions.json is missing or older than the code)...")
        write_functions(path, user)
    data = pack_folder(path)
    if len(data) > MAX_ARCHIVE_BYTES:
        raise CLIError("payload_too_large", f"the packed bundle is {len(data)} bytes; bundles may be at most {MAX_ARCHIVE_BYTES} bytes, so leave large files out.")
    target = output if output is not None else path / f"{name}-{version}.tar.gz"
    if target.is_dir():
        target = target / f"{name}-{version}.tar.gz"
    _write_atomically(target, data)
    sha256 = hashlib.sha256(data).hexdigest()
    if json_out:
        out.json({"path": str(target.resolve()), "name": name, "version": version, "bytes": len(data), "sha256": sha256, "built": built})
        return
    out.say(f"Wrote {escape(_relative(target))} ({len(data)} bytes, sha256 {sha256[:16]}...).")
    out.say(f"Install it with `dreamer install {escape(_relative(target))}`, or upload it on the web app's install page.")


def _write_atomically(target: Path, data: bytes) -> None:
    """Write through a temporary sibling and rename, so a half-written archive is never left."""
    tmp = target.with_name(f".{target.name}.tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
        tmp.replace(target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise CLIError("invalid_argument", f"cannot write {target}: {exc.strerror or exc}") from None


# ------------------------------------------------------------------- install


def install(
    path: Annotated[str, typer.Argument(metavar="PATH|NAME[@VERSION]", help="A bundle folder, a .tar.gz of one, a package in the kernel's galleries, or an MCP registry server.json.")],
    yes: YesOpt = False,
    grant: Annotated[
        list[str] | None,
        typer.Option("--grant", metavar="SCOPE", help="Turn on an optional permission (repeatable); optional ones are off otherwise."),
    ] = None,
    without: Annotated[
        list[str] | None,
        typer.Option("--without", metavar="SCOPE", help="On an upgrade, take back an optional permission granted before (repeatable)."),
    ] = None,
    accept_new_key: Annotated[
        bool, typer.Option("--accept-new-key", help="From a gallery: accept a publisher key other than the one seen before.")
    ] = False,
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Install (or upgrade) an agent after showing what it may do."""
    out = Output(json_out)
    left_out = list(dict.fromkeys(without or []))
    turned_on = list(dict.fromkeys(grant or []))
    # A bare word is judged before the kernel is asked anything.
    package = None if is_local_source(path) else _package_ref(path)
    with client(user) as api:
        if package is not None:
            folder_here = Path(path).is_dir()
            if folder_here:
                out.note(f"{escape(path)} is a gallery name here; to install the folder, say ./{escape(path)}")
            # The kernel downloads and verifies; the transfer happens there, so a spinner here.
            try:
                with out.err.status(f"Downloading and verifying {path} from the gallery..."):
                    staged = api.gallery_install(*package, accept_new_key)
            except CLIError as exc:
                if folder_here and exc.code == "not_found":
                    raise CLIError(exc.code, f"{exc.message.rstrip('.')}; to install the folder {path}, say ./{path}") from None
                raise
            source = None  # the gallery's own line (render_review) names it and its verification
        else:
            local_path = Path(path).expanduser()
            staged = api.stage_bundle(_archive_for(local_path, path))
            source = _local_source_label(local_path, path)
        if not isinstance(staged, dict) or "bundle_id" not in staged:
            raise CLIError("protocol_error", "The kernel's answer to the upload has no bundle_id.")
        review = read_review(staged)
        _check_without(review, left_out)
        _check_grant(review, turned_on, left_out)
        # In --json mode the review still goes to the person, on stderr.
        render_review(out.err if json_out else out.out, review, left_out, turned_on, source=source)
        if review.kind == "tool":
            render_tool_review(out.err if json_out else out.out, staged.get("review"))
        if review.needs_approval:
            question = (
                f"Install {review.name} and grant these permissions?" if review.scopes else f"Install {review.name}?"
            )
            confirm(question, yes, "pass --yes to approve non-interactively")
        installed = api.install(staged["bundle_id"], left_out, turned_on)
    if json_out:
        out.json(installed)
        return
    agent = installed if isinstance(installed, dict) else {}
    name = cell_text(agent.get("name") or review.name)
    version = cell_text(agent.get("version") or review.version)
    verb = "Installed"
    if review.upgrade:
        verb = "Reinstalled" if review.upgrade.from_version == review.upgrade.to_version else "Upgraded"
    out.say(f"{verb} [bold]{escape(name)}[/] {escape(version)}.")
    functions = [f.get("name") for f in agent.get("functions", []) if isinstance(f, dict) and f.get("name")]
    if functions:
        out.say(f"Call it with: dreamer call {escape(name)} {escape(str(functions[0]))}")


_PACKAGE_REF = re.compile(rf"^({NAME})(?:@(\d+\.\d+\.\d+[0-9A-Za-z.+-]*))?$")
_ARCHIVE_SUFFIXES = (".tar.gz", ".tgz")


def is_local_source(text: str) -> bool:
    """`./x`, `../x`, `.`, `~/x`, an absolute path, anything with a slash, a .tar.gz or a .json
    file: a path on this machine. Anything else is a gallery name, even when a folder of that
    name exists here (decision 0043), so `dreamer install hello` means one thing everywhere."""
    return (
        text in (".", "..") or "/" in text or text.startswith("~")
        or text.endswith((*_ARCHIVE_SUFFIXES, ".json"))
    )


def _package_ref(text: str) -> tuple[str, str | None]:
    """NAME or NAME@VERSION, for a source that is not a path."""
    match = _PACKAGE_REF.match(text)
    if match is None:
        hint = f"; to install the folder, say ./{text}" if Path(text).exists() else ""
        raise CLIError("invalid_argument", f"{text!r} is neither a path (./folder, a .tar.gz) nor a gallery name "
                                           f"like grocery or grocery@1.0.0{hint}.")
    return match[1], match[2]


def _local_source_label(path: Path, shown: str) -> str:
    if path.is_dir():
        return f"the local folder {shown}"
    if path.name.endswith(".json"):
        return f"the MCP registry file {shown}"
    return f"the archive {shown}"


def _archive_for(path: Path, shown: str) -> bytes:
    if path.is_dir():
        return pack_folder(path)
    if path.is_file() and path.name.endswith(".json"):
        return _server_json_archive(path)
    if path.is_file():
        return read_archive(path)
    if path.exists():
        raise CLIError("invalid_argument", f"{shown} is neither a bundle folder nor a .tar.gz archive.")
    raise CLIError("not_found", f"no such file or folder: {shown}; a gallery name is written without a slash, like grocery or grocery@1.0.0.")


def _server_json_archive(path: Path) -> bytes:
    """An MCP registry server.json, wrapped as a tool bundle (contracts/serverjson.py)."""
    import tempfile

    from dreamer.contracts.errors import DreamerError
    from dreamer.contracts.serverjson import bundle_from_server_json

    with tempfile.TemporaryDirectory(prefix="dreamer-serverjson-") as tmp:
        try:
            folder = bundle_from_server_json(path, Path(tmp))
        except DreamerError as exc:
            raise CLIError(exc.code, exc.message) from None
        return pack_folder(folder)


def _check_without(review: Review, without: list[str]) -> None:
    """Refuse --without for scopes the bundle does not ask for, or requires, before anything is asked."""
    known = {row.scope: row.required for row in review.scopes}
    for scope in without:
        if scope not in known:
            raise CLIError("invalid_argument", f"{review.name} does not ask for {scope}, so there is nothing to leave out.")
        if known[scope] is True:
            raise CLIError("invalid_argument", f"{scope} is required by {review.name} and cannot be left out.")


def _check_grant(review: Review, grant: list[str], without: list[str]) -> None:
    """Refuse --grant for what the bundle does not offer as optional, before anything is asked
    (a folder under a declared fs:* is the kernel's to judge, so it is passed on)."""
    if review.kind == "tool":
        if grant:
            raise CLIError("invalid_argument", "--grant is for an agent's optional permissions; a tool server's tools are all on (--without switches one off).")
        return
    known = {row.scope: row.required for row in review.scopes}
    for scope in grant:
        if scope in without:
            raise CLIError("invalid_argument", f"{scope} is both in --grant and in --without; say one of them.")
        if known.get(scope) is True:
            continue  # required: granted anyway
        if scope not in known and not scope.startswith(("fs:/", "fs.ro:/")):
            optional = [s for s, required in known.items() if required is False]
            raise CLIError("invalid_argument", f"{review.name} does not ask for {scope}; its optional permissions are: "
                                               f"{', '.join(optional) or 'none'}.")


# ----------------------------------------------------------------- uninstall


def uninstall(
    name: Annotated[str, typer.Argument(help="The installed agent's name.")],
    purge: Annotated[bool, typer.Option("--purge", help="Also delete the agent's data (asks first).")] = False,
    yes: YesOpt = False,
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Uninstall an agent; its data stays unless --purge."""
    out = Output(json_out)
    if purge:
        confirm(
            f"Uninstall {name} and delete all of its data for good?",
            yes,
            "pass --yes to purge non-interactively",
        )
    with client(user) as api:
        answer = api.uninstall(name, purge)
    if json_out:
        out.json(answer)
        return
    purged = bool(answer.get("purged")) if isinstance(answer, dict) else purge
    if purged:
        out.say(f"Uninstalled {escape(name)} and deleted its data.")
    else:
        out.say(f"Uninstalled {escape(name)}; its data is kept (`dreamer uninstall {escape(name)} --purge` deletes it).")


def rollback(
    name: Annotated[str, typer.Argument(help="The installed agent's name.")],
    yes: YesOpt = False,
    json_out: JsonOpt = False,
    user: UserOpt = None,
) -> None:
    """Go back to the version before the latest upgrade, with its permissions and its data as they were then."""
    out = Output(json_out)
    confirm(
        f"Roll {name} back to the version before its latest upgrade? Its data goes back to how it was then "
        "(the newer data is kept aside until the next upgrade).",
        yes,
        "pass --yes to roll back non-interactively",
    )
    with client(user) as api:
        answer = api.post(f"/v1/agents/{quote(name, safe='')}/rollback", {})
    if json_out:
        out.json(answer)
        return
    out.say(f"Rolled {escape(name)} back to {escape(str(answer.get('version')))}; "
            f"it holds: {escape(', '.join(answer.get('grants') or []) or 'no permissions')}.")


def register(app: typer.Typer) -> None:
    app.command("init")(guarded(init))
    app.command("build")(guarded(build))
    app.command("pack")(guarded(pack))
    app.command("install")(guarded(install))
    app.command("uninstall")(guarded(uninstall))
    app.command("rollback")(guarded(rollback))
