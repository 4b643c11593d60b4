"""How much one Chameleon ``apply`` costs on a small and on the largest board.

Run ``python bench/games/chameleon_apply.py``. It prints one line; the two times should be close,
because apply copies a few compact arrays and updates a union-find instead of scanning the board.
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

from pbmserv.games.chameleon import GAME, ChameleonState, Place

_REPEATS = 200  # applies timed together, so the clock's resolution does not matter


def _mid_game(size: int, rng: random.Random) -> ChameleonState:
    """A random position with 30-50% of the cells filled and nobody having won."""
    while True:
        state = GAME.new_game({"size": size}, rng)
        cells = [(c, r) for c in range(size) for r in range(size)]
        rng.shuffle(cells)
        for col, row in cells[: int(size * size * rng.uniform(0.3, 0.5))]:
            state = GAME.apply(state, Place(col, row, rng.choice("xo")), rng)
            if GAME.outcome(state) is not None:
                break
        else:
            return state


def median_apply_seconds(size: int, samples: int) -> float:
    """Median time of one ``apply`` of a random legal placement, over ``samples`` random
    mid-game positions on a ``size`` x ``size`` board."""
    rng = random.Random(size)
    times = []
    for _ in range(samples):
        state = _mid_game(size, rng)
        move = rng.choice([m for m in GAME.legal_moves(state, state.ply % 2) if m != "swap"])
        apply = GAME.apply
        start = time.perf_counter()
        for _ in range(_REPEATS):
            apply(state, move, rng)
        times.append((time.perf_counter() - start) / _REPEATS)
    return statistics.median(times)


def main() -> None:
    """Print the median apply time at 7x7 and 26x26 and their ratio."""
    small = median_apply_seconds(7, 300)
    large = median_apply_seconds(26, 300)
    print(
        f"chameleon apply median: 7x7 {small * 1e6:.1f} us, 26x26 {large * 1e6:.1f} us, "
        f"ratio {large / small:.2f}"
    )


if __name__ == "__main__":
    main()
