"""What one seat may know of a position, as a puzzle: what determinisation searches
(:mod:`pbmserv.games.hmdg.determinize`), never the position itself.

A seat sees its own pieces, every revealed piece and the public log: the line each of the
opponent's secret placements was announced in, what was revealed in answer, the fives and the
passes. What it does not see is where on its line each of those placements went (and, while
it is to answer, the point the opponent has just announced a line of).

The position is reduced to a :class:`Puzzle`, made of what the seat sees and nothing else
(its ``skeleton`` is the state with every such secret point blanked to the first point of its
line), so that two positions that look the same to the seat give the same puzzle; a drawn
placement of the secret points fills the skeleton in again (:func:`drawn_state`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from pbmserv.games.hmdg.geometry import FULL, WINDOWS, X_SIDE, line_mask, mask_of
from pbmserv.games.hmdg.state import Announce, HmdgState, TurnRecord

#: Stands for "no five announced": every turn comes before it.
_NEVER = 1 << 30


@dataclass(frozen=True)
class SecretTurn:
    """One of the opponent's turns placed in secret: its index among the turns and the points
    the rules allowed it (its line, not revealed then, not a point the opponent is known to
    have played on)."""

    turn: int
    choices: int


@dataclass(frozen=True)
class PassRule:
    """After ``turn``, the opponent had no free point left (``full``) or had one: what the
    passes in the log say, kept only where it had enough secret pieces for it to matter.
    ``known`` are its pieces by then whose point is public; ``revealed`` the revealed points."""

    turn: int
    full: bool
    known: int
    revealed: int


@dataclass(frozen=True)
class Puzzle:
    """What one seat knows of a position, and the constraints on the opponent's secrets."""

    #: The state with the opponent's secret points blanked (pieces: its revealed ones only).
    skeleton: HmdgState
    #: The opponent's side: whose secrets are drawn.
    side: int
    secrets: tuple[SecretTurn, ...]
    #: The opponent's pieces whose point is public, with the turn that placed them (-1: the
    #: opening x).
    known: tuple[tuple[int, int], ...]
    #: The opponent's pieces revealed in its answers, with the turn of that answer: each was
    #: placed in secret by an earlier turn.
    revealed_later: tuple[tuple[int, int], ...]
    #: The turn that gave the opponent its first five (_NEVER: none).
    five_turn: int
    #: Windows the first five may be (their masks), when there is one.
    windows: tuple[int, ...]
    passes: tuple[PassRule, ...]
    #: The line of the opponent's pending point when that point is secret, else 0.
    pending_line: int

    @property
    def has_secrets(self) -> bool:
        return bool(self.secrets) or bool(self.pending_line)


def puzzle(state: HmdgState, side: int) -> Puzzle:
    """The puzzle of ``state`` as the opponent of ``side`` sees it (``side``: whose secrets).
    Reads only what that seat may see: of the secret turns, their line and public flags."""
    opening = state.opening
    assert opening is not None
    revealed = 1 << opening  # revealed before the turn being read
    taboo = 0  # points the opponent is known to have played on (no secret piece there)
    known: list[tuple[int, int]] = []
    if side == X_SIDE:
        known.append((-1, opening))
        taboo |= 1 << opening
    secret_lines: list[tuple[int, int]] = []
    revealed_later: list[tuple[int, int]] = []
    records: list[TurnRecord] = []
    passes: list[PassRule] = []
    five_turn = _NEVER
    for index, record in enumerate(state.turns):
        if record.side == side and not record.revealed:
            line = line_mask(record.point, record.line)
            secret_lines.append((index, line & ~revealed))
            blank = (line & -line).bit_length() - 1
            records.append(
                TurnRecord(
                    side, blank, record.line, (), True, record.five, record.passed, record.asked
                )
            )
        else:
            records.append(record)
            if record.revealed:  # always, for a turn of the opponent's here
                if record.side == side:
                    taboo |= 1 << record.point
                    if record.placed:
                        known.append((index, record.point))
                else:
                    revealed_later.extend((point, index) for point in record.revealed)
                # Anything revealed reveals the mover's point too (on a failed move, it is
                # among the revealed points already).
                revealed |= mask_of(record.revealed) | 1 << record.point
        if record.side == side and record.five:
            five_turn = index
        # Whether the opponent had a free point left shows in the passes. Its pieces whose
        # point is known are revealed, so it can have had none only when its secret pieces
        # are as many as the points not revealed.
        if len(secret_lines) >= FULL.bit_count() - revealed.bit_count():
            full: bool | None = record.passed if record.side != side else None
            if record.side == side and record.passed:
                full = False  # it played again, so it had a point left
            if full is not None:
                passes.append(PassRule(index, full, mask_of(p for t, p in known), revealed))
    secrets = tuple(SecretTurn(turn, choices & ~taboo) for turn, choices in secret_lines)
    pending, pending_line = state.pending, 0
    if pending is not None and state.mover == side:
        pending_line = line_mask(pending.point, pending.line)
        blank = (pending_line & -pending_line).bit_length() - 1
        pending = Announce(blank, pending.line)
    pieces = list(state.pieces)
    pieces[side] = state.shown[side]
    # The other fields are public: the opening, the sides, whose turn, the revealed pieces,
    # the fives, the result and the last move's public text.
    skeleton = replace(state, turns=tuple(records), pending=pending, pieces=(pieces[0], pieces[1]))
    windows = _five_windows(records, secrets, known, five_turn)
    return Puzzle(
        skeleton,
        side,
        secrets,
        tuple(known),
        tuple(revealed_later),
        five_turn,
        windows,
        tuple(passes),
        pending_line,
    )


def _five_windows(
    records: Sequence[TurnRecord],
    secrets: Sequence[SecretTurn],
    known: Sequence[tuple[int, int]],
    five_turn: int,
) -> tuple[int, ...]:
    """The windows the opponent's first five may be: through the five's point (or its line's
    allowed points, when secret), every point held by then, and not all held before."""
    if five_turn == _NEVER:
        return ()
    held_before = mask_of(p for t, p in known if t < five_turn)
    held_by = mask_of(p for t, p in known if t <= five_turn)
    reachable = held_by
    through = 0
    for secret in secrets:
        if secret.turn <= five_turn:
            reachable |= secret.choices
        if secret.turn == five_turn:
            through = secret.choices
    if not through:  # the five's point is public
        through = 1 << records[five_turn].point
    return tuple(
        w.mask
        for w in WINDOWS
        if w.mask & through and not w.mask & ~reachable and w.mask & ~held_before
    )


def drawn_state(problem: Puzzle, points: Sequence[int], pending: int | None) -> HmdgState:
    """The skeleton with the secret points filled in."""
    skeleton = problem.skeleton
    side = problem.side
    records = list(skeleton.turns)
    for secret, point in zip(problem.secrets, points, strict=True):
        blank = records[secret.turn]
        records[secret.turn] = TurnRecord(
            side, point, blank.line, (), True, blank.five, blank.passed, blank.asked
        )
    pieces = list(skeleton.pieces)  # the opponent's: those revealed, to which its secrets add
    pieces[side] |= mask_of(points)
    announced = skeleton.pending
    if pending is not None:
        assert announced is not None
        announced = Announce(pending, announced.line)
    return replace(skeleton, turns=tuple(records), pending=announced, pieces=(pieces[0], pieces[1]))
