"""An MCP registry `server.json` wrapped as a tool bundle (`dreamer install server.json`).

Remote servers (`remotes` of type streamable-http) become `server: {url: ...}`; the
headers they declare are not copied (their values are the user's secrets, set later with
`dreamer tools headers`), only named in the description. A stdio package of registry
type `pypi` becomes `server: {command: [python, -m, MODULE]}` and runs in the sandbox,
which has no network: the package must already be installed next to the kernel.
Other package registries (npm, oci, nuget, ...) are refused: not built yet.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from dreamer.contracts.errors import DreamerError

MAX_SERVER_JSON_BYTES = 256 * 1024
_SEMVER = re.compile(r"^\d+\.\d+\.\d+([-+][0-9A-Za-z.+-]+)?$")


def _bad(problem: str) -> DreamerError:
    return DreamerError("invalid_bundle", f"server.json: {problem}")


def _slug(text: str, fallback: str) -> str:
    slug = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")
    slug = re.sub(r"-{2,}", "-", slug)
    if not slug or not slug[0].isalpha():
        slug = f"{fallback}-{slug}".strip("-")
    return slug[:63] if len(slug) >= 2 else fallback


def manifest_from_server_json(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise _bad("must be a JSON object")
    full = data.get("name")
    if not isinstance(full, str) or not full:
        raise _bad("needs a 'name' such as io.github.owner/server")
    namespace, _, short = full.rpartition("/")
    version = data.get("version")
    if not isinstance(version, str) or not _SEMVER.match(version):
        raise _bad(f"version {str(version)[:40]!r} is not a semantic version (1.2.3)")
    description = data["description"] if isinstance(data.get("description"), str) else ""
    server: dict[str, Any] | None = None
    notes = []
    for remote in data.get("remotes") or []:
        if isinstance(remote, dict) and remote.get("type") == "streamable-http" and isinstance(remote.get("url"), str):
            if not re.match(r"^https?://\S+$", remote["url"]):
                raise _bad(f"remote url {remote['url'][:80]!r} is not an http(s) URL")
            server = {"url": remote["url"]}
            names = [h["name"] for h in remote.get("headers") or [] if isinstance(h, dict) and isinstance(h.get("name"), str)]
            if names:
                notes.append(f"Needs headers set with `dreamer tools headers`: {', '.join(names)}.")
            break
    if server is None:
        for package in data.get("packages") or []:
            if not isinstance(package, dict) or (package.get("transport") or {}).get("type") != "stdio":
                continue
            if package.get("registryType") != "pypi":
                raise _bad(f"stdio packages from {str(package.get('registryType'))[:20]!r} are not built yet; only pypi packages installed next to the kernel, or remote servers")
            identifier = package.get("identifier")
            if not isinstance(identifier, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,100}", identifier):
                raise _bad("a pypi package needs an 'identifier'")
            args = [a["value"] for a in package.get("packageArguments") or [] if isinstance(a, dict) and isinstance(a.get("value"), str)]
            server = {"command": ["python", "-m", identifier.replace("-", "_"), *args]}
            break
    if server is None:
        raise _bad("has neither a streamable-http remote nor a stdio pypi package")
    text = (description or f"The MCP server {full}.") + (" " + " ".join(notes) if notes else "")
    return {
        "name": _slug(short or full, "mcp"), "version": version, "kind": "tool",
        "title": (data["title"] if isinstance(data.get("title"), str) else short or full)[:100],
        "description": text[:2000], "publisher": _slug(namespace or "registry", "mcp"), "server": server,
    }


def bundle_from_server_json(path: Path, dest: Path) -> Path:
    """Write a tool bundle folder for `path` (a server.json) under dest; returns the folder."""
    if path.stat().st_size > MAX_SERVER_JSON_BYTES:
        raise _bad(f"is larger than {MAX_SERVER_JSON_BYTES // 1024} KiB")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise _bad("is not valid JSON") from None
    manifest = manifest_from_server_json(data)
    folder: Path = dest / manifest["name"]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "agent.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    (folder / "server.json").write_text(json.dumps(data, indent=2))
    return folder
