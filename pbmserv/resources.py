"""Where the templates and migrations live: the source tree, or inside an installed wheel."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _find(name: str) -> Path:
    for candidate in (_PACKAGE.parent / name, _PACKAGE / f"_{name}"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"cannot find the {name} folder near {_PACKAGE}")


def templates_dir() -> Path:
    return _find("templates")


def migrations_dir() -> Path:
    return _find("migrations")
