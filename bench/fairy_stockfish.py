"""Fairy-Stockfish as an opponent of the robots in Extinction chess: an engine nobody here wrote.

A player named ``fsf<skill>d<depth>`` (``fsf20d1``, ``fsf-20d1``) or ``fsf<skill>n<nodes>``
(``fsf0n200``) is the Debian package's ``fairy-stockfish`` at that UCI ``Skill Level`` (-20 ..
20), searching to that depth or that many nodes, driven through python-chess's UCI client with
``UCI_Variant`` set to ``extinction`` (our board's ``uci_variant``). One engine process a
bench process, reused from game to game (``ucinewgame`` between games is python-chess's).

Installing it: ``apt-get install fairy-stockfish`` (it lands in /usr/games); or name the
binary in ``PBMSERV_FAIRY_STOCKFISH``.

Fairy-Stockfish and we differ on purpose in one place (a move that makes a kind of each side
extinct: we give the game to the mover, as the inventor did), so the games are judged by our
rules, whatever the engine thinks of the position.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import chess
import chess.engine

_NAME = re.compile(r"fsf(-?\d+)([dn])(\d+)")
#: Where Debian puts it (not on a non-root PATH).
_DEBIAN = Path("/usr/games/fairy-stockfish")


@dataclass(frozen=True)
class EngineSetting:
    """A skill level and a limit of one move's search."""

    skill: int
    depth: int | None = None
    nodes: int | None = None

    def limit(self) -> chess.engine.Limit:
        return chess.engine.Limit(depth=self.depth, nodes=self.nodes)


def engine_setting(name: str) -> EngineSetting | None:
    """The setting a player's name asks for, None if the name is not an engine's; a name that
    looks like one but is out of range stops the run."""
    match = _NAME.fullmatch(name)
    if match is None:
        return None
    skill, kind, amount = int(match.group(1)), match.group(2), int(match.group(3))
    if not -20 <= skill <= 20 or amount < 1:
        raise SystemExit(f"{name!r}: Skill Level is -20..20, and a depth or node count >= 1")
    return EngineSetting(skill, depth=amount) if kind == "d" else EngineSetting(skill, nodes=amount)


def engine_path() -> str | None:
    """The engine binary, or None when it is not installed."""
    named = os.environ.get("PBMSERV_FAIRY_STOCKFISH")
    if named:
        return named
    found = shutil.which("fairy-stockfish")
    if found:
        return found
    return str(_DEBIAN) if _DEBIAN.exists() else None


#: The engine of each binary, by the process that started it: a process forked from one that
#: had an engine (bench/robots.py --jobs) starts its own, the parent's driver thread being
#: gone in the child.
_ENGINES: dict[tuple[int, str], chess.engine.SimpleEngine] = {}


def _engine() -> chess.engine.SimpleEngine:
    path = engine_path()
    if path is None:
        raise SystemExit("fairy-stockfish is not installed: apt-get install fairy-stockfish")
    key = (os.getpid(), path)
    engine = _ENGINES.get(key)
    if engine is None:
        engine = _ENGINES[key] = chess.engine.SimpleEngine.popen_uci(path)
    return engine


def close_engines() -> None:
    """Stop this process's engines. A pool's worker must, before it exits: its exit waits for
    every thread, the engine's driver among them, before atexit would have stopped it."""
    for key in [key for key in _ENGINES if key[0] == os.getpid()]:
        _ENGINES.pop(key).quit()


@functools.cache
def engine_identity() -> str:
    """The engine's name and version as it gives them (``id name``), to tell records apart.
    Asked of an engine started for it and stopped at once: a process that forks workers
    (--jobs) must hold no engine, whose driver thread a forked child would wait on forever."""
    path = engine_path()
    if path is None:
        raise SystemExit("fairy-stockfish is not installed: apt-get install fairy-stockfish")
    engine = chess.engine.SimpleEngine.popen_uci(path)
    try:
        return str(engine.id.get("name", "unknown engine"))
    finally:
        engine.quit()


def engine_move(setting: EngineSetting, board: chess.Board) -> chess.Move:
    """The engine's move in ``board`` (an ExtinctionBoard: python-chess sets UCI_Variant)."""
    engine = _engine()
    options: dict[str, Any] = {"Skill Level": setting.skill}
    played = engine.play(board, setting.limit(), options=options)
    if played.move is None:
        raise RuntimeError(f"the engine gave no move in {board.fen()}")
    return played.move
