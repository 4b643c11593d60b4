"""The game module contract.

Every game is one pure module under ``pbmserv.games`` that exposes ``GAME``, an instance of a
:class:`Game` subclass. Rule modules do no I/O: the server loads a state, asks the game to parse
and apply a move, and stores what ``dump`` returns. The names here are the project's public API.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Generic, TypeAlias, TypeVar

# Viewers other than a seat number. A seat is an int >= 0.
PUBLIC = "public"
OMNISCIENT = "omniscient"
Viewer = int | str

#: A game's state: an immutable value (or one copied on apply), JSON-serialisable by ``dump``.
S = TypeVar("S")
#: A game's move, as ``parse_move`` reads it and ``apply`` plays it.
M = TypeVar("M")


class MoveError(ValueError):
    """A move the player sent cannot be played; the message is shown to the player."""


class InvalidMoveError(MoveError):
    """The text is not a move in this game's notation at all."""


class IllegalMoveError(MoveError):
    """The text names a move, but the rules forbid it in this position."""


class AmbiguousMoveError(MoveError):
    """The text could mean more than one legal move."""


class OptionError(ValueError):
    """A challenge option is unknown or its value is out of range."""


class StateError(ValueError):
    """Stored game data does not describe a valid state (``load`` rejects it)."""


@dataclass(frozen=True)
class OptionSpec:
    """One ``-name=value`` challenge option."""

    name: str
    type: type  # int or str
    default: Any
    help: str
    minimum: int | None = None
    maximum: int | None = None
    #: The only values allowed, of ``type`` (ints for an int option).
    choices: tuple[str, ...] | tuple[int, ...] | None = None

    def describe(self) -> str:
        if self.choices:
            allowed = "|".join(str(c) for c in self.choices)
        elif self.minimum is not None and self.maximum is not None:
            allowed = f"{self.minimum}..{self.maximum}"
        else:
            allowed = "value"
        return f"-{self.name}={allowed} (default {self.default}): {self.help}"

    def convert(self, raw: str) -> Any:
        """Turn the text a player wrote into a value, or raise OptionError."""
        if self.type is int:
            try:
                value = int(raw)
            except ValueError:
                if self.choices:
                    raise self._not_a_choice(raw) from None
                raise OptionError(f"-{self.name}={raw}: the value must be a whole number") from None
            if self.choices and value not in self.choices:
                raise self._not_a_choice(raw)
            if (self.minimum is not None and value < self.minimum) or (
                self.maximum is not None and value > self.maximum
            ):
                raise OptionError(
                    f"-{self.name}={raw}: the value must be between {self.minimum} and "
                    f"{self.maximum}"
                )
            return value
        word = raw.lower()
        if self.choices and word not in self.choices:
            raise self._not_a_choice(raw)
        return word

    def _not_a_choice(self, raw: str) -> OptionError:
        allowed = ", ".join(str(c) for c in self.choices or ())
        return OptionError(f"-{self.name}={raw}: choose one of {allowed}")


@dataclass(frozen=True)
class MoveKind:
    """A kind of move written with a word of its own first: HMDG's ``reveal C3 C7``,
    Entropy's ``stock RRGBY``. ``parse_move`` reads it like any move. When ``Turn.stage`` has
    the kind's name, the stage takes moves of that kind (boardgame.io's stages: "A announces,
    B answers").
    """

    name: str  # the first word of such a move
    takes: str  # how the rest of the move is written, e.g. "[POINT ...]"
    summary: str  # what such a move does


@dataclass(frozen=True)
class GameSpec:
    """Static facts about a game."""

    name: str
    title: str
    seat_names: tuple[str, ...]
    aliases: tuple[str, ...] = ()
    hidden_information: bool = False
    uses_chance: bool = False
    has_swap: bool = False
    #: The players may agree a draw (games whose rules know a drawn result).
    draw_by_agreement: bool = False
    options: tuple[OptionSpec, ...] = ()
    #: Kinds of moves that begin with a word of their own; see MoveKind.
    move_kinds: tuple[MoveKind, ...] = ()
    #: Formats ``GAME history BOARD FORMAT`` can export (``pgn``); see Game.export.
    record_formats: tuple[str, ...] = ()
    #: How the history numbers moves: ``plies`` (1, 2, 3 ...: each player's move its own
    #: number) or ``chess`` (1. for White, 1... for Black, as chess players write them).
    numbering: str = "plies"
    #: ``svg`` draws one picture for every viewer (no secrets, no board turned to its viewer):
    #: a board mail's picture is drawn once for all its recipients.
    one_picture_for_all: bool = False

    @property
    def players(self) -> int:
        return len(self.seat_names)


@dataclass(frozen=True)
class Turn:
    """Who is to act now. ``seats`` is empty when the game is over."""

    seats: frozenset[int]
    stage: str = "move"
    prompts: Mapping[int, str] = field(default_factory=dict)


class Termination(Enum):
    """What kind of end a game came to (after python-chess's ``Termination``), so that code
    and tests ask for the kind, never match the reason's words."""

    # By the rules of the game:
    GOAL = "goal"  # a side reached the game's aim: a connection, a line, a capture, a crossing
    NO_MOVES = "no_moves"  # the side to act had no legal move (stalemate and the like)
    SCORE = "score"  # played to the end and decided on points
    REPETITION = "repetition"  # a position repeated (fivefold, or a threefold claimed)
    MOVE_LIMIT = "move_limit"  # a limit on moves ran out (75 or a claimed 50, nightfall)
    AGREEMENT = "agreement"  # the players agreed a draw
    # By the players or the server, outside the rules of the game:
    RESIGNATION = "resignation"
    TIME = "time"  # a clock ran out (core.timing.clocks), with no vacation days left to cover it
    FORFEIT = "forfeit"  # idle past the limit, or withdrawn from the tournament
    ADJUDICATION = "adjudication"  # the operator's ruling
    DECLINED = "declined"  # the challenged player refused the board before moving
    UNKNOWN = "unknown"  # a result stored before terminations were recorded


@dataclass(frozen=True)
class Outcome:
    """How a game ended. ``winners`` is empty for a draw; ``reason`` says it in words for
    people, ``termination`` in a kind for code."""

    winners: frozenset[int]
    reason: str
    scores: Mapping[int, float] | None = None
    termination: Termination = field(kw_only=True)

    @property
    def is_draw(self) -> bool:
        return not self.winners


class Game(ABC, Generic[S, M]):
    """Base class of every game, typed by its state ``S`` and move ``M``. Subclasses are
    stateless: all state lives in the ``S`` values."""

    SPEC: GameSpec
    #: Version of the JSON written by ``dump``; ``load`` refuses other versions.
    STATE_VERSION: int = 1

    def validate_options(self, options: Mapping[str, str], n_players: int) -> dict[str, Any]:
        """Check raw option strings and fill in defaults."""
        if n_players != self.SPEC.players:
            raise OptionError(f"{self.SPEC.title} is played by {self.SPEC.players} players")
        known = {opt.name: opt for opt in self.SPEC.options}
        values = {opt.name: opt.default for opt in self.SPEC.options}
        for raw_name, raw_value in options.items():
            name = raw_name.lower()
            if name not in known:
                if known:
                    listed = ", ".join(f"-{n}" for n in known)
                    raise OptionError(
                        f"-{raw_name} is not an option of {self.SPEC.name}: "
                        f"the options are {listed}"
                    )
                raise OptionError(f"-{raw_name}: {self.SPEC.name} takes no options")
            values[name] = known[name].convert(raw_value)
        return values

    @abstractmethod
    def new_game(self, options: Mapping[str, Any], rng: random.Random) -> S:
        """The starting state for validated options."""

    @abstractmethod
    def to_move(self, state: S) -> Turn:
        """Which seats must act now."""

    @abstractmethod
    def parse_move(self, state: S, seat: int, text: str) -> M:
        """Read a move; raise a graded MoveError whose message quotes ``text``."""

    @abstractmethod
    def format_move(self, state: S, move: M) -> str:
        """Canonical text of a move in ``state``; it parses back to the same move."""

    @abstractmethod
    def legal_moves(self, state: S, seat: int) -> list[M]:
        """Every legal move for ``seat`` (empty if it is not that seat's turn)."""

    @abstractmethod
    def apply(self, state: S, move: M, rng: random.Random) -> S:
        """The state after ``move``; never changes ``state`` itself."""

    @abstractmethod
    def outcome(self, state: S) -> Outcome | None:
        """The result, or None while the game goes on."""

    @abstractmethod
    def render(self, state: S, viewer: Viewer, players: Sequence[str] = ()) -> str:
        """A text diagram for a seat, PUBLIC or OMNISCIENT.

        ``players`` are the users' names by seat, for a diagram that says who did what where
        the side names alone would not (Entropy's players swap roles between rounds); empty
        when the caller has no users, and then the diagram names seats by their sides.
        """

    @abstractmethod
    def svg(self, state: S, viewer: Viewer) -> str:
        """The board as an SVG picture for the same viewer as :meth:`render`, under the same
        rule: nothing the viewer may not see is drawn. Coordinates shown, the last move
        highlighted (see :mod:`pbmserv.games.drawing`)."""

    @abstractmethod
    def dump(self, state: S) -> dict[str, Any]:
        """JSON-serialisable data with a ``version`` key."""

    @abstractmethod
    def load(self, data: Mapping[str, Any]) -> S:
        """Rebuild a state from ``dump`` output; raise StateError if it is not valid."""

    def public_move_text(self, state: S, move: M) -> str:
        """What everyone but the mover may learn of ``move`` played in ``state``.

        The canonical text (``format_move``) is kept for replay and shown only to the mover;
        this one goes into the public history and the other players' and observers' mail.
        Games with hidden information override it.
        """
        return self.format_move(state, move)

    def swap_move(self, state: S, seat: int) -> M:
        """The move by which ``seat`` takes the swap (games whose SPEC ``has_swap``); a graded
        MoveError when it may not, now or ever."""
        raise IllegalMoveError(f"{self.SPEC.title} has no swap option")

    def claimable_draw(self, state: S, seat: int) -> Outcome | None:
        """The draw ``seat`` may claim now without the opponent's consent (chess's threefold
        repetition and fifty-move rule), as the outcome the claim gives; None when there is
        none. A claim is no move: the server asks and ends the board with it."""
        return None

    def chance_outcome(self, state: S) -> dict[str, Any] | None:
        """What chance drew on the way to ``state`` (in ``new_game``, or in the ``apply`` that
        made it), as JSON kept with the move's record; None when nothing was drawn.

        Games that declare ``uses_chance`` override it. Only what every player may see: the
        record is part of the public history, and a secret draw stays in the state.
        """
        return None

    def vary_hidden(self, state: S, viewer: int, rng: random.Random) -> S:
        """A state that differs from ``state`` only in secrets ``viewer`` may not see.

        Every game that declares ``hidden_information`` implements it: the conformance kit
        checks that nothing ``viewer`` or the public is shown changes between the two.
        """
        raise NotImplementedError(f"{self.SPEC.name} does not vary hidden information")

    def determinize(self, state: S, viewer: int, rng: random.Random) -> S:
        """A full state ``viewer`` cannot tell from ``state``, drawn from what ``viewer`` may
        know and ``rng`` alone: the same for every state that looks the same to ``viewer``,
        given the same ``rng``. A computer player searches such states (determinised IS-MCTS)
        and never reads another seat's secrets.

        Games without hidden information have nothing to draw and return ``state``; every
        game that declares ``hidden_information`` overrides it.
        """
        if self.SPEC.hidden_information:
            raise NotImplementedError(f"{self.SPEC.name} does not determinize hidden information")
        return state

    def export(
        self,
        fmt: str,
        start: S,
        moves: Sequence[str],
        outcome: Outcome | None,
        headers: Mapping[str, str],
    ) -> str:
        """The game as a record in ``fmt`` (one of ``SPEC.record_formats``).

        ``start`` is the first position, ``moves`` the canonical texts in order, ``outcome`` the
        result (None while the game goes on) and ``headers`` facts the server knows (players by
        seat as ``Seat0``/``Seat1``, ``Board``, ``Date``, ``Site``).
        """
        raise ValueError(f"{self.SPEC.name} has no {fmt} record")

    def seat_name(self, state: S, seat: int) -> str:
        """The name of a seat's side in this position (a game with a swap may change it)."""
        return self.SPEC.seat_names[seat]

    def move_number(self, state: S) -> int:
        """How many moves have been made (shown in board mail)."""
        return int(getattr(state, "ply", 0))

    def last_move_text(self, state: S) -> str | None:
        """The last move as everyone may see it (public text), if the state keeps it."""
        return getattr(state, "last_move", None)

    def _check_version(self, data: Mapping[str, Any]) -> None:
        if data.get("version") != self.STATE_VERSION:
            raise StateError(
                f"{self.SPEC.name}: state version {data.get('version')!r} is not "
                f"{self.STATE_VERSION}"
            )


#: Any game, as the server holds one: it handles every game alike, whatever its state and move.
AnyGame: TypeAlias = Game[Any, Any]


def move_rng(seed: int, ply: int) -> random.Random:
    """The random generator for the move at ``ply`` (0-based count of moves applied so far).

    A fresh generator per move, derived from the game's stored seed, makes every replay exact
    without storing generator state; ``random.Random(seed)`` is the one given to ``new_game``.
    """
    return random.Random(f"{seed}:{ply}")
