"""The geometry of a hex board, an N x N rhombus of hexagons (each row drawn half a cell right
of the row above): each cell's neighbours, the sides of the board it touches and its distance
from the centre. Pure, worked out once a board size; the game's rules and the robots' policy
both read it."""

from __future__ import annotations

from functools import cache
from typing import Final, NamedTuple

#: The sides of the board as bits (Geometry.edges); the union-find keeps them in a nibble.
TOP, BOTTOM, LEFT, RIGHT = 1, 2, 4, 8
TOP_BOTTOM: Final = TOP | BOTTOM
LEFT_RIGHT: Final = LEFT | RIGHT
#: The (column, row) steps from a cell to its six neighbours.
STEPS: Final = ((-1, 0), (1, 0), (0, -1), (1, -1), (0, 1), (-1, 1))


class Geometry(NamedTuple):
    """A board size's cells (row by row): each one's neighbours and the edges it touches."""

    neighbours: tuple[tuple[int, ...], ...]
    edges: bytes  # the edge bits of each cell, the starting value of the union-find
    #: The neighbours with a lower index (left, above, above right): a scan in index order
    #: that links each piece to these meets every adjacent pair once.
    earlier: tuple[tuple[int, ...], ...]


@cache
def hex_geometry(size: int) -> Geometry:
    """Neighbour lists and edge bits for one board size (computed once per size)."""
    neighbours = []
    edges = bytearray()
    for row in range(size):
        for col in range(size):
            near = []
            for dc, dr in STEPS:
                c, r = col + dc, row + dr
                if 0 <= c < size and 0 <= r < size:
                    near.append(r * size + c)
            neighbours.append(tuple(near))
            bits = 0
            if row == 0:
                bits |= TOP
            if row == size - 1:
                bits |= BOTTOM
            if col == 0:
                bits |= LEFT
            if col == size - 1:
                bits |= RIGHT
            edges.append(bits)
    earlier = tuple(tuple(n for n in near if n < i) for i, near in enumerate(neighbours))
    return Geometry(tuple(neighbours), bytes(edges), earlier)


@cache
def centre_distances(size: int) -> tuple[int, ...]:
    """Each cell's distance (in moves) from the board's centre: nearer cells are tried first,
    as in Hex, where the centre counts most."""
    middle = (size - 1) // 2
    distances = []
    for row in range(size):
        for col in range(size):
            dc, dr = col - middle, row - middle
            distances.append(max(abs(dc), abs(dr), abs(dc + dr)))
    return tuple(distances)
