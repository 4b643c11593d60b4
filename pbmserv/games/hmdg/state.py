"""HMDG's moves, the record of each finished turn, and the state."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final, overload

from pbmserv.games.base import (
    Outcome,
)
from pbmserv.games.hmdg.geometry import (
    CHOOSE,
    COL,
    MOVE,
    O_SIDE,
    OPENING,
    OVER,
    REVEAL,
    ROW,
    SIZE,
    X_SIDE,
    _free,
    points_of,
)

# --- moves -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Opening:
    """The first player's opening ``x``."""

    point: int


@dataclass(frozen=True)
class Choice:
    """The second player's choice of side (X or O)."""

    side: int


@dataclass(frozen=True)
class Announce:
    """A secret point and the line (``row`` or ``col``) announced with it."""

    point: int
    line: str

    # The robots' search hashes every legal announcement at every visit of a node (moves key
    # its children): the hash the dataclass would compute each time is worked out once.
    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.point, self.line)))

    def __hash__(self) -> int:
        hashed: int = self.__dict__["_hash"]
        return hashed

    def __reduce__(self) -> tuple[type[Announce], tuple[int, str]]:
        # Made anew when unpickled: a string's hash differs from one process to another.
        return (Announce, (self.point, self.line))


@dataclass(frozen=True)
class Reveal:
    """The opponent's answer: their hidden pieces on the announced line that they reveal."""

    points: tuple[int, ...]


HmdgMove = Opening | Choice | Announce | Reveal

#: Per point, its two announcements (row, then column), made once: the robots' search asks for
#: the legal moves again and again.
_ANNOUNCEMENTS_AT: Final = tuple((Announce(p, ROW), Announce(p, COL)) for p in range(SIZE * SIZE))
#: The announcements of a set of free points (a mask), as listed lately; cleared when full.
_LISTED: dict[int, tuple[Announce, ...]] = {}
_LISTED_KEPT: Final = 2048


def announcements(free: int) -> list[HmdgMove]:
    """Each point of ``free`` with its row, then its column, in the order of the points."""
    listed = _LISTED.get(free)
    if listed is None:
        if len(_LISTED) >= _LISTED_KEPT:
            _LISTED.clear()
        at = _ANNOUNCEMENTS_AT
        listed = _LISTED[free] = tuple(move for p in points_of(free) for move in at[p])
    return list(listed)


# --- state -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TurnRecord:
    """One finished turn, as everyone may learn it, plus the mover's secret ``point``."""

    side: int
    point: int
    line: str
    revealed: tuple[int, ...]  # the opponent's answer; empty: the piece went down in secret
    placed: bool  # False when a revealed piece stood on the point (the move failed)
    five: bool = False  # the placement gave the mover their first five in a row
    passed: bool = False  # the opponent had no point left to play on: the mover goes again
    #: False when "none" was answered at once, the line publicly holding no hidden piece of
    #: the opponent's: then the turn was one move, not two.
    asked: bool = True


class StoredTurns(Sequence[TurnRecord]):
    """The finished turns of a loaded state, read from the stored data the first time they are
    looked at (the log, ``apply``, ``dump``): reading them is work in proportion to the turns
    played, which a load that only asks whose turn it is never needs (issue 16).

    It equals, and hashes as, the tuple of the same records.
    """

    def __init__(self, read: Callable[[], tuple[TurnRecord, ...]], length: int, plies: int):
        self._read = read
        self._records: tuple[TurnRecord, ...] | None = None
        self._length = length
        #: The moves these turns took (two a turn, one where "none" was answered at once), as
        #: stored: what ``HmdgState.ply`` counts without reading them.
        self.plies = plies

    @property
    def records(self) -> tuple[TurnRecord, ...]:
        """The records, read on first use."""
        if self._records is None:
            self._records = self._read()
        return self._records

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> TurnRecord: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[TurnRecord, ...]: ...

    def __getitem__(self, index: int | slice) -> TurnRecord | tuple[TurnRecord, ...]:
        return self.records[index]

    def __iter__(self) -> Iterator[TurnRecord]:
        return iter(self.records)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StoredTurns):
            other = other.records
        return self.records == other if isinstance(other, tuple) else NotImplemented

    def __hash__(self) -> int:
        return hash(self.records)

    def __repr__(self) -> str:
        # Never reads the turns: a repr must not fail on data that cannot be read.
        shown = "not read yet" if self._records is None else repr(self._records)
        return f"StoredTurns({self._length} turns: {shown})"


@dataclass(frozen=True)
class HmdgState:
    """One position. Immutable: ``apply`` builds a new one.

    ``pieces`` and ``shown`` are bit masks per side (X, O): every piece of the side, and those
    that are revealed. ``mover`` is the side that announces next (stage move) or has announced
    (stage reveal, with ``pending`` its announcement). ``fives`` says whose first five has been
    announced. Public facts are stored when they happen, never recomputed from secret pieces.
    ``turns`` is a tuple, or in a loaded state :class:`StoredTurns`, read when first needed.
    """

    opening: int | None = None
    x_seat: int | None = None
    turns: Sequence[TurnRecord] = ()
    mover: int = O_SIDE
    pending: Announce | None = None
    pieces: tuple[int, int] = (0, 0)
    shown: tuple[int, int] = (0, 0)
    fives: tuple[bool, bool] = (False, False)
    result: Outcome | None = None
    last_move: str | None = None

    @property
    def ply(self) -> int:
        """Moves made: the opening, the choice, then an announcement and an answer a turn (the
        announcement alone when "none" was answered at once)."""
        made = (self.opening is not None) + (self.x_seat is not None)
        if isinstance(self.turns, StoredTurns):
            made += self.turns.plies  # without reading the stored turns
        else:
            made += sum(2 if turn.asked else 1 for turn in self.turns)
        return made + (self.pending is not None)

    @property
    def stage(self) -> str:
        """opening, choose, move, reveal (the opponent's answer), or over."""
        if self.result is not None:
            return OVER
        if self.opening is None:
            return OPENING
        if self.x_seat is None:
            return CHOOSE
        return MOVE if self.pending is None else REVEAL

    @property
    def revealed(self) -> int:
        """The points where a revealed piece stands: nobody may play there any more."""
        return self.shown[X_SIDE] | self.shown[O_SIDE]

    def hidden(self, side: int) -> int:
        """The pieces of ``side`` that are not revealed."""
        return self.pieces[side] & ~self.shown[side]

    def free(self, side: int) -> int:
        """The points ``side`` may play on: not its own and not revealed."""
        return _free(self.pieces[side], self.revealed)

    def seat_of(self, side: int) -> int:
        """The seat playing ``side`` (once the second player has chosen)."""
        assert self.x_seat is not None
        return self.x_seat if side == X_SIDE else 1 - self.x_seat

    def side_of(self, seat: int) -> int | None:
        """The side of ``seat``, or None before the second player has chosen."""
        if self.x_seat is None:
            return None
        return X_SIDE if seat == self.x_seat else O_SIDE
