"""The union-find over same-coloured neighbours that finds a won chain as a move is made."""

from __future__ import annotations

from array import array
from typing import Final

from pbmserv.games.chameleon.geometry import hex_geometry
from pbmserv.games.chameleon.state import ChameleonState, _Links

# Edge bits kept per union-find root (low nibble); the high nibble holds the root's rank.
_EDGE_MASK: Final = 0x0F
_RANK_STEP: Final = 0x10


def _links_of(state: ChameleonState) -> _Links:
    """The state's union-find, built from its board the first time a loaded state needs it."""
    links = state._links
    if links is None:
        links = _build_links(state.size, state.cells)
        # Derived from the board alone, so keeping it changes nothing the state says.
        object.__setattr__(state, "_links", links)
    return links


def _build_links(size: int, cells: bytes) -> _Links:
    """The union-find of a board, in one scan: each piece linked to its earlier neighbours only
    (half the work of all six), which meets every adjacent pair once."""
    geometry = hex_geometry(size)
    parent = array("h", range(size * size))
    edges = bytearray(geometry.edges)
    earlier = geometry.earlier
    for i in [i for i, code in enumerate(cells) if code]:
        _link(cells, parent, edges, earlier[i], i)
    return _Links(parent, bytes(edges))


def _find(parent: array, i: int) -> int:
    # Path halving: only ever called on a state's private copy under construction.
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


def _link(
    cells: bytes | bytearray, parent: array, edges: bytearray, neighbours: tuple[int, ...], i: int
) -> int:
    """Join the piece on cell ``i`` to its same-coloured neighbours; return the chain's edges."""
    colour = cells[i]
    root = _find(parent, i)
    for n in neighbours:
        if cells[n] != colour:
            continue
        other = _find(parent, n)
        if other == root:
            continue
        # Union by rank (kept in the high nibble of the edges byte), merging the edge bits.
        mine, theirs = edges[root], edges[other]
        if mine & ~_EDGE_MASK < theirs & ~_EDGE_MASK:
            root, other, mine, theirs = other, root, theirs, mine
        elif mine & ~_EDGE_MASK == theirs & ~_EDGE_MASK and mine < 0xF0:
            mine += _RANK_STEP
        parent[other] = root
        edges[root] = mine | (theirs & _EDGE_MASK)
    return edges[root] & _EDGE_MASK
