"""Maps each top-level folder to dreamer.<folder>; metadata lives in pyproject.toml."""

from pathlib import Path

from setuptools import setup

FOLDERS = ["contracts", "kernel", "sidekick", "sdk", "cli", "agents", "gallery", "web", "host"]
# Files that are not Python but ship with the code: starter bundles, migrations, pages.
# skills/*/SKILL.md: a tool bundle's Agent Skills, in folders that are not packages.
DATA = ["*.yaml", "*.json", "*.md", "*.ini", "*.mako", "*.html", "*.css", "*.js", "*.svg", "*.txt", "skills/*/*.md"]

ROOT = Path(__file__).parent


def _packages() -> tuple[list[str], dict[str, str], dict[str, list[str]]]:
    packages: list[str] = []
    package_dir: dict[str, str] = {}
    package_data: dict[str, list[str]] = {}
    for folder in FOLDERS:
        for init in sorted((ROOT / folder).rglob("*")):
            if not init.is_dir() and init.name != "__init__.py":
                continue
            path = init if init.is_dir() else init.parent
            if "__pycache__" in path.parts:
                continue
            rel = path.relative_to(ROOT)
            name = "dreamer." + ".".join(rel.parts)
            if name in package_dir:
                continue
            packages.append(name)
            package_dir[name] = str(rel)
            package_data[name] = DATA
    return packages, package_dir, package_data


packages, package_dir, package_data = _packages()
setup(packages=packages, package_dir=package_dir, package_data=package_data)
