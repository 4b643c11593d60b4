"""Buffalo's lean position (pbmserv.robots.policies.buffalo_lean) against the rule module over
many random games, Buffalo and Rebel Buffalo: the same moves, the same end after each of them
(the winner included), a pop that gives the position back exactly. And the table-driven,
incremental reckoning the policy's evaluation and tree moves now use against the plain
reckoning it replaced, kept here as the reference."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pbmserv.games import find_game
from pbmserv.games.base import AnyGame
from pbmserv.games.buffalo import BuffaloState, position
from pbmserv.robots.lean_search import LeanSearch
from pbmserv.robots.levels import robot_move
from pbmserv.robots.mcts import Budget
from pbmserv.robots.policies import buffalo as policy
from pbmserv.robots.policies import buffalo_lean as lean_module
from pbmserv.robots.policies.buffalo_lean import BuffaloLean
from pbmserv.robots.policy import sigmoid
from pbmserv.robots.tactics import LeanPlay, root_scores
from pbmserv.robots.view import seat_view

COLS, CELLS = lean_module.COLS, lean_module.CELLS
BLACK, WHITE = lean_module.BLACK, lean_module.WHITE
BUFFALO, DOG, CHIEF, EMPTY = policy.BUFFALO, policy.DOG, policy.CHIEF, policy.EMPTY
ROW2 = range(COLS, 2 * COLS)
ROW3 = range(2 * COLS, 3 * COLS)
KING_STEPS = tuple((dc, dr) for dc in (-1, 0, 1) for dr in (-1, 0, 1) if dc or dr)
LEAN = policy.LEAN


def _game() -> AnyGame:
    game = find_game("buffalo")
    assert game is not None
    return game


# --- the plain reckoning, as the policy had it (the reference) ------------------------------


def ref_white_targets(cells: Sequence[str], src: int) -> list[int]:
    col, row = src % COLS, src // COLS + 1
    chief = cells[src] == CHIEF
    found = []
    for dc, dr in KING_STEPS:
        c, r = col + dc, row + dr
        while 0 <= c < COLS and 2 <= r <= 6:
            target = cells[(r - 1) * COLS + c]
            if target == EMPTY or (chief and target == BUFFALO):
                found.append((r - 1) * COLS + c)
            if target != EMPTY or chief:
                break
            c, r = c + dc, r + dr
    return found


def _near(a: int, b: int) -> bool:
    return abs(a % COLS - b % COLS) <= 1 and abs(a // COLS - b // COLS) <= 1


def _king_distance(a: int, b: int) -> int:
    return max(abs(a % COLS - b % COLS), abs(a // COLS - b // COLS))


def ref_white_survives(cells: Sequence[str]) -> bool:
    if any(cells[i] == BUFFALO for i in ROW2):
        return False
    threats = [i for i in ROW3 if cells[i] == BUFFALO and cells[i - COLS] == EMPTY]
    if not threats:
        return True
    chief = cells.index(CHIEF)
    if any(not _near(chief, i - COLS) for i in threats):
        return False
    return all(abs(a % COLS - b % COLS) <= 1 for a in threats for b in threats)


def _rescues(cells: Sequence[str]) -> list[tuple[int, int]]:
    chief = cells.index(CHIEF)
    moves = [(chief, t) for t in ref_white_targets(cells, chief)]
    for dog in (i for i, piece in enumerate(cells) if piece == DOG):
        moves.extend((dog, t) for t in ref_white_targets(cells, dog) if t < 2 * COLS)
    return moves


def _moved(cells: Sequence[str], src: int, dst: int) -> list[str]:
    chars = list(cells)
    chars[dst], chars[src] = chars[src], EMPTY
    return chars


def ref_black_wins_soon(cells: Sequence[str]) -> bool:
    if not ref_white_survives(cells):
        return True
    for src in range(3 * COLS, 4 * COLS):
        if cells[src] != BUFFALO or cells[src - COLS] != EMPTY or cells[src - 2 * COLS] != EMPTY:
            continue
        pushed = _moved(cells, src, src - COLS)
        if not any(ref_white_survives(_moved(pushed, a, b)) for a, b in _rescues(pushed)):
            return True
    return False


def ref_open_leads(cells: Sequence[str]) -> list[int]:
    leads = []
    for col in range(COLS):
        for index in range(COLS + col, CELLS, COLS):
            if cells[index] != EMPTY:
                if cells[index] == BUFFALO:
                    leads.append(index)
                break
    return sorted(leads)


def _row(index: int) -> int:
    return index // COLS + 1


def ref_black_value(cells: Sequence[str], to_move: int) -> float:
    p = policy
    chief = cells.index(CHIEF)
    on_row2 = [i for i in ROW2 if cells[i] == BUFFALO]
    if to_move == BLACK:
        if on_row2:
            return 1.0
        if ref_black_wins_soon(cells):
            return p.SURE
    elif len(on_row2) > 1 or (on_row2 and not _near(chief, on_row2[0])):
        return 1.0
    threat, committed = 0.0, set()
    runners: list[tuple[float, int, bool]] = []
    for col in range(COLS):
        below = -1
        for index in range(COLS + col, CELLS, COLS):
            piece = cells[index]
            if piece == BUFFALO:
                threat += _ref_column_threat(cells, index, below, chief, to_move, runners)
                holds = below == index - COLS or _row(index) <= p.HOLDS_FROM_ROW
                if below >= 0 and cells[below] == DOG and holds:
                    committed.add(below)
                break
            if piece != EMPTY:
                below = index
    free = [i for i, piece in enumerate(cells) if piece == DOG and i not in committed]
    reach = {dog: ref_white_targets(cells, dog) for dog in free} if runners else {}
    for weight, lead, intercepted in sorted(runners, reverse=True):
        spare = _row(lead) - 2 - (1 if to_move == BLACK else 0)
        dog = next(
            (d for d in free if any(t % COLS == lead % COLS and t < lead for t in reach[d])), None
        )
        if dog is not None:
            threat += weight * p.COVERED
            free.remove(dog)
        elif spare >= 2 and (dog := _ref_dog_in_two(cells, lead, free, reach)) is not None:
            threat += weight * p.COVERED_LATER
            free.remove(dog)
        else:
            threat += weight + (0.0 if intercepted else p.UNANSWERED)
    threat += p.MATERIAL * sum(1 for piece in cells if piece == BUFFALO)
    prey = [i for i in range(2 * COLS, 6 * COLS) if cells[i] == BUFFALO]
    if prey:
        threat += p.IDLE_CHIEF_STEP * min(_king_distance(chief, i) for i in prey)
    front = [i for i in range(2 * COLS, 5 * COLS) if cells[i] == BUFFALO]
    threat += p.CHIEF_WING * sum(max(0, _king_distance(chief, i) - 2) for i in front)
    if to_move == BLACK:
        threat += p.TEMPO
    return 0.02 + 0.94 * sigmoid((threat - p.EVEN) / p.SPREAD)


def _ref_dog_in_two(
    cells: Sequence[str], lead: int, free: list[int], reach: dict[int, list[int]]
) -> int | None:
    for target in range(lead % COLS + COLS, lead - COLS, COLS):
        if cells[target] != EMPTY:
            continue
        meeting = set(ref_white_targets(cells, target))
        dog = next((d for d in free if meeting.intersection(reach[d])), None)
        if dog is not None:
            return dog
    return None


def _ref_column_threat(
    cells: Sequence[str],
    buffalo: int,
    below: int,
    chief: int,
    to_move: int,
    runners: list[tuple[float, int, bool]],
) -> float:
    p = policy
    row = _row(buffalo)
    if below < 0:
        spare = row - 2 - (1 if to_move == BLACK else 0)
        intercepted = _king_distance(chief, COLS + buffalo % COLS) - 1 <= spare
        weight = p.RUNNER_WEIGHT[row - 1] * (p.INTERCEPTED if intercepted else 1.0)
        runners.append((weight, buffalo, intercepted))
        return 0.0
    if below == buffalo - COLS:
        if row == 7:
            return p.FROZEN_ON_ROW7
        frozen = p.FROZEN + p.FROZEN_PER_CHIEF_STEP * _king_distance(chief, buffalo)
        return frozen + (p.FROZEN_ON_ROW3 if row == 3 else 0.0)
    steps = row - _row(below) - 1
    return p.HELD * p.HELD_DECAY**steps * (p.HELD_ON_ROW2 if _row(below) == 2 else 1.0)


def ref_candidates(
    cells: Sequence[str], seat: int, moves: list[Any], rng: random.Random
) -> list[Any]:
    if seat == BLACK:
        open_set = set(ref_open_leads(cells))
        return sorted(moves, key=lambda m: (m.src not in open_set, rng.random()))
    open_leads = ref_open_leads(cells)
    urgency = {lead % COLS: rank for rank, lead in enumerate(open_leads)}
    after = {move: _moved(cells, move.src, move.dst) for move in moves}
    survivors = [m for m in moves if ref_white_survives(after[m])]
    safe = [m for m in survivors if not ref_black_wins_soon(after[m])]
    scored = []
    for move in safe or survivors or moves:
        if cells[move.dst] == BUFFALO:
            rank: tuple[float, ...] = (0, move.dst)
        elif cells[move.src] == DOG:
            col = move.dst % COLS
            if col not in urgency or move.dst > open_leads[urgency[col]]:
                continue
            rank = (1 + urgency[col], -move.dst, rng.random())
        else:
            rank = (20, rng.random())
        scored.append((rank, move))
    if not scored:
        return safe or survivors or moves
    scored.sort(key=lambda pair: pair[0])
    return [move for _, move in scored]


# --- the cross-checks ------------------------------------------------------------------------


def _winner_seen(lean: BuffaloLean, board: Any) -> int | None:
    """The winner by the lean position's ``ended`` (from the side to move's view)."""
    ended = lean.ended(board)
    if ended is None:
        return None
    to_move = lean.seat(board)
    return to_move if ended > 0 else 1 - to_move


def _snapshot(board: Any) -> tuple[Any, ...]:
    return (list(board.cells), board.ply, board.winner, len(board.undo))


def _pick(game: AnyGame, state: BuffaloState, moves: list[Any], rng: random.Random) -> Any:
    """A random move, or half the time the policy's first tree move (games that last, and
    reach the tactics the policy reads, not only random buffalo walking through)."""
    if rng.random() < 0.5:
        ordered = policy.POLICY.tree_moves(game, state, state.ply % 2, moves, rng)
        return ordered[0]
    return moves[rng.randrange(len(moves))]


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), rebel=st.booleans())
def test_the_lean_position_plays_as_the_rules_do(seed: int, rebel: bool) -> None:
    game = _game()
    rng = random.Random(seed)
    state = game.new_game({"variant": "rebel" if rebel else "standard"}, rng)
    board = LEAN.position(state)
    for _ in range(200):
        seat = state.ply % 2
        legal = game.legal_moves(state, seat)
        assert LEAN.legal(board) == legal  # the same order too: the tree's ties depend on it
        assert sorted(LEAN.moves(board)) == sorted(legal)
        forcing = [m for m in legal if state.cells[m.dst] == BUFFALO or m.dst < 2 * COLS]
        if seat == WHITE:
            forcing = [m for m in legal if state.cells[m.dst] == BUFFALO]
        assert sorted(LEAN.captures(board)) == sorted(forcing)
        if not legal:
            break
        before = _snapshot(board)
        for move in legal:
            LEAN.push(board, move)
            after = game.apply(state, move, rng)
            assert "".join(board.cells) == after.cells
            assert _winner_seen(LEAN, board) == after.winner
            LEAN.pop(board)
            assert _snapshot(board) == before
        move = _pick(game, state, legal, rng)
        state = game.apply(state, move, rng)
        LEAN.push(board, move)
        assert _winner_seen(LEAN, board) == state.winner
        if state.winner is not None:
            assert LEAN.legal(board) == [] and LEAN.tree_moves(board) == []
            break
    # Popping the whole game gives the start back.
    while board.undo:
        LEAN.pop(board)
    assert "".join(board.cells) == game.new_game({}, rng).cells and board.ply == 0


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_the_fast_reckoning_equals_the_plain_one(seed: int) -> None:
    """At every position of a game: the evaluation, the two-move tactics, the pieces' reach
    and the tree's moves (the generator in the same state) are those of the reference."""
    game = _game()
    rng = random.Random(seed)
    state = game.new_game({}, rng)
    for _ in range(200):
        if state.winner is not None:
            break
        seat, cells = state.ply % 2, state.cells
        board = LEAN.position(state)
        value = ref_black_value(cells, seat)
        assert policy._black_value(cells, seat) == value
        assert LEAN.win_chance(board) == (value if seat == BLACK else 1.0 - value)
        assert LEAN.win_chance(board) == LEAN.win_chance(board)  # the kept value
        if seat == BLACK:
            assert lean_module.white_survives(cells) == ref_white_survives(cells)
            assert lean_module.black_wins_soon(list(cells)) == ref_black_wins_soon(cells)
        for src in range(COLS, 6 * COLS):
            if cells[src] != BUFFALO:
                assert policy._white_targets(cells, src) == ref_white_targets(cells, src)
        assert lean_module.open_leads(cells) == ref_open_leads(cells)
        legal = game.legal_moves(state, seat)
        draw = rng.randrange(2**32)
        expected = ref_candidates(cells, seat, legal, random.Random(draw))
        assert policy._tree_order(cells, seat, legal, random.Random(draw)) == expected
        board.rng = random.Random(draw)
        assert LEAN.tree_moves(board) == expected
        state = game.apply(state, _pick(game, state, legal, rng), rng)


#: Four dogs on row 2, each holding back a buffalo on row 3: none may leave its square.
PINNED = {"d3": "B", "e3": "B", "g3": "B", "h3": "B", "d2": "D", "e2": "D", "g2": "D", "h2": "D"}


def test_the_incremental_tactics_on_hand_built_positions() -> None:
    """Positions where the threats on row 3 decide: the chief far, a dog leaving row 2 and
    opening a column, two threats far apart."""
    for pieces, to_move in (
        ({**PINNED, "b4": "B", "k6": "C", "a7": "B", "k7": "B"}, BLACK),
        ({**PINNED, "b3": "B", "k6": "C", "a7": "B"}, BLACK),
        ({**PINNED, "b3": "B", "c2": "C", "a7": "B"}, BLACK),
        ({"b3": "B", "j3": "B", "f2": "C", "a2": "D", "c4": "D", "i5": "D", "k2": "D"}, WHITE),
        ({"c4": "B", "d4": "B", "c2": "D", "d2": "C", "g2": "D", "h2": "D", "k2": "D"}, BLACK),
    ):
        state = position(pieces, to_move=to_move)
        cells = state.cells
        assert policy._black_value(cells, to_move) == ref_black_value(cells, to_move)
        if to_move == BLACK:
            assert lean_module.black_wins_soon(list(cells)) == ref_black_wins_soon(cells)
        legal = _game().legal_moves(state, to_move)
        ordered = policy._tree_order(cells, to_move, legal, random.Random(1))
        assert ordered == ref_candidates(cells, to_move, legal, random.Random(1))


def test_the_policy_searches_on_the_lean_position() -> None:
    policy_ = policy.POLICY
    assert policy_.lean_tree and policy_.tactics is not None
    assert isinstance(policy_.tactics.lean, LeanPlay)


def test_the_lean_tree_leaves_its_position_as_it_found_it() -> None:
    game = _game()
    state = position(
        {"b3": "B", "f7": "B", "j7": "B", "k2": "C", "d5": "D", "e5": "D", "g5": "D", "h6": "D"},
        to_move=WHITE,
    )
    search = LeanSearch(game, state, WHITE, policy.POLICY, random.Random(0), LEAN)
    found = search.run(Budget(iterations=300, cpu_seconds=60.0))
    assert found.move.dst == COLS + 1  # a dog blocks b2
    assert "".join(search.position.cells) == state.cells and not search.position.undo


def test_the_tactics_score_every_root_move() -> None:
    """The tactics' scores are the logits of the win chances (a scale of 1), a forced loss
    far below: a dog that leaves b2 open to b3 loses."""
    assert policy.POLICY.tactics is not None
    state = position(
        {"b3": "B", "f7": "B", "j7": "B", "k2": "C", "d5": "D", "e5": "D", "g5": "D", "h6": "D"},
        to_move=WHITE,
    )
    scored, nodes = root_scores(policy.POLICY.tactics, state, 1)
    assert nodes > 0
    scores: dict[Any, float] = dict(scored)
    blocks = [m for m in scores if m.dst == COLS + 1]
    assert blocks and min(scores[m] for m in blocks) > max(
        s for m, s in scores.items() if m not in blocks
    )


def test_every_level_answers_with_a_legal_move() -> None:
    game = _game()
    rng = random.Random(3)
    state = game.new_game({}, rng)
    for _ in range(9):
        state = game.apply(state, rng.choice(game.legal_moves(state, state.ply % 2)), rng)
    for level in (1, 2, 3):
        choice = robot_move(
            game, seat_view(game, state, state.ply % 2), level, random.Random(level)
        )
        assert game.parse_move(state, state.ply % 2, choice.text) in game.legal_moves(
            state, state.ply % 2
        )


def test_the_tree_search_generator_orders_the_ties() -> None:
    """Ties in the tree's moves follow the search's generator: one seed, one order (a search
    is reproducible); another seed, another order (a robot does not replay the same game)."""
    game = find_game("buffalo")
    assert game is not None
    state = game.new_game({}, random.Random(0))
    lean = policy.LEAN

    def order(seed: int) -> list[object]:
        return list(lean.tree_moves(lean.position(state, random.Random(seed))))

    assert order(1) == order(1)
    assert len({tuple(map(str, order(seed))) for seed in range(4)}) > 1
