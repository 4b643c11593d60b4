"""Entropy's board diagram: both rounds' boards, the supply, and the final score."""

from __future__ import annotations

from collections.abc import Sequence

from pbmserv.games.entropy.score import BoardScore, board_score
from pbmserv.games.entropy.state import (
    _COLUMNS,
    _LETTERS,
    COLOURS,
    OVER,
    STANDARD,
    EntropyState,
    _named,
    _spaced,
    _tally,
)

# --- the diagram -----------------------------------------------------------------------------


def _rows(cells: bytes, size: int) -> list[str]:
    text = "".join(_LETTERS[c - 1] if c else "." for c in cells)
    return [text[r * size : (r + 1) * size] for r in range(size)]


def _board_lines(cells: bytes, size: int, heading: str) -> list[str]:
    """The board, row N at the top, with each row's score on its right, each column's below,
    and the total."""
    score: BoardScore = board_score(cells, size)
    rows = _rows(cells, size)
    lines = [f"     {''.join(f'{c:>3}' for c in _COLUMNS[:size])}    row"]
    for r in range(size - 1, -1, -1):
        drawn = "".join(f"{c:>3}" for c in rows[r])
        lines.append(f"  {r + 1:>2} {drawn}  | {score.rows[r]:>3}")
    lines.append(f"      {'-' * (3 * size)}")
    lines.append(f"  col{''.join(f'{s:>3}' for s in score.columns)}")
    lines.append(
        f"{heading}: {sum(score.rows)} in rows + {sum(score.columns)} in columns = {score.total}."
    )
    return lines


def _legend(size: int) -> str:
    named = ", ".join(f"{letter} {name}" for letter, name in COLOURS[:size])
    return f"Colours: {named}."


def _supply_lines(state: EntropyState) -> list[str]:
    lines = [_legend(state.size)]
    if state.variant == STANDARD:
        bag = state.bag()
        lines.append(
            f"In the bag ({sum(bag)}): {_tally(bag)}." if any(bag) else "The bag is empty."
        )
        if state.drawn:
            lines.append(f"Drawn from the bag for Chaos to place: {_named(state.drawn)}.")
        return lines
    supply = state.supply()
    held = _spaced(state.reserve) or "empty"
    lines.append(f"Chaos's reserve ({sum(state.reserve)}): {held}.")
    lines.append(f"Supply, for Order to hand over ({sum(supply)}): {_tally(supply)}.")
    return lines


def _names(players: Sequence[str]) -> tuple[str, str]:
    """The players by seat: their user names, or (without them) their order in the challenge."""
    if len(players) == 2:
        return players[0], players[1]
    return "the first player", "the second player"


def _roles(order: str, chaos: str, tense: str) -> str:
    return f"{order} {tense} Order, {chaos} {tense} Chaos"


def render_diagram(state: EntropyState, players: Sequence[str]) -> str:
    """The board in play with the score of every row and column and the colours left, saying
    who plays which role; at the end both rounds' boards, who scored what and by how much."""
    names = _names(players)
    order, chaos = names[state.order_seat], names[state.chaos_seat]
    if state.stage == OVER:
        return _render_final(state, order, chaos)
    lines = []
    if state.round == 1:
        lines.append(f"Round 1 of 2: {_roles(order, chaos, 'is')}; they swap roles for round 2.")
    else:
        assert state.first is not None
        before = board_score(state.first, state.size).total
        if not any(state.cells):  # round 1 has just ended: its full board is news
            lines += ["Round 1 is over: the last counter has filled the board.", ""]
            lines += _board_lines(state.first, state.size, f"{chaos} scored as Order")
            lines.append("")
        lines.append(f"Round 2 of 2: {_roles(order, chaos, 'is')}.")
        lines.append(f"In round 1, {chaos} scored {before} as Order.")
    lines.append("")
    lines.extend(_board_lines(state.cells, state.size, f"{order}'s score as Order so far"))
    lines.append("")
    lines.extend(_supply_lines(state))
    return "\n".join(lines)


def _render_final(state: EntropyState, order: str, chaos: str) -> str:
    """Both rounds' boards; ``order`` is Order of round 2 (Chaos of round 1)."""
    assert state.first is not None
    size = state.size
    first = board_score(state.first, size).total
    second = board_score(state.cells, size).total
    lines = [f"Round 1: {_roles(chaos, order, 'was')}.", ""]
    lines.extend(_board_lines(state.first, size, f"{chaos} scored as Order"))
    lines.extend(["", f"Round 2: {_roles(order, chaos, 'was')}.", ""])
    lines.extend(_board_lines(state.cells, size, f"{order} scored as Order"))
    lines.append("")
    if first == second:
        lines.append(f"A draw: both scored {first} as Order.")
    else:
        won, lost = (order, chaos) if second > first else (chaos, order)
        best, worst = max(first, second), min(first, second)
        margin = best - worst
        lines.append(
            f"{won} won by {margin} point{'s' if margin != 1 else ''}: "
            f"{best} as Order, against {worst} for {lost}."
        )
    lines.append(_legend(size))
    return "\n".join(lines)
