"""The cost of one move in every registered game, early and late in a game.

Run ``python bench/games/games_apply.py``. For each game (default options) it plays random games
with the conformance kit's playout and times ``apply`` of a legal move in positions from the first
and the last fifth of each game. It prints one line a game: the median microseconds early and late
and their ratio, which should stay near 1 (a move costs the same whatever the game's length, a STYLE
rule).
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

try:
    import pbmserv  # noqa: F401
except ImportError:  # run from a checkout without installing the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pbmserv.games import all_games
from pbmserv.games.base import Game, move_rng
from pbmserv.games.testing import random_playout

_REPEATS = 50  # applies timed together, so the clock's resolution does not matter


def _apply_micros(game: Game, state: object, rng: random.Random) -> float | None:
    seats = sorted(game.to_move(state).seats)
    if not seats:
        return None
    move = rng.choice(game.legal_moves(state, seats[0]))
    generator = move_rng(0, 0)
    start = time.perf_counter()
    for _ in range(_REPEATS):
        game.apply(state, move, generator)
    return (time.perf_counter() - start) / _REPEATS * 1e6


def measure(game: Game, games: int = 6) -> tuple[float, float]:
    """Median apply time (microseconds) in the first and the last fifth of random games."""
    rng = random.Random(game.SPEC.name)
    early: list[float] = []
    late: list[float] = []
    options = game.validate_options({}, game.SPEC.players)
    for seed in range(games):
        states = random_playout(game, options, seed).states[:-1]
        fifth = max(1, len(states) // 5)
        for bucket, chosen in ((early, states[:fifth]), (late, states[-fifth:])):
            for state in chosen[:40]:
                micros = _apply_micros(game, state, rng)
                if micros is not None:
                    bucket.append(micros)
    return statistics.median(early), statistics.median(late)


def main() -> None:
    for game in all_games():
        early, late = measure(game)
        print(
            f"{game.SPEC.name:<11} apply median: early {early:7.1f} us, late {late:7.1f} us, "
            f"late/early {late / early:.2f}"
        )


if __name__ == "__main__":
    main()
