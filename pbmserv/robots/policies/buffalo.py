"""The robots' policy for Buffalo.

The game is a race of tactics: a buffalo on row 2 wins at once unless the chief captures it, so
a buffalo on row 3 with an empty square ahead must be blocked or be within the chief's reach,
and two such threats far apart lose. White's plan is to freeze buffalo with the dogs (a dog
just below a buffalo holds it) and eat the frozen ones with the chief, freeing the dogs again.
Playouts teach nothing here (the defence needs a plan, and random defenders lose to random
buffalo), so the search scores each new position by the evaluation alone. It reads the tactics
first (a push to row 2 nobody captures, a push to row 3 no White move answers), then reckons
the threat column by column: open buffalo by how near they are, the chief answering one it can
reach in time and each free dog another (a dog holding back an advanced buffalo is not free),
and one nobody can answer in time weighing as much as a lost game nearly; frozen buffalo
little, more the further the chief must walk; buffalo that will walk down onto a dog on row 2
and pin it; every buffalo left; an idle chief, and a chief far from the herd's front (the
robots lost to random buffalo by eating stragglers on one wing while a wall of buffalo pinned
every dog on the other). White's tree moves are those that survive the two-move tactics (the
search cannot afford to find them among ~80 moves), and of those the useful ones: captures,
chief steps, dogs that close a column; with ordered candidates and implicit minimax backups.

The search runs on a lean position (:mod:`pbmserv.robots.policies.buffalo_lean`: cells pushed
and popped in place, the result judged at each push), and the evaluation and the tree's moves
read the board through its tables and judge the two-move tactics incrementally, to the same
values to the last bit (the tests keep the plain reckoning and compare): an iteration costs
about 110 microseconds instead of 400, so each level searches 2.4 times as many positions in
less CPU than before. The shallow alpha-beta (:mod:`pbmserv.robots.tactics`) on that position
found nothing the tree's moves had not: over 98 positions of robot games, at 3 plies with its
full node budget, no candidate move of either side lost by force. So it reads cheaply (a few
hundred positions) and only for what is forced: a win it finds is played at once, a move it
sees lose by force is left out; the evaluation never narrows the root (the margin is wider than
the scores' whole range even at the top level's share).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from pbmserv.games.base import AnyGame
from pbmserv.robots.policies.buffalo_lean import (
    BLACK,
    BUFFALO,
    CELLS,
    CHIEF,
    COLS,
    DOG,
    EMPTY,
    KING_DISTANCE,
    NEAR,
    ROW2,
    BuffaloLean,
    black_wins_soon,
    dog_squares,
    open_leads,
    white_replies,
    white_targets,
)
from pbmserv.robots.policy import Policy, Values, sigmoid
from pbmserv.robots.tactics import Tactics

#: An open buffalo's weight by its row (the moves it still needs, less one).
RUNNER_WEIGHT = (0.0, 40.0, 12.0, 5.0, 2.5, 1.2, 0.6)
#: An open buffalo the chief can meet in time weighs this much of it.
INTERCEPTED = 0.5
#: An open buffalo a free dog can answer (it reaches a square below it in one move) weighs this
#: much of it; the heaviest are answered first, each dog once.
COVERED = 0.25
#: A buffalo frozen by a White piece just below it: on row 7, where the chief cannot capture it;
#: elsewhere, more the further the chief has to walk to eat it, and much more on row 3, where
#: it ties its dog to row 2.
FROZEN_ON_ROW7 = 0.3
FROZEN = 0.4
FROZEN_PER_CHIEF_STEP = 0.08
FROZEN_ON_ROW3 = 1.5
#: A buffalo that will walk down to a White piece further below, halving with every step it
#: still needs; three times as much when that piece is on row 2, where it will be pinned.
HELD = 1.0
HELD_DECAY = 0.6
HELD_ON_ROW2 = 3.0
#: A dog below a buffalo on this row or nearer stays to hold it (it is not free to answer
#: another).
HOLDS_FROM_ROW = 5
#: An open buffalo no White piece can answer in time weighs this much more: it walks through.
UNANSWERED = 10.0
#: An open buffalo a free dog can answer only in two moves weighs this much of it.
COVERED_LATER = 0.4
#: Each step beyond two between the chief and each buffalo on rows 3-5: the chief must be
#: near the herd's front to eat the buffalo that pin the dogs, not away on the other wing.
CHIEF_WING = 0.4
#: Each buffalo left on the board.
MATERIAL = 2.0
#: Each step between the chief and the nearest buffalo it may capture (rows 3-6): an idle
#: chief lets Black choose where to break through.
IDLE_CHIEF_STEP = 0.6
#: Black to move is a tempo up.
TEMPO = 0.5
#: The threat of an even game, and how quickly the value leaves it.
EVEN = 25.0
SPREAD = 2.5
#: Black's value when the immediate tactics decide (short of a proven result).
SURE = 0.98


def _row(index: int) -> int:
    return index // COLS + 1


# The evaluation and the tree's moves read the board through buffalo_lean's tables; the plain
# reckoning they replace is kept in the tests, which compare the two.
_white_targets = white_targets


def _black_value(cells: Sequence[str], to_move: int) -> float:
    """Black's chance in a position that has not ended: the tactics first, then a threat
    reckoned column by column, where each of White's free pieces answers one open buffalo (a
    dog holding a buffalo back is not free)."""
    chief = cells.index(CHIEF)
    on_row2 = [i for i in ROW2 if cells[i] == BUFFALO]
    if to_move == BLACK:
        if on_row2:
            return 1.0
        if black_wins_soon(cells if isinstance(cells, list) else list(cells)):
            return SURE
    elif len(on_row2) > 1 or (on_row2 and on_row2[0] not in NEAR[chief]):
        return 1.0
    threat, committed = 0.0, []
    runners: list[tuple[float, int, bool]] = []
    for col in range(COLS):
        below = -1  # the nearest White piece below the column's buffalo
        for index in range(COLS + col, CELLS, COLS):
            piece = cells[index]
            if piece == BUFFALO:
                threat += _column_threat(
                    index, below, cells[below] if below >= 0 else EMPTY, chief, to_move, runners
                )
                holds = below == index - COLS or _row(index) <= HOLDS_FROM_ROW
                if below >= 0 and cells[below] == DOG and holds:
                    committed.append(below)
                break
            if piece != EMPTY:
                below = index
    free = [dog for dog in dog_squares(cells) if dog not in committed]
    if runners:
        reach = {dog: white_targets(cells, dog) for dog in free}
        threat = _runners_threat(threat, cells, runners, free, reach, to_move)
    threat += MATERIAL * cells.count(BUFFALO)
    distance = KING_DISTANCE[chief]
    nearest = CELLS
    wing = 0
    for i in range(2 * COLS, 6 * COLS):
        if cells[i] == BUFFALO:
            nearest = min(nearest, distance[i])
            if i < 5 * COLS:
                wing += max(0, distance[i] - 2)
    if nearest < CELLS:
        threat += IDLE_CHIEF_STEP * nearest
    threat += CHIEF_WING * wing
    if to_move == BLACK:
        threat += TEMPO
    # Short of the tactics above nothing is sure: those values stay out of their range.
    return 0.02 + 0.94 * sigmoid((threat - EVEN) / SPREAD)


def _runners_threat(
    threat: float,
    cells: Sequence[str],
    runners: list[tuple[float, int, bool]],
    free: list[int],
    reach: dict[int, list[int]],
    to_move: int,
) -> float:
    """``threat`` with the open buffalo's added (in the same order as ever: the sum is the
    reference's to the last bit), the heaviest answered first, each free dog once."""
    for weight, lead, intercepted in sorted(runners, reverse=True):
        # A free dog answers it if it can stand below it in its column before it reaches row 2:
        # in one move if it reaches such a square, else (given the time) in two.
        spare = _moves_to_spare(_row(lead), to_move)
        col = lead % COLS
        dog = next((d for d in free if any(t % COLS == col and t < lead for t in reach[d])), None)
        if dog is not None:
            threat += weight * COVERED
            free.remove(dog)
        elif spare >= 2 and (dog := _dog_in_two(cells, lead, free, reach)) is not None:
            threat += weight * COVERED_LATER
            free.remove(dog)
        else:
            threat += weight + (0.0 if intercepted else UNANSWERED)
    return threat


def _moves_to_spare(row: int, to_move: int) -> int:
    """White's moves before an open buffalo on ``row`` reaches row 2, less the one it needs."""
    return row - 2 - (1 if to_move == BLACK else 0)


def _dog_in_two(
    cells: Sequence[str], lead: int, free: list[int], reach: dict[int, list[int]]
) -> int | None:
    """A free dog that can stand below ``lead``, a step further down, in two moves: one that
    reaches a square from which such a square is in line (moves are symmetric)."""
    for target in range(lead % COLS + COLS, lead - COLS, COLS):
        if cells[target] != EMPTY:
            continue
        meeting = set(white_targets(cells, target))
        dog = next((d for d in free if meeting.intersection(reach[d])), None)
        if dog is not None:
            return dog
    return None


def _column_threat(
    buffalo: int,
    below: int,
    below_piece: str,
    chief: int,
    to_move: int,
    runners: list[tuple[float, int, bool]],
) -> float:
    """The threat of the buffalo on ``buffalo`` with the White piece ``below`` it (-1: none);
    an open buffalo's weight goes to ``runners`` instead, to be answered by the free dogs."""
    row = _row(buffalo)
    if below < 0:
        # The chief meets it if it can stand next to the column's row-2 square in time.
        spare = _moves_to_spare(row, to_move)
        intercepted = KING_DISTANCE[chief][COLS + buffalo % COLS] - 1 <= spare
        weight = RUNNER_WEIGHT[row - 1] * (INTERCEPTED if intercepted else 1.0)
        runners.append((weight, buffalo, intercepted))
        return 0.0
    if below == buffalo - COLS:
        if row == 7:
            return FROZEN_ON_ROW7
        frozen = FROZEN + FROZEN_PER_CHIEF_STEP * KING_DISTANCE[chief][buffalo]
        return frozen + (FROZEN_ON_ROW3 if row == 3 else 0.0)
    steps = row - _row(below) - 1
    return HELD * HELD_DECAY**steps * (HELD_ON_ROW2 if _row(below) == 2 else 1.0)


def _buffalo_evaluate(game: AnyGame, state: Any) -> Values:
    value = _black_value(state.cells, state.ply % 2)
    return (value, 1.0 - value)


# --- the tree's moves ------------------------------------------------------------------------


def _tree_order(cells: Sequence[str], seat: int, moves: list[Any], rng: random.Random) -> list[Any]:
    """Black: every push, open buffalo first. White: the moves that survive a push to row 2,
    and among them captures, chief steps and dogs closing a column, the most urgent first.
    Ties go in the generator's order: the search gives equal moves their turns in that order,
    so a robot does not replay the same game move for move."""
    if seat == BLACK:
        open_set = set(open_leads(cells))
        return sorted(moves, key=lambda m: (m.src not in open_set, rng.random()))
    leads = open_leads(cells)
    urgency = {lead % COLS: rank for rank, lead in enumerate(leads)}
    work = cells if isinstance(cells, list) else list(cells)
    survives, safe_too = white_replies(work, moves)
    survivors = [m for m, ok in zip(moves, survives, strict=True) if ok]
    safe = [m for m, ok in zip(moves, safe_too, strict=True) if ok]
    scored = []
    for move in safe or survivors or moves:
        if cells[move.dst] == BUFFALO:
            rank: tuple[float, ...] = (0, move.dst)
        elif cells[move.src] == DOG:
            col = move.dst % COLS
            if col not in urgency or move.dst > leads[urgency[col]]:
                continue  # a dog that closes no column
            rank = (1 + urgency[col], -move.dst, rng.random())
        else:
            rank = (20, rng.random())
        scored.append((rank, move))
    if not scored:  # only idle dog moves left: let the search see them all
        return safe or survivors or moves
    scored.sort(key=lambda pair: pair[0])
    return [move for _, move in scored]


def _buffalo_candidates(
    game: AnyGame, state: Any, seat: int, moves: list[Any], rng: random.Random
) -> list[Any]:
    """The tree's moves of ``state`` (see :func:`_tree_order`)."""
    return _tree_order(state.cells, seat, moves, rng)


#: The lean position the tactics and the tree search play on.
LEAN = BuffaloLean(_black_value, _tree_order)
#: The tactics' scores are logits of the win chance (scale 1), within +-6.9: this margin's
#: smallest share (0.15, the top level's) still spans them, so only forced results separate.
TACTICS_MARGIN = 100.0
#: Positions the tactics read (at 3-4 plies about 10 ms; the full 25,000 found no more).
TACTICS_NODES = 200
#: The most the lean tree buys within each level's former CPU per move (L2 binds: measured
#: over 12 positions of robot games, ms a move before/after: L1 12.9/10.2, L2 153/120,
#: L3 1171/827).
ITERATION_SCALE = 2.4
#: L3 alone spends nearly half as much again: at 2.4 its lean search took 1,143 ms a move
#: where the search before it took 1,742 (bench/robots.py, 40 games against 020b28e's L3), and
#: its lead over L2 had shrunk to 72% as the tactics made L2 stronger.
LEVEL_SCALES = (1.0, 1.0, 1.45)


POLICY = Policy(
    evaluate=_buffalo_evaluate,
    cutoff=0,
    candidates=_buffalo_candidates,
    minimax_weight=0.3,
    temperatures=(0.5, 0.0, 0.0),
    ordered=True,
    # Little exploration: with more, the top level's longer search spread its visits over
    # defences that all look lost and lost to the greedy player 16 games of 20 as White.
    exploration=0.2,
    tactics=Tactics(lean=LEAN, margin=TACTICS_MARGIN, scale=1.0, node_budget=TACTICS_NODES),
    lean_tree=True,
    iteration_scale=ITERATION_SCALE,
    level_scales=LEVEL_SCALES,
)
