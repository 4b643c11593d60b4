"""What the player to move is asked to do, with an example that is legal in the position, and
the hint for a move of the wrong role or stage."""

from __future__ import annotations

from pbmserv.games.base import (
    IllegalMoveError,
)
from pbmserv.games.entropy.rules import (
    _present,
)
from pbmserv.games.entropy.state import (
    _EXAMPLE_STOCK,
    ENTROPY2,
    PLACE,
    RESERVE_SIZE,
    STANDARD,
    STOCK,
    EntropyState,
    _centre_first,
    _letter,
    _named,
    _slides,
    _spaced,
    square_name,
)

# --- prompts and errors ------------------------------------------------------------------------


def _example_square(state: EntropyState) -> str:
    cell = next(i for i in _centre_first(state.size) if not state.cells[i])
    return square_name(cell, state.size)


def _example_order(state: EntropyState) -> str:
    slide = next(_slides(state.cells, state.size), None)
    text = "pass" if slide is None else "-".join(square_name(i, state.size) for i in slide)
    if state.variant == ENTROPY2:
        left = _present(state.supply())
        if left:
            text += f" give {_letter(left[0])}"
    return text


#: The prompts made lately, by what they depend on: ``to_move`` asks for the prompt, and a
#: robot's search asks ``to_move`` at every step of every iteration, mostly of boards met before.
_TASKS: dict[tuple[str, str, bytes, int, tuple[int, ...]], str] = {}
_TASKS_KEPT = 4096


def _task(state: EntropyState) -> str:
    """What the player to move does now, with an example that is legal here: the prompt of the
    board mail, and the hint at the end of error messages."""
    # The board's bytes fix its size too (25 or 49 squares); the supply follows from the board
    # and the reserve.
    key = (state.stage, state.variant, state.cells, state.drawn, state.reserve)
    task = _TASKS.get(key)
    if task is None:
        if len(_TASKS) >= _TASKS_KEPT:
            _TASKS.clear()
        task = _TASKS[key] = _compose_task(state)
    return task


def _compose_task(state: EntropyState) -> str:
    """The prompt of :func:`_task`, made afresh."""
    if state.stage == STOCK:
        counters = f"{RESERVE_SIZE} counters for Chaos's reserve"
        return f"as Order, choose {counters}, e.g. {_EXAMPLE_STOCK}"
    if state.stage == PLACE:
        square = _example_square(state)
        if state.variant == STANDARD:
            return f"as Chaos, place the {_named(state.drawn)} counter from the bag, e.g. {square}"
        first = _letter(_present(state.reserve)[0])
        return (
            f"as Chaos, place a counter of your reserve ({_spaced(state.reserve)}), "
            f"e.g. {square} {first}"
        )
    example = _example_order(state)
    if " give " in example:
        return f"as Order, slide or pass and give Chaos a counter, e.g. {example}"
    return f"as Order, slide a counter like a rook, e.g. {example}, or pass"


def _wrong_kind(state: EntropyState, shown: str) -> IllegalMoveError:
    """A move in the game's notation, but of another role or stage than the one in play."""
    if state.stage == STOCK:
        why = "a round of Entropy II opens with Order stocking Chaos's reserve"
    elif state.stage == PLACE:
        why = "only Order slides counters or passes"
    else:
        why = "only Chaos places counters"
    return IllegalMoveError(f"{shown}: {why}; {_task(state)}")
