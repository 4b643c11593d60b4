"""The registry of games: every module in this package that defines ``GAME`` is a game."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from pbmserv.games.base import Game

_NOT_GAMES = {"base", "testing"}


@cache
def _registry() -> dict[str, Game]:
    by_name: dict[str, Game] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name in _NOT_GAMES or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        game = getattr(module, "GAME", None)
        if isinstance(game, Game):
            for key in (game.SPEC.name, *game.SPEC.aliases):
                by_name[key.lower()] = game
    return by_name


def all_games() -> list[Game]:
    """Every registered game, sorted by name."""
    unique = {id(g): g for g in _registry().values()}
    return sorted(unique.values(), key=lambda g: g.SPEC.name)


def find_game(name: str) -> Game | None:
    """The game called ``name`` (or one of its aliases), case-insensitive; None if unknown."""
    return _registry().get(name.strip().lower())
