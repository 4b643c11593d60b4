"""Per-game knowledge for the search: playout moves, cut-off evaluations, widening.

The search (:mod:`pbmserv.robots.mcts`) needs nothing but the game contract; a game gains
strength here where uniform random playouts pay badly (long games, lopsided random results).
:func:`policy_for` looks a game's policy up by ``game.SPEC.name``; a game without one gets
:data:`DEFAULT`: uniform random playouts to the end.

Every value is a tuple of results, one per seat, 0 (loss) .. 1 (win). An evaluation reads only
the state it is given, which for a game with secrets is the searching seat's determinisation.
"""

from __future__ import annotations

import math
import random
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import chess

from pbmserv.games.base import AnyGame
from pbmserv.games.entropy.score import board_score
from pbmserv.games.hmdg.geometry import WINDOWS

#: One result per seat, 0 (loss) .. 1 (win), 0.5 a draw.
Values = tuple[float, ...]
#: Picks a playout move for ``seat`` among its legal ``moves``.
Chooser = Callable[[AnyGame, Any, int, Sequence[Any], random.Random], Any]
#: Scores a position that has not ended, one value per seat.
Evaluator = Callable[[AnyGame, Any], Values]
#: A whole playout done another (faster) way; None to fall back on the ordinary playout.
Playout = Callable[[AnyGame, Any, random.Random], "Values | None"]
#: The moves worth a place in the tree, out of ``seat``'s legal ``moves`` (never none of them);
#: the generator may break ties in their order.
Candidates = Callable[[AnyGame, Any, int, list[Any], random.Random], list[Any]]


def uniform_choice(
    game: AnyGame, state: Any, seat: int, moves: Sequence[Any], rng: random.Random
) -> Any:
    """Any legal move, all alike."""
    return moves[rng.randrange(len(moves))]


@dataclass(frozen=True)
class Policy:
    """How the search plays and scores one game."""

    #: The playout's move choice.
    choose: Chooser = uniform_choice
    #: Scores a playout stopped after ``cutoff`` moves (a draw, 0.5 each, without one).
    evaluate: Evaluator | None = None
    #: Playout moves before the evaluation; None plays to the end.
    cutoff: int | None = None
    #: A faster playout, tried before the ordinary one.
    playout: Playout | None = None
    #: The UCB exploration constant (results are 0..1).
    exploration: float = 0.7
    #: Progressive widening: a node with ``visits`` visits has at most
    #: ``widen * sqrt(visits + 1)`` children; None lets every legal move in at once.
    widen: float | None = None
    #: The robot looks for a move that wins at once when it has at most this many moves.
    decisive_check_limit: int = 400
    #: A level's iterations are multiplied by this (games whose iterations are cheap get more).
    iteration_scale: float = 1.0
    #: Implicit minimax backups: the weight of the minimax of the evaluations in the tree
    #: against the mean result, in games without chance or secrets (0: plain UCT).
    minimax_weight: float = 0.0
    #: New children are tried in the order of the (candidate) moves, best first, rather than
    #: at random.
    ordered: bool = False
    #: Narrows the moves the tree considers (a game whose legal moves are mostly idle).
    candidates: Candidates | None = None

    def widening(self, visits: int) -> float:
        """How many children a node with ``visits`` visits may have."""
        if self.widen is None:
            return math.inf
        return self.widen * math.sqrt(visits + 1)

    def tree_moves(
        self, game: AnyGame, state: Any, seat: int, moves: list[Any], rng: random.Random
    ) -> list[Any]:
        """The moves the tree considers for ``seat``: the candidates, or all of them."""
        if self.candidates is None:
            return moves
        return self.candidates(game, state, seat, moves, rng) or moves


DEFAULT = Policy()


def _sigmoid(x: float) -> float:
    if x < -40:
        return 0.0
    return 1.0 / (1.0 + math.exp(-x))


def _for_seat(seat: int, value: float) -> Values:
    """Two seats' values when ``seat`` scores ``value``."""
    return (value, 1.0 - value) if seat == 0 else (1.0 - value, value)


# --- Chameleon ---------------------------------------------------------------------------------
# Hex with either colour for either side. Random playouts on 11x11 lose every game to a greedy
# player that shortens its chain (measured: 0 of 8 at 1600 iterations, random fills of the
# board as playouts); the search instead scores each new position by how many empty cells each
# side's shortest chain still needs (a race: the side to move is a tempo ahead), backs those
# scores up as a minimax beside the means, and considers only the moves on or next to those
# chains, a completing move or a block alone when there is one (16 of 16 against greedy with
# the same budget, exploration 0.4). The board is read through dump().

_TOP, _BOTTOM, _LEFT, _RIGHT = 1, 2, 4, 8
_VERT, _HORZ = _TOP | _BOTTOM, _LEFT | _RIGHT


@cache
def _hex_geometry(size: int) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]:
    """Each cell's neighbours and edge bits on a ``size`` rhombus (row by row)."""
    neighbours = []
    edges = []
    for row in range(size):
        for col in range(size):
            near = []
            for dc, dr in ((-1, 0), (1, 0), (0, -1), (1, -1), (0, 1), (-1, 1)):
                c, r = col + dc, row + dr
                if 0 <= c < size and 0 <= r < size:
                    near.append(r * size + c)
            neighbours.append(tuple(near))
            bits = (_TOP if row == 0 else 0) | (_BOTTOM if row == size - 1 else 0)
            bits |= (_LEFT if col == 0 else 0) | (_RIGHT if col == size - 1 else 0)
            edges.append(bits)
    return tuple(neighbours), tuple(edges)


def _chameleon_board(game: AnyGame, state: Any) -> tuple[int, list[int], int, int]:
    """Size, cells (0 empty, 1 x, 2 o), the seat playing Vert, and the seat to move."""
    data = game.dump(state)
    cells = [".xo".index(ch) for ch in "".join(data["board"])]
    return data["size"], cells, 1 if data["swapped"] else 0, data["ply"] % 2


def _hex_distance(size: int, cells: list[int], colour: int, axis: int) -> int:
    """Empty cells still needed for a chain of ``colour`` joining the sides of ``axis``."""
    neighbours, edge_bits = _hex_geometry(size)
    start, goal = (_TOP, _BOTTOM) if axis == _VERT else (_LEFT, _RIGHT)
    far = size * size + 1
    dist = [far] * (size * size)
    queue: deque[int] = deque()
    for i, bits in enumerate(edge_bits):
        if bits & start and cells[i] in (0, colour):
            cost = 0 if cells[i] else 1
            dist[i] = cost
            if cost:
                queue.append(i)
            else:
                queue.appendleft(i)
    while queue:
        i = queue.popleft()
        if edge_bits[i] & goal:
            return dist[i]
        for n in neighbours[i]:
            code = cells[n]
            if code and code != colour:
                continue
            d = dist[i] + (0 if code else 1)
            if d < dist[n]:
                dist[n] = d
                if code:
                    queue.appendleft(n)
                else:
                    queue.append(n)
    return far


def _distances(size: int, cells: list[int], colour: int, start: int) -> list[int]:
    """Per cell, the empty cells a chain of ``colour`` from the ``start`` side needs to reach it
    (itself included); a cell of the other colour is out of reach."""
    neighbours, edge_bits = _hex_geometry(size)
    far = size * size + 1
    dist = [far] * (size * size)
    queue: deque[int] = deque()
    for i, bits in enumerate(edge_bits):
        if bits & start and cells[i] in (0, colour):
            dist[i] = 0 if cells[i] else 1
            queue.append(i)
    while queue:
        i = queue.popleft()
        here = dist[i]
        for n in neighbours[i]:
            code = cells[n]
            if code and code != colour:
                continue
            d = here + (0 if code else 1)
            if d < dist[n]:
                dist[n] = d
                if code:
                    queue.appendleft(n)
                else:
                    queue.append(n)
    return dist


#: How many cells longer than the shortest a chain may be for its cells to be candidates.
_CHAMELEON_SLACK = 1


def _chameleon_candidates(
    game: AnyGame, state: Any, seat: int, moves: list[Any], rng: random.Random
) -> list[Any]:
    """The moves that matter now: a move that completes a chain if there is one; else the
    blocks of the opponent's chain that lacks one cell, if it has one; else both pieces on the
    empty cells of each side's shortest chains and of those one cell longer, the shortest
    chains' cells first, then those nearest the centre, ties in a random order (so that a
    robot does not play the same game every time)."""
    size, cells, vert_seat, _ = _chameleon_board(game, state)
    # through[side][colour - 1][cell]: the empty cells a chain of that side and colour through
    # the cell needs (side 0 Vert, 1 Horz).
    through: list[list[list[int]]] = []
    for start, goal in ((_TOP, _BOTTOM), (_LEFT, _RIGHT)):
        per_colour = []
        for colour in (1, 2):
            ahead = _distances(size, cells, colour, start)
            behind = _distances(size, cells, colour, goal)
            per_colour.append(
                [
                    a + b - (0 if code else 1)
                    for a, b, code in zip(ahead, behind, cells, strict=True)
                ]
            )
        through.append(per_colour)
    mine = 0 if seat == vert_seat else 1
    places = [m for m in moves if not isinstance(m, str)]

    def needs(side: int, move: Any, colour: int) -> int:
        return through[side][colour - 1][move.row * size + move.col]

    wins = [m for m in places if needs(mine, m, _PIECE[m.piece]) == 1]
    if wins:
        return wins
    # Their one missing cell: only the other piece there blocks (their piece would complete it).
    blocks = [m for m in places if needs(1 - mine, m, 3 - _PIECE[m.piece]) == 1]
    if blocks:
        return blocks
    slack = [_CHAMELEON_SLACK + 1] * (size * size)
    for per_colour in through:
        best = min(min(lengths) for lengths in per_colour)
        for lengths in per_colour:
            for i, length in enumerate(lengths):
                if not cells[i]:
                    slack[i] = min(slack[i], length - best)
    centre = _hex_centre_distance(size)
    kept = [
        (0, 0, 0.0, index, m)
        if isinstance(m, str)
        else (slack[m.row * size + m.col], centre[m.row * size + m.col], rng.random(), index, m)
        for index, m in enumerate(moves)
    ]
    return [m for rank, _, _, _, m in sorted(kept) if rank <= _CHAMELEON_SLACK]


@cache
def _hex_centre_distance(size: int) -> tuple[int, ...]:
    """Each cell's distance (in moves) from the board's centre: nearer cells are tried first,
    as in Hex, where the centre counts most."""
    middle = (size - 1) // 2
    distances = []
    for row in range(size):
        for col in range(size):
            dc, dr = col - middle, row - middle
            distances.append(max(abs(dc), abs(dr), abs(dc + dr)))
    return tuple(distances)


_PIECE = {"x": 1, "o": 2}


def _chameleon_evaluate(game: AnyGame, state: Any) -> Values:
    """A race: who is nearer a chain, in empty cells to fill (each side's better colour), the
    side to move a tempo ahead; one cell short of a chain on the move is a win."""
    size, cells, vert_seat, mover = _chameleon_board(game, state)
    vert = min(_hex_distance(size, cells, colour, _VERT) for colour in (1, 2))
    horz = min(_hex_distance(size, cells, colour, _HORZ) for colour in (1, 2))
    mine, theirs = (vert, horz) if mover == vert_seat else (horz, vert)
    value = 0.99 if mine <= 1 else _sigmoid(theirs - mine + 0.5)
    return _for_seat(mover, value)


# --- Entropy -----------------------------------------------------------------------------------
# A game is two rounds of about a hundred moves each, and a random Order slides for nothing; the
# playout instead deals the counters not yet on the board (the bag, or Entropy II's supply and
# reserve: what everyone can count) into the empty squares at random and scores the board. In
# round 2 that projection is set against round 1's score; in round 1 against the mean score of a
# randomly filled board.

#: Mean and spread of the score of a board filled at random, by size (20,000 boards each).
_ENTROPY_RANDOM_SCORE = {5: (32.0, 8.4), 7: (54.5, 12.3)}


def _entropy_values(state: Any, projected: float) -> Values:
    """Each seat's chance of winning when the round in play ends with ``projected`` points."""
    mean, spread = _ENTROPY_RANDOM_SCORE[state.size]
    against = mean if state.round == 1 else board_score(state.first, state.size).total
    return _for_seat(state.order_seat, _sigmoid(1.6 * (projected - against) / spread))


def _entropy_playout(game: AnyGame, state: Any, rng: random.Random) -> Values | None:
    size, cells = state.size, state.cells
    counters = [c for c in range(1, size + 1) for _ in range(size - cells.count(c))]
    rng.shuffle(counters)
    filled = bytearray(cells)
    dealt = iter(counters)
    for i, code in enumerate(filled):
        if not code:
            filled[i] = next(dealt)
    return _entropy_values(state, board_score(bytes(filled), size).total)


def _entropy_evaluate(game: AnyGame, state: Any) -> Values:
    """The board's score now, with the empty squares' share of a random board's mean."""
    size, cells = state.size, state.cells
    mean, _ = _ENTROPY_RANDOM_SCORE[size]
    empty = cells.count(0) / (size * size)
    return _entropy_values(state, board_score(cells, size).total + mean * empty)


# --- Extinction Chess ----------------------------------------------------------------------------
# Random chess is long and aimless; short random playouts that never miss a winning capture,
# then material, with the kinds a side has one piece left of counted as its weak points.

_PIECE_VALUES = {
    chess.PAWN: 1.0,
    chess.KNIGHT: 3.0,
    chess.BISHOP: 3.0,
    chess.ROOK: 5.0,
    chess.QUEEN: 9.0,
    chess.KING: 4.0,
}


def _last_of_kind(board: chess.Board, color: chess.Color) -> int:
    """The squares (a mask) of ``color``'s pieces that are the last of their kind."""
    mask = 0
    for kind in _PIECE_VALUES:
        pieces = board.pieces_mask(kind, color)
        if pieces and not pieces & (pieces - 1):
            mask |= pieces
    return mask


def _extinction_choose(
    game: AnyGame, state: Any, seat: int, moves: Sequence[Any], rng: random.Random
) -> Any:
    board = state.board()
    theirs = board.occupied_co[not board.turn]
    last = _last_of_kind(board, not board.turn)
    captures = []
    for move in moves:
        if last >> move.to_square & 1:
            return move  # the opponent's last piece of a kind: the game is won
        if theirs >> move.to_square & 1:
            captures.append(move)
    if captures and rng.random() < 0.5:
        return captures[rng.randrange(len(captures))]
    return moves[rng.randrange(len(moves))]


def _extinction_candidates(
    game: AnyGame, state: Any, seat: int, moves: list[Any], rng: random.Random
) -> list[Any]:
    """Only the captures of the opponent's last piece of a kind when there are any (each wins
    at once); else every move."""
    board = state.board()
    last = _last_of_kind(board, not board.turn)
    return [m for m in moves if last >> m.to_square & 1] or moves


def _extinction_evaluate(game: AnyGame, state: Any) -> Values:
    board = state.board()
    lead = 0.0  # White's material lead
    for color in (chess.WHITE, chess.BLACK):
        sign = 1.0 if color == chess.WHITE else -1.0
        for kind, value in _PIECE_VALUES.items():
            lead += sign * value * len(board.pieces(kind, color))
        for square in chess.scan_forward(_last_of_kind(board, color)):
            if board.is_attacked_by(not color, square):
                if board.turn != color:  # the side to move takes it and wins
                    return _for_seat(0 if color == chess.WHITE else 1, 0.05)
                lead -= sign * 2.0
    return (v := _sigmoid(lead / 4.0), 1.0 - v)


# --- Buffalo -----------------------------------------------------------------------------------
# Random play lets the buffalo through every time, so random playouts say nothing of White's
# moves. White's playout moves capture with the chief and block the most advanced buffalo; the
# playout stops after a few moves and the evaluation weighs how far the free buffalo have come.

_BUFFALO_COLS = 11
_BUFFALO_WHITE = 1


def _free_buffalo(cells: str) -> list[int]:
    """Buffalo with an empty square ahead, the most advanced first."""
    cols = _BUFFALO_COLS
    return [i for i in range(cols, len(cells)) if cells[i] == "B" and cells[i - cols] == "."]


def _buffalo_choose(
    game: AnyGame, state: Any, seat: int, moves: Sequence[Any], rng: random.Random
) -> Any:
    cells = state.cells
    if seat != _BUFFALO_WHITE:
        if rng.random() < 0.5:  # push a buffalo that is already on its way
            lead = min(moves, key=lambda m: m.src)
            return lead
        return moves[rng.randrange(len(moves))]
    captures = [m for m in moves if cells[m.dst] == "B"]
    if captures:
        return min(captures, key=lambda m: m.dst)
    for buffalo in _free_buffalo(cells)[:3]:
        blocks = [m for m in moves if m.dst == buffalo - _BUFFALO_COLS]
        if blocks:
            return blocks[rng.randrange(len(blocks))]
    return moves[rng.randrange(len(moves))]


def _buffalo_evaluate(game: AnyGame, state: Any) -> Values:
    """Black's threat: each buffalo's advance squared, a blocked one counting a third."""
    cells, cols = state.cells, _BUFFALO_COLS
    threat = 0.0
    for i in range(cols, len(cells)):
        if cells[i] == "B":
            advance = 7 - (i // cols + 1)
            blocked = cells[i - cols] != "."
            threat += advance * advance / (3.0 if blocked else 1.0)
    return (v := _sigmoid((threat - 12.0) / 6.0), 1.0 - v)


# --- Owlman ------------------------------------------------------------------------------------
# Random White never wins; White's playout moves walk Doc towards a8 half the time, and the
# evaluation weighs the helpers left, Doc's distance to a8 and the moves left before nightfall.

_OWL_WHITE = 0
_A8 = 56


def _doc_distance(square: int) -> int:
    return max(square % 8, 7 - square // 8)


def _owlman_choose(
    game: AnyGame, state: Any, seat: int, moves: Sequence[Any], rng: random.Random
) -> Any:
    if seat == _OWL_WHITE and rng.random() < 0.5:
        cells = state.cells
        doc = cells.find("K")
        if doc >= 0:
            nearer = [
                m for m in moves if m.src == doc and _doc_distance(m.dst) < _doc_distance(doc)
            ]
            if nearer:
                return nearer[rng.randrange(len(nearer))]
    return moves[rng.randrange(len(moves))]


def _owlman_evaluate(game: AnyGame, state: Any) -> Values:
    cells = state.cells
    doc = cells.find("K")
    if doc < 0:
        return (0.0, 1.0)
    helpers = cells.count("H")
    distance = _doc_distance(doc)
    edge = 0.3 * (helpers - 6) - 0.4 * (distance - 2)
    if state.variant == "nightfall":
        left = 49 - (state.ply + 1) // 2
        if left < distance + 1:
            return (0.02, 0.98)
        edge -= 3.0 / max(1, left - distance)
    return (v := _sigmoid(edge), 1.0 - v)


# --- Hidden Move Double Gomoku -------------------------------------------------------------------
# Evaluated on the searching seat's determinisation (a full state): the windows of five each
# side could still fill (none of the other side's revealed pieces in them), weighted steeply by
# the pieces already there.

_WINDOW_WEIGHT = (0.0, 1.0, 4.0, 16.0, 64.0, 256.0)


def _hmdg_evaluate(game: AnyGame, state: Any) -> Values:
    if state.x_seat is None:
        return (0.5, 0.5)
    totals = []
    for side in (0, 1):
        own, blocked = state.pieces[side], state.shown[1 - side]
        total = 0.0
        for window in _HMDG_WINDOWS:
            if not window & blocked:
                total += _WINDOW_WEIGHT[(own & window).bit_count()]
        totals.append(total)
    x_value = _sigmoid((totals[0] - totals[1]) / 40.0)
    return _for_seat(state.seat_of(0), x_value)


_HMDG_WINDOWS = tuple(window.mask for window in WINDOWS)


_POLICIES: dict[str, Policy] = {
    "chameleon": Policy(
        evaluate=_chameleon_evaluate,
        cutoff=0,
        candidates=_chameleon_candidates,
        ordered=True,
        minimax_weight=0.5,
        exploration=0.4,
    ),
    "entropy": Policy(playout=_entropy_playout, evaluate=_entropy_evaluate, widen=4.0),
    "extinction": Policy(
        choose=_extinction_choose,
        evaluate=_extinction_evaluate,
        cutoff=6,
        candidates=_extinction_candidates,
        minimax_weight=0.8,
        exploration=0.4,
    ),
    "buffalo": Policy(choose=_buffalo_choose, evaluate=_buffalo_evaluate, cutoff=16),
    "owlman": Policy(choose=_owlman_choose, evaluate=_owlman_evaluate, cutoff=16),
    "hmdg": Policy(evaluate=_hmdg_evaluate, cutoff=6),
}


def policy_for(game: AnyGame) -> Policy:
    """The policy of ``game`` (by ``SPEC.name``), or :data:`DEFAULT`."""
    return _POLICIES.get(game.SPEC.name, DEFAULT)
