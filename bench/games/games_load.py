"""What loading (and dumping) a stored state costs, early and late in a game, for every game.

Run ``python bench/games/games_load.py``. For each game (default options) it plays random games with
the conformance kit's playout, keeps the longest, and times ``load`` of the stored JSON (as the
database gives it back) and ``dump`` at ply 5 and at the last position before the end. It
prints one line a game: the plies, the median microseconds of both and the late/early ratio of
load, which should stay near 1 (issue 16: a stored state costs the same at move 5 and 500).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

try:
    import pbmserv  # noqa: F401
except ImportError:  # run from a checkout without installing the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pbmserv.games import all_games
from pbmserv.games.base import Game
from pbmserv.games.testing import random_playout

_REPEATS = 50  # calls timed together, so the clock's resolution does not matter
_ROUNDS = 15  # the median of these rounds is printed
_EARLY = 5


def _micros(call: object, arg: object) -> float:
    rounds = []
    for _ in range(_ROUNDS):
        start = time.perf_counter()
        for _ in range(_REPEATS):
            call(arg)  # type: ignore[operator]
        rounds.append((time.perf_counter() - start) / _REPEATS * 1e6)
    return statistics.median(rounds)


def _longest(game: Game, games: int) -> list[Any]:
    options = game.validate_options({}, game.SPEC.players)
    playouts = [random_playout(game, options, seed) for seed in range(games)]
    best = max(playouts, key=lambda p: len(p.steps))
    return [step.before for step in best.steps]


def measure(game: Game, games: int = 8) -> dict[str, float]:
    """Load and dump microseconds at ply 5 and at the last position of the longest of
    ``games`` random games (the one before the final move, so that the game is not over)."""
    states = _longest(game, games)
    figures: dict[str, float] = {}
    for label, index in (("early", min(_EARLY, len(states) - 1)), ("late", len(states) - 1)):
        state = states[index]
        stored = json.loads(json.dumps(game.dump(state)))  # what the JSON column gives back
        if game.dump(game.load(stored)) != stored:
            raise SystemExit(f"{game.SPEC.name}: load/dump round trip differs at {index}")
        figures[f"{label}_ply"] = index
        figures[f"{label}_load"] = _micros(game.load, stored)
        figures[f"{label}_dump"] = _micros(game.dump, state)
    return figures


def main() -> None:
    for game in all_games():
        f = measure(game)
        print(
            f"{game.SPEC.name:<11} load: ply {f['early_ply']:>3.0f} {f['early_load']:7.1f} us, "
            f"ply {f['late_ply']:>3.0f} {f['late_load']:7.1f} us, "
            f"late/early {f['late_load'] / f['early_load']:.2f}; "
            f"dump {f['early_dump']:6.1f} -> {f['late_dump']:6.1f} us"
        )


if __name__ == "__main__":
    main()
