"""Skills of a tool bundle: `skills/<name>/SKILL.md`, checked against the Agent Skills rules.

The file starts with YAML front matter holding `name` (the folder's name, lowercase
letters, digits and hyphens, at most 64 characters, no leading, trailing or double
hyphen) and `description` (non-empty, at most 1024 characters); the Markdown after it
is the instructions a model reads when the tool is in use.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from dreamer.contracts.errors import DreamerError

SKILL_NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_SKILL_BYTES = 64 * 1024
MAX_SKILLS = 32


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    body: str

    def as_dict(self) -> dict[str, str]:
        return {"name": self.name, "description": self.description, "body": self.body}


def _bad(where: str, problem: str) -> DreamerError:
    return DreamerError("invalid_bundle", f"{where}: {problem}")


def parse_skill(text: str, folder: str) -> Skill:
    where = f"skills/{folder}/SKILL.md"
    if not text.startswith("---"):
        raise _bad(where, "must start with YAML front matter between '---' lines")
    parts = text.split("\n---", 1)
    head = parts[0][3:]
    if len(parts) < 2:
        raise _bad(where, "the front matter is not closed with a '---' line")
    body = parts[1].split("\n", 1)[1] if "\n" in parts[1] else ""
    try:
        meta: Any = yaml.safe_load(head)
    except yaml.YAMLError:
        raise _bad(where, "the front matter is not valid YAML") from None
    if not isinstance(meta, dict):
        raise _bad(where, "the front matter must be a mapping with name and description")
    name, description = meta.get("name"), meta.get("description")
    if not isinstance(name, str) or not name:
        raise _bad(where, "front matter needs a 'name'")
    if len(name) > MAX_NAME or not SKILL_NAME.fullmatch(name):
        raise _bad(where, f"name {name[:80]!r} must be lowercase letters, digits and single hyphens, at most {MAX_NAME} characters")
    if name != folder:
        raise _bad(where, f"name {name!r} must match its folder name {folder!r}")
    if not isinstance(description, str) or not description.strip():
        raise _bad(where, "front matter needs a non-empty 'description'")
    if len(description) > MAX_DESCRIPTION:
        raise _bad(where, f"description is longer than {MAX_DESCRIPTION} characters")
    return Skill(name=name, description=description.strip(), body=body.strip())


def load_skills(bundle: Path) -> list[Skill]:
    """Every skill of a bundle, validated; a bundle without skills/ has none."""
    root = bundle / "skills"
    if not root.exists():
        return []
    if not root.is_dir() or root.is_symlink():
        raise _bad("skills", "must be a folder of skill folders")
    folders = sorted(p for p in root.iterdir())
    if len(folders) > MAX_SKILLS:
        raise _bad("skills", f"a tool bundle may have at most {MAX_SKILLS} skills")
    skills = []
    for folder in folders:
        if not folder.is_dir():
            raise _bad(f"skills/{folder.name}", "must be a folder holding SKILL.md")
        path = folder / "SKILL.md"
        if not path.is_file():
            raise _bad(f"skills/{folder.name}", "has no SKILL.md")
        if path.stat().st_size > MAX_SKILL_BYTES:
            raise _bad(f"skills/{folder.name}/SKILL.md", f"is larger than {MAX_SKILL_BYTES // 1024} KiB")
        skills.append(parse_skill(path.read_text(encoding="utf-8", errors="replace"), folder.name))
    return skills
