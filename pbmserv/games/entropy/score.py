"""Order's score in Entropy: palindromes in the rows and columns of a board.

Every contiguous run of counters of length >= 2 that reads the same both ways scores its
length; nested and overlapping palindromes all count (``AAA`` = 2 + 2 + 3 = 7). An empty square
is never part of a palindrome, so a board in play can be scored too.

A line is a ``bytes`` of colour codes, 0 for an empty square. The scorer grows each palindrome
outwards from its centre, so it touches every palindrome once instead of testing every window: a
full 7x7 board (14 lines) takes about 15 microseconds. ``bench/games/entropy_score.py`` compares it
with a scorer that checks every window.

It defines no ``GAME``, so the game registry passes it over.
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple


@cache
def _seeds(n: int) -> tuple[tuple[int, int], ...]:
    """The innermost pairs of every possible palindrome in a line of ``n`` squares: neighbours
    (even lengths) and squares two apart (odd lengths, around a middle square)."""
    return tuple((i, i + 1) for i in range(n - 1)) + tuple((i, i + 2) for i in range(n - 2))


def line_score(line: bytes) -> int:
    """The palindrome score of one row or column (0 = empty square, other bytes = colours)."""
    n = len(line)
    total = 0
    for low, high in _seeds(n):
        colour = line[low]
        # Every palindrome of length >= 2 grows from exactly one seed, its innermost pair (for
        # odd lengths with a counter between them). Most seeds fail here, at once.
        if not colour or colour != line[high] or not line[(low + high) // 2]:
            continue
        while True:
            total += high - low + 1
            low -= 1
            high += 1
            if low < 0 or high >= n:
                break
            colour = line[low]
            if not colour or colour != line[high]:
                break
    return total


class BoardScore(NamedTuple):
    """The score of every row (row 1 first) and every column (column a first)."""

    rows: tuple[int, ...]
    columns: tuple[int, ...]

    @property
    def total(self) -> int:
        """Order's score: all rows and all columns."""
        return sum(self.rows) + sum(self.columns)


def board_score(cells: bytes, size: int) -> BoardScore:
    """Score a ``size`` x ``size`` board stored row by row (row 1 first) in ``cells``."""
    rows = tuple(line_score(cells[r * size : (r + 1) * size]) for r in range(size))
    columns = tuple(line_score(cells[c::size]) for c in range(size))
    return BoardScore(rows, columns)
