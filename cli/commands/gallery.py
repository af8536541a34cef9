"""Publishing and finding agents: `keys`, `login`, `publish`, `yank`, `search`, `gallery serve`.

Publishing talks to the gallery directly (it is the builder's own identity, not the
kernel's); searching and installing go through the kernel, which points at its galleries.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from dreamer.cli.client import CLIError
from dreamer.cli.commands.bundles import MAX_ARCHIVE_BYTES, manifest_fields, needs_build, pack_folder, read_archive, write_functions
from dreamer.cli.commands.common import JsonOpt, UserOpt, YesOpt, client, guarded
from dreamer.cli.output import Output, cell_text, make_table
from dreamer.cli.progress import transfer
from dreamer.cli.publisher import key_path, login_for, save_login
from rich.markup import escape

GalleryOpt = Annotated[str | None, typer.Option("--gallery", metavar="URL", help="The gallery (default: the one you are logged in to).")]


def _cli_error(exc: Any) -> CLIError:
    """A DreamerError from the gallery code (which the CLI shares) as the CLI's own error."""
    return CLIError(exc.code, exc.message)


# ------------------------------------------------------------------------ keys

keys_app = typer.Typer(help="Your publisher signing key (ed25519).", no_args_is_help=True)


def _key_info(key: Any) -> dict[str, str]:
    from dreamer.contracts.signing import fingerprint, public_key_text

    public = public_key_text(key.public_key())
    return {"path": str(key_path()), "public_key": public, "fingerprint": fingerprint(public)}


@keys_app.command("generate")
@guarded
def keys_generate(
    force: Annotated[bool, typer.Option("--force", help="Replace an existing key.")] = False,
    json_out: JsonOpt = False, user: UserOpt = None,
) -> None:
    """Make a publisher key (kept 0600 under your config folder)."""
    from dreamer.contracts.signing import generate_key
    from dreamer.contracts.errors import DreamerError

    out = Output(json_out)
    try:
        info = _key_info(generate_key(key_path(), overwrite=force))
    except DreamerError as exc:
        raise _cli_error(exc) from None
    if json_out:
        out.json(info)
        return
    out.say(f"Made a publisher key at {escape(info['path'])} (fingerprint {info['fingerprint']}).")


@keys_app.command("show")
@guarded
def keys_show(json_out: JsonOpt = False, user: UserOpt = None) -> None:
    """Print your public key and its fingerprint."""
    from dreamer.contracts.signing import load_key
    from dreamer.contracts.errors import DreamerError

    out = Output(json_out)
    try:
        info = _key_info(load_key(key_path()))
    except DreamerError as exc:
        raise _cli_error(exc) from None
    if json_out:
        out.json(info)
        return
    out.say(f"public key  {info['public_key']}\nfingerprint {info['fingerprint']}\nkey file    {escape(info['path'])}")


# ----------------------------------------------------------------------- login


def login(
    url: Annotated[str, typer.Argument(metavar="GALLERY_URL", help="The gallery, e.g. http://127.0.0.1:8800.")],
    name: Annotated[str, typer.Option("--name", help="Your publisher name on that gallery (the `publisher:` of your agent.yaml).")],
    token: Annotated[str | None, typer.Option("--token", help="A token you already have (skips registering).")] = None,
    invite: Annotated[str | None, typer.Option("--invite", help="The gallery's invite, when it registers by invitation.")] = None,
    json_out: JsonOpt = False, user: UserOpt = None,
) -> None:
    """Register as a publisher on a gallery (making a key if you have none) and keep its token."""
    from dreamer.contracts.gallery_client import GalleryClient
    from dreamer.contracts.signing import generate_key, load_key
    from dreamer.contracts.errors import DreamerError

    out = Output(json_out)
    try:
        key = load_key(key_path()) if key_path().exists() else generate_key(key_path())
        info = _key_info(key)
        if token is None:
            with GalleryClient(url) as gallery:
                token = gallery.register(name, info["public_key"], invite)["token"]
    except DreamerError as exc:
        raise _cli_error(exc) from None
    saved = save_login(url, name, str(token))
    if json_out:
        out.json({"gallery": url.rstrip("/"), "publisher": name, "fingerprint": info["fingerprint"], "saved": str(saved)})
        return
    out.say(f"Logged in to {escape(url)} as publisher [bold]{escape(name)}[/] (key {info['fingerprint']}); token saved in {escape(str(saved))}.")


# --------------------------------------------------------------------- publish


def _refuse_placeholders(manifest: dict[str, Any], where: Path) -> None:
    """A gallery listing shows these fields to everyone: the scaffold's placeholders may not go out."""
    from dreamer.sdk.templates import PLACEHOLDER_PUBLISHER, placeholder_fields

    problems = placeholder_fields(manifest)
    if "description" in problems:
        raise CLIError("invalid_bundle", f"fill in `description:` in {where}: one or two sentences saying what the agent "
                                         "does for the person who installs it (it is what the gallery shows).")
    if "publisher" in problems:
        raise CLIError("invalid_bundle", f"set `publisher:` in {where} to your publisher name on the gallery "
                                         f"(the --name you gave `dreamer login`), not {PLACEHOLDER_PUBLISHER!r}.")
    if "title" in problems:
        raise CLIError("invalid_bundle", f"fill in `title:` in {where}: the agent's name as people read it.")


def publish(
    path: Annotated[Path, typer.Argument(help="The bundle folder or .tar.gz (default: the current folder).")] = Path("."),
    gallery: GalleryOpt = None, json_out: JsonOpt = False, user: UserOpt = None,
) -> None:
    """Build if needed, sign with your key, and upload to the gallery."""
    from dreamer.contracts.gallery_client import GalleryClient
    from dreamer.contracts.gallery_upload import signed_upload
    from dreamer.contracts.signing import load_key
    from dreamer.contracts.errors import DreamerError

    out = Output(json_out)
    if path.is_dir():
        _refuse_placeholders(manifest_fields(path), path / "agent.yaml")
    url, login_info = login_for(gallery)
    if path.is_dir():
        if needs_build(path):
            out.note(f"Building {escape(str(path))} (functions.json is missing or older than the code)...")
            write_functions(path, user)
        data = pack_folder(path)
    elif path.is_file():
        data = read_archive(path)
    else:
        raise CLIError("not_found", f"no such file or folder: {path}")
    if len(data) > MAX_ARCHIVE_BYTES:
        raise CLIError("payload_too_large", f"the packed bundle is {len(data)} bytes; galleries take at most {MAX_ARCHIVE_BYTES} bytes, so leave large files out.")
    try:
        key = load_key(key_path())
        upload, facts = signed_upload(data, key)
    except DreamerError as exc:
        raise _cli_error(exc) from None
    _refuse_placeholders(facts.manifest, Path("agent.yaml"))
    if facts.publisher != login_info.get("publisher"):
        raise CLIError(
            "invalid_bundle", f"agent.yaml says publisher {facts.publisher!r}, but you are publisher "
            f"{login_info.get('publisher')!r} on {url}; change `publisher:` in agent.yaml."
        )
    try:
        with GalleryClient(url, str(login_info.get("token") or "")) as api, transfer(out, f"Uploading {facts.name} {facts.version}") as progress:
            listed = api.publish(upload, data, progress)
    except DreamerError as exc:
        raise _cli_error(exc) from None
    if json_out:
        out.json(listed)
        return
    out.say(
        f"Published [bold]{escape(facts.name)}[/] {escape(facts.version)} to {escape(url)} "
        f"({len(data)} bytes, sha256 {facts.sha256[:16]}..., signed by {listed['publisher']['fingerprint']})."
    )


def yank(
    ref: Annotated[str, typer.Argument(metavar="NAME@VERSION")],
    reason: Annotated[str, typer.Option("--reason", help="Why (shown to people who install it by version).")] = "",
    undo: Annotated[bool, typer.Option("--undo", help="Offer the version again.")] = False,
    gallery: GalleryOpt = None, json_out: JsonOpt = False, user: UserOpt = None,
) -> None:
    """Stop offering a published version for new installs (it stays downloadable by exact version)."""
    from dreamer.contracts.gallery_client import GalleryClient
    from dreamer.contracts.errors import DreamerError

    out = Output(json_out)
    name, _, version = ref.partition("@")
    if not version:
        raise CLIError("invalid_argument", f"name the version to yank, like {name}@1.0.0.")
    url, login_info = login_for(gallery)
    try:
        with GalleryClient(url, str(login_info.get("token") or "")) as api:
            answer = api.yank(name, version, reason, undo)
    except DreamerError as exc:
        raise _cli_error(exc) from None
    if json_out:
        out.json(answer)
        return
    out.say(f"{'Restored' if undo else 'Yanked'} {escape(name)} {escape(version)} on {escape(url)}.")


# ---------------------------------------------------------------------- search


def search(
    query: Annotated[str, typer.Argument(help="Words to look for (name, title, description, functions, examples).")],
    limit: Annotated[int, typer.Option("--limit", min=1, max=100)] = 20,
    json_out: JsonOpt = False, user: UserOpt = None,
) -> None:
    """Search the galleries this kernel points at."""
    out = Output(json_out)
    with client(user) as api:
        hits = api.gallery_search(query, limit)
    if json_out:
        out.json(hits)
        return
    hits = hits if isinstance(hits, list) else []
    if not hits:
        out.say(f"Nothing in the galleries matches {escape(query)!r}.")
        return
    rows = [[h.get("name"), h.get("latest"), h.get("publisher"), cell_text(h.get("description"))[:80]] for h in hits if isinstance(h, dict)]
    out.table(make_table(["name", "version", "publisher", "description"], rows))
    out.say("Install with: dreamer install NAME")


# ------------------------------------------------------------- outdated, upgrade


def outdated(json_out: JsonOpt = False, user: UserOpt = None) -> None:
    """List agents installed from a gallery that offers a newer version."""
    out = Output(json_out)
    with client(user) as api:
        rows = api.gallery_outdated()
    if json_out:
        out.json(rows)
        return
    rows = [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []
    if not rows:
        out.say("Every agent installed from a gallery is up to date.")
        return
    out.table(make_table(["name", "installed", "latest", "gallery"], [[r.get("name"), r.get("installed"), r.get("latest"), r.get("gallery")] for r in rows]))
    out.say("Upgrade with: dreamer upgrade NAME")


def upgrade(
    name: Annotated[str | None, typer.Argument(help="The agent (default: every outdated one).")] = None,
    yes: YesOpt = False, json_out: JsonOpt = False, user: UserOpt = None,
) -> None:
    """Upgrade agents from their gallery: new permissions are shown and asked for; fewer apply at once."""
    from dreamer.cli.commands.bundles import install

    if name is None:
        with client(user) as api:
            rows = api.gallery_outdated()
        names = [str(r["name"]) for r in rows if isinstance(r, dict) and r.get("name")] if isinstance(rows, list) else []
        if not names:
            Output(json_out).say("Every agent installed from a gallery is up to date.")
            if json_out:
                Output(json_out).json([])
            return
    else:
        names = [name]
    for each in names:
        # The ordinary install by name: the review shows only what changed, and the
        # installed version stays until the new one is approved.
        install(path=each, yes=yes, without=None, accept_new_key=False, json_out=json_out, user=user)


# --------------------------------------------------------------------- serve

gallery_app = typer.Typer(help="Run a gallery.", no_args_is_help=True)


@gallery_app.command("serve")
@guarded
def serve(
    host: Annotated[str, typer.Option("--host")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port")] = 8800,
    home: Annotated[Path | None, typer.Option("--home", help="Where archives and gallery.db live (default: $DREAMER_HOME/gallery).")] = None,
    database_url: Annotated[str | None, typer.Option("--database-url", envvar="DREAMER_GALLERY_DATABASE_URL", help="SQLite (default) or PostgreSQL URL.")] = None,
    invite: Annotated[str | None, typer.Option("--invite", envvar="DREAMER_GALLERY_INVITE", help="Register publishers only with this secret.")] = None,
    json_out: JsonOpt = False, user: UserOpt = None,
) -> None:
    """Serve a gallery (its API under /v1, OpenAPI at /openapi.json)."""
    from dreamer.cli.config import dreamer_home
    from dreamer.host.gallery_server import serve_gallery

    folder = (home or dreamer_home() / "gallery").expanduser().resolve()
    Output(json_out).note(f"Gallery at http://{host}:{port} (data in {escape(str(folder))})")
    serve_gallery(host, port, folder, database_url, invite or None)


def register(app: typer.Typer) -> None:
    app.add_typer(keys_app, name="keys")
    app.add_typer(gallery_app, name="gallery")
    app.command("login")(guarded(login))
    app.command("publish")(guarded(publish))
    app.command("yank")(guarded(yank))
    app.command("search")(guarded(search))
    app.command("outdated")(guarded(outdated))
    app.command("upgrade")(guarded(upgrade))
