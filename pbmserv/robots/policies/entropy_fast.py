"""The fast parts of the Entropy policy: a board's score by whole-board integer arithmetic, and
the bag dealt into the empty squares with the very draws ``random.shuffle`` would make.

A playout (:mod:`pbmserv.robots.policies.entropy`) deals the counters not yet on the board into
the empty squares and scores the full board, and it is most of what a search iteration costs
beyond the tree. Two things made it slow, and each is replaced here with identical results:

* **Scoring** (:func:`board_total`): ``board_score`` grows palindromes one line at a time, a
  Python loop over every seed of 14 lines. Here the board and its transpose become one integer,
  8 bits a square, so that every row and every column is a run of bytes; shifting it by ``d``
  squares and XORing finds every pair of squares ``d`` apart in a line that hold the same colour,
  all at once. A palindrome is a chain of such pairs around its centre (``ABBA``: the pair 1
  apart inside the pair 3 apart), so each length is an AND of shifted pair masks, counted with
  ``int.bit_count``. About twenty operations on one integer replace some 150 Python steps.
* **Dealing** (:func:`deal`): ``random.shuffle`` calls a Python helper for every draw. The same
  Fisher-Yates loop is written out here with the same ``getrandbits`` calls (so the same
  generator state afterwards), and writes each counter to its square as soon as it is final.
  It relies on ``random.Random``'s own ``shuffle`` and ``_randbelow``; any other generator class
  is dealt with by ``shuffle`` itself. ``tests/robots/test_entropy_fast.py`` keeps the old code
  and checks both against it.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import cache
from itertools import compress

#: bytes.translate table marking the empty squares (1) of a board, for itertools.compress.
_EMPTY_FLAGS = bytes([1] + [0] * 255)
#: One byte per colour code, to build the bag with bytes repetition.
_CODE_BYTES = tuple(bytes([code]) for code in range(8))


# --- scoring -------------------------------------------------------------------------------


class _Masks:
    """The constant masks of the whole-board scorer for one board size.

    The scorer's integer holds the board's rows and then its columns (the transpose's rows), one
    byte a square, square ``k`` in byte ``k``. A square's flag is the top bit of its byte.
    """

    def __init__(self, size: int) -> None:
        squares = 2 * size * size  # the rows, then the columns
        self.size = size
        #: 0x7F in every byte: added to a byte of 0..7, it sets the top bit unless the byte is 0
        #: (colours are 1..7, so XORs of two are 0..7 and no carry leaves a byte).
        self.sevens = int.from_bytes(b"\x7f" * squares, "little")
        #: The top bit of every byte: the squares that hold a counter, once the sevens are added.
        self.tops = int.from_bytes(b"\x80" * squares, "little")
        #: For each distance d (index d): the flags of the squares with a square d further on in
        #: the same line.
        self.pairs = (0,) + tuple(
            int.from_bytes(
                bytes(0x80 if k % size + d < size else 0 for k in range(squares)), "little"
            )
            for d in range(1, size)
        )


@cache
def _masks(size: int) -> _Masks:
    return _Masks(size)


def _lines(cells: bytes, size: int) -> int:
    """The board's rows and then its columns as one integer, one byte a square."""
    columns = b"".join([cells[c::size] for c in range(size)])
    return int.from_bytes(cells + columns, "little")


def board_total(cells: bytes | bytearray, size: int) -> int:
    """Order's score of the board (``board_score(cells, size).total``); empty squares (0) are
    never part of a palindrome."""
    masks = _masks(size)
    lines = _lines(bytes(cells), size)
    sevens, pairs = masks.sevens, masks.pairs
    held = (lines + sevens) & masks.tops  # the squares that hold a counter
    # same[d]: the squares holding a counter of the colour of the square d further on its line.
    same = [0] + [pairs[d] & held & ~((lines ^ (lines >> 8 * d)) + sevens) for d in range(1, size)]
    # Palindromes by their first square: each grows from the one 2 shorter, one square in.
    even = same[1]  # length 2
    odd = same[2] & (held >> 8)  # length 3: its middle square holds a counter too
    total = 2 * even.bit_count() + 3 * odd.bit_count()
    for length in range(4, size + 1):
        if length % 2:
            odd = same[length - 1] & (odd >> 8)
            total += length * odd.bit_count()
        else:
            even = same[length - 1] & (even >> 8)
            total += length * even.bit_count()
    return total


# --- dealing -------------------------------------------------------------------------------


@cache
def _draws(count: int) -> tuple[tuple[int, int, int], ...]:
    """``random.shuffle``'s steps for ``count`` items: the index it fixes, the bound of its
    draw, and the bits ``getrandbits`` is asked for."""
    return tuple((i, i + 1, (i + 1).bit_length()) for i in reversed(range(1, count)))


def bag_of(cells: bytes, size: int) -> bytearray:
    """The counters not on the board, colour by colour (as the playout has always listed
    them)."""
    return bytearray(
        b"".join([_CODE_BYTES[code] * (size - cells.count(code)) for code in range(1, size + 1)])
    )


def deal(cells: bytes, size: int, rng: random.Random) -> bytearray:
    """The board with the counters not on it dealt into its empty squares, in square order,
    after ``rng.shuffle`` of them in colour order: the same board and the same draws."""
    filled = bytearray(cells)
    empties = list(compress(range(size * size), cells.translate(_EMPTY_FLAGS)))
    deal_into(filled, empties, bag_of(cells, size), rng)
    return filled


def deal_into(
    filled: bytearray, empties: Sequence[int], counters: bytearray, rng: random.Random
) -> None:
    """``rng.shuffle(counters)``, then each counter into the empty square at its place in
    ``empties``: the same squares filled and the same draws (``counters`` is used up)."""
    if type(rng) is not random.Random:  # another generator may draw otherwise: ask it
        rng.shuffle(counters)
        for square, counter in zip(empties, counters, strict=True):
            filled[square] = counter
        return
    getrandbits = rng.getrandbits
    # Fisher-Yates as random.shuffle does it: counters[i] is final once swapped, so it goes
    # straight to its square.
    for i, bound, bits in _draws(len(counters)):
        j = getrandbits(bits)
        while j >= bound:
            j = getrandbits(bits)
        filled[empties[i]] = counters[j]
        counters[j] = counters[i]
    if counters:
        filled[empties[0]] = counters[0]
