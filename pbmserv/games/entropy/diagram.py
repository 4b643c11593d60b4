"""Entropy's board diagram: both rounds' boards, the supply, and the final score."""

from __future__ import annotations

from pbmserv.games.entropy.score import BoardScore, board_score
from pbmserv.games.entropy.state import (
    _COLUMNS,
    _LETTERS,
    COLOURS,
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


def _render_final(state: EntropyState) -> str:
    assert state.first is not None and state.result is not None
    size = state.size
    lines = ["Round 1 (Order was the player who is Chaos in round 2):", ""]
    lines.extend(_board_lines(state.first, size, "Order scored"))
    lines.extend(["", "Round 2:", ""])
    lines.extend(_board_lines(state.cells, size, "Order scored"))
    first = board_score(state.first, size).total
    second = board_score(state.cells, size).total
    lines.extend(["", f"Totals as Order: {second} in round 2, {first} in round 1.", _legend(size)])
    return "\n".join(lines)
