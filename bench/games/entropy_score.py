"""How fast Entropy's scorer scores a full 7x7 board, next to a scorer that checks every window.

Run ``python bench/games/entropy_score.py``. It scores the same random full boards with both
scorers, interleaved round by round so that both meet the same machine load, checks that they agree,
and prints boards per second for each and the ratio. The fast scorer grows palindromes from their
centres (``pbmserv.games.entropy.score``); the brute-force one tests all 21 windows of each of the
14 lines.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

try:
    import pbmserv  # noqa: F401
except ImportError:  # run from a checkout without installing the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pbmserv.games.entropy.score import board_score

SIZE = 7
_BOARDS = 2000  # boards per timed round
_ROUNDS = 7  # rounds per scorer; the median round counts


def brute_force_score(cells: bytes, size: int) -> int:
    """Order's score found by testing every window of two or more squares of every line."""
    lines = [cells[r * size : (r + 1) * size] for r in range(size)]
    lines += [cells[c::size] for c in range(size)]
    total = 0
    for line in lines:
        for start in range(size - 1):
            for end in range(start + 2, size + 1):
                window = line[start:end]
                if 0 not in window and window == window[::-1]:
                    total += end - start
    return total


def fast_score(cells: bytes, size: int) -> int:
    """The game's scorer, as the game uses it."""
    return board_score(cells, size).total


def random_full_boards(count: int, rng: random.Random) -> list[bytes]:
    """Full boards holding 7 counters of each of the 7 colours, shuffled."""
    counters = [colour for colour in range(1, SIZE + 1) for _ in range(SIZE)]
    boards = []
    for _ in range(count):
        rng.shuffle(counters)
        boards.append(bytes(counters))
    return boards


def _round_seconds(scorer: Callable[[bytes, int], int], boards: list[bytes]) -> float:
    start = time.perf_counter()
    for cells in boards:
        scorer(cells, SIZE)
    return time.perf_counter() - start


def main() -> None:
    """Print boards per second of both scorers and how many times faster the game's one is."""
    boards = random_full_boards(_BOARDS, random.Random(7))
    for cells in boards[:200]:
        assert fast_score(cells, SIZE) == brute_force_score(cells, SIZE)
    fast, brute = [], []
    for _ in range(_ROUNDS):
        fast.append(_round_seconds(fast_score, boards))
        brute.append(_round_seconds(brute_force_score, boards))
    fast_rate = _BOARDS / statistics.median(fast)
    brute_rate = _BOARDS / statistics.median(brute)
    print(
        f"entropy scorer, full 7x7 boards: fast {fast_rate:,.0f} boards/s, "
        f"brute force {brute_rate:,.0f} boards/s, ratio {fast_rate / brute_rate:.1f}"
    )


if __name__ == "__main__":
    main()
