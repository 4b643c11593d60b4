"""Chameleon's lean position (:mod:`pbmserv.robots.tactics`), on the bit masks and chain
races of :mod:`~pbmserv.robots.policies.chameleon_races` (a push merges the groups the new
piece's halo touches; a group touching both of a role's sides is a won chain; a pop puts the
old list of groups back).

:class:`ChameleonLean` is the position the tree search pushes and pops. Its tree moves are the
policy's candidates, ties (same rank, same distance from the centre) in an order drawn once a
search from the tree search's generator (handed to :meth:`ChameleonLean.position`): another
seed, another game, as when the policy drew the ties at each node. Its tactics read won and
lost games only (see :data:`TACTICS`).
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from pbmserv.games.chameleon import SWAP, ChameleonState, Place
from pbmserv.robots.policies.chameleon_races import (
    O_CODE,
    X_CODE,
    ChainCells,
    Group,
    bit_board,
    board_masks,
    cell_indices,
    chain_cells,
    groups_of,
    pieces_on,
    race_chance,
    spread,
    urgent_moves,
    x_gain,
)
from pbmserv.robots.tactics import Tactics


class ChameleonPosition:
    """A mutable position: the empty cells, each colour's groups, the ply, the swap and the
    winner, and an undo stack of what each push changed."""

    __slots__ = (
        "board",
        "empty",
        "groups",
        "ply",
        "swapped",
        "winner",
        "undo",
        "serial",
        "pushes",
        "chance",
        "seed",
        "tie_keys",
    )

    def __init__(self, state: ChameleonState, rng: random.Random | None = None) -> None:
        board = bit_board(state.size)
        x, o, empty = board_masks(state)
        self.board = board
        self.empty = empty
        #: Indexed by the cell code (X_CODE, O_CODE); index 0 unused.
        self.groups: list[list[Group]] = [
            [],
            groups_of(x, board.stride),
            groups_of(o, board.stride),
        ]
        self.ply = state.ply
        self.swapped = state.swapped
        self.winner: int | None = min(state.result.winners) if state.result else None
        self.undo: list[tuple[int, list[Group], int, int | None, int]] = []
        #: Names the position now (a push gives a new one, a pop the old one back): the last
        #: win chance is kept under it, as the search asks twice for each new node.
        self.serial = 0
        self.pushes = 0
        self.chance: tuple[int, float] = (-1, 0.0)
        # The tree search's generator draws the seed (another search, another tie order).
        self.seed: float | str = (
            rng.random()
            if rng is not None
            else f"{state.size}:{state.cells.hex()}:{state.ply}:{state.swapped}"
        )
        self.tie_keys: list[float] | None = None

    @property
    def mover_is_vert(self) -> bool:
        return self.ply % 2 == (1 if self.swapped else 0)

    def push(self, move: Place | str) -> None:
        self.pushes += 1
        if isinstance(move, str):  # the swap: roles change hands, the board stays
            self.undo.append((0, [], 0, self.winner, self.serial))
            self.swapped = not self.swapped
        else:
            board = self.board
            colour = X_CODE if move.piece == "x" else O_CODE
            bit = board.bits[move.row * board.size + move.col]
            groups = self.groups[colour]
            merged, kept = bit, []
            for group in groups:
                if group[1] & bit:
                    merged |= group[0]
                else:
                    kept.append(group)
            kept.append((merged, spread(merged, board.stride)))
            self.groups[colour] = kept
            self.empty ^= bit
            self.undo.append((colour, groups, bit, self.winner, self.serial))
            vert_done = merged & board.top and merged & board.bottom
            horz_done = merged & board.left and merged & board.right
            if vert_done or horz_done:
                vert_seat = 1 if self.swapped else 0
                if vert_done and horz_done:
                    self.winner = self.ply % 2  # both at once: the mover wins
                else:
                    self.winner = vert_seat if vert_done else 1 - vert_seat
        self.ply += 1
        self.serial = self.pushes

    def pop(self) -> None:
        colour, groups, bit, winner, serial = self.undo.pop()
        if colour:
            self.groups[colour] = groups
            self.empty |= bit
        else:
            self.swapped = not self.swapped
        self.winner = winner
        self.serial = serial
        self.ply -= 1

    def snapshot(self) -> tuple[object, ...]:
        """Everything the position says, comparable (for the tests)."""
        return (
            self.empty,
            sorted(self.groups[X_CODE]),
            sorted(self.groups[O_CODE]),
            self.ply,
            self.swapped,
            self.winner,
        )

    def chain_cells(self) -> ChainCells:
        return chain_cells(self.board, self.groups, self.empty, self.mover_is_vert)

    def win_chance(self) -> float:
        serial, chance = self.chance
        if serial != self.serial:
            chance = race_chance(self.board, self.groups, self.empty, self.mover_is_vert)
            self.chance = (self.serial, chance)
        return chance

    def tie_order(self) -> list[float]:
        """Per move (cell * 2, + 1 for an o) its distance from the centre plus a draw in 0..1:
        ties in a random order, drawn once a search (see :attr:`seed`)."""
        if self.tie_keys is None:
            rng = random.Random(self.seed)
            self.tie_keys = [
                centre + rng.random() for centre in self.board.centre for _piece in "xo"
            ]
        return self.tie_keys


class ChameleonLean:
    """Chameleon's :class:`~pbmserv.robots.tactics.LeanPlay`, on a :class:`ChameleonPosition`."""

    def position(
        self, state: ChameleonState, rng: random.Random | None = None
    ) -> ChameleonPosition:
        return ChameleonPosition(state, rng)

    def moves(self, position: ChameleonPosition) -> list[Place | str]:
        """Both pieces on every empty cell, and the swap on the second move, as the rules list
        them."""
        if position.winner is not None:
            return []
        board = position.board
        places = board.places
        moves: list[Place | str] = [SWAP] if position.ply == 1 else []
        for cell in cell_indices(position.empty, board.stride):
            moves.extend(places[cell])
        return moves

    def captures(self, position: ChameleonPosition) -> list[Place]:
        """The moves that win at once."""
        if position.winner is not None:
            return []
        found = position.chain_cells()
        return pieces_on(position.board, found.win_x, found.win_o)

    def push(self, position: ChameleonPosition, move: Place | str) -> None:
        position.push(move)

    def pop(self, position: ChameleonPosition) -> None:
        position.pop()

    def ended(self, position: ChameleonPosition) -> float | None:
        winner = position.winner
        if winner is None:
            return None
        return 1.0 if winner == position.ply % 2 else -1.0

    def evaluate(self, position: ChameleonPosition) -> float:
        """Flat: the tactics read only won and lost games here. A race read at each of the
        root's two hundred moves would cost more than the lowest level's whole search, and the
        tree's candidates already take a win and block a chain one cell short."""
        return 0.0

    def no_moves(self, position: ChameleonPosition) -> float:
        return 0.0  # a full board always holds a chain, so never reached: a draw

    def seat(self, position: ChameleonPosition) -> int:
        return position.ply % 2

    def tree_moves(self, position: ChameleonPosition) -> Sequence[Place | str]:
        """The policy's candidates: the wins, else the blocks, else both pieces on the empty
        cells of the shortest chains and of those one cell longer (the swap first on the
        second move), the pieces that gain the mover most first (:func:`x_gain`), then those
        nearer the centre."""
        board = position.board
        found = position.chain_cells()
        urgent = urgent_moves(board, found)
        if urgent:
            return urgent
        keys = position.tie_order()
        places, bits = board.places, board.bits
        ranked = []
        for cell in cell_indices(found.rank0 | found.rank1, board.stride):
            gain = x_gain(found, bits[cell])
            ranked.append((-gain, keys[2 * cell], places[cell][0]))
            ranked.append((gain, keys[2 * cell + 1], places[cell][1]))
        ranked.sort()
        moves: list[Place | str] = [SWAP] if position.ply == 1 else []
        moves.extend(move for *_, move in ranked)
        return moves

    def playout_move(self, position: ChameleonPosition, rng: random.Random) -> Place | str | None:
        """One of the tree's moves (the search's playouts stop at once: cutoff 0)."""
        if position.winner is not None:
            return None
        moves = self.tree_moves(position)
        return moves[rng.randrange(len(moves))] if moves else None

    def win_chance(self, position: ChameleonPosition) -> float:
        return position.win_chance()


LEAN = ChameleonLean()

#: The tactics: a win at once is taken before the search (in place of the robots' check for
#: one); with a flat static score and no nodes to spend beyond the root's moves, nothing else
#: is read (a deeper read of a race costs more than it gives; the tree sees a chain one cell
#: short itself).
TACTICS = Tactics(lean=LEAN, margin=1.0, scale=1.0, node_budget=0)
