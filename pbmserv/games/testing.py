"""Conformance kit: generic checks that every registered game must pass.

The checks use only the contract in :mod:`pbmserv.games.base`, so a new game (with chance,
hidden information, several stages or simultaneous turns) gets all of them by being registered.
Randomness follows the server: ``random.Random(seed)`` for ``new_game`` and
:func:`~pbmserv.games.base.move_rng` ``(seed, ply)`` for the move at ``ply``, where ``ply``
counts the moves applied since the start. Every failure raises :class:`ConformanceError`
with a message naming the game, options, seed and ply.

Entry points: :func:`check_conformance` runs everything for one game; the ``check_*``
functions run one part; :func:`random_playout` and :func:`replay` are useful on their own.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from pbmserv.games import find_game
from pbmserv.games.base import (
    OMNISCIENT,
    PUBLIC,
    AmbiguousMoveError,
    Game,
    IllegalMoveError,
    InvalidMoveError,
    MoveError,
    OptionError,
    Termination,
    Viewer,
    move_rng,
)

#: The ends a game's rules may give (the others are the server's: resignation, forfeit...).
RULE_TERMINATIONS: Final = frozenset(
    {
        Termination.GOAL,
        Termination.NO_MOVES,
        Termination.SCORE,
        Termination.REPETITION,
        Termination.MOVE_LIMIT,
        Termination.AGREEMENT,
    }
)

__all__ = [
    "DEFAULT_MAX_PLIES",
    "GARBAGE_INPUTS",
    "ConformanceError",
    "Playout",
    "Step",
    "check_conformance",
    "check_determinize",
    "check_garbage",
    "check_hidden",
    "check_nothing_to_determinize",
    "check_options",
    "check_playout",
    "check_position",
    "check_replay",
    "check_repeated_moves",
    "check_spec",
    "move_rng",
    "option_sets",
    "random_playout",
    "replay",
    "viewers",
]

#: A random game that has not ended after this many moves fails the kit.
DEFAULT_MAX_PLIES = 3000

#: Texts that are a move in no game. Each must raise a MoveError quoting it.
GARBAGE_INPUTS: tuple[str, ...] = (
    "",
    "   ",
    "?!",
    "zz9",
    "zq9" * 100,  # 300 characters
    "\u2603 \u00e9\u00df \u4e2d\u6587 \U0001f3b2",  # snowman, accents, CJK, a die
    "move move move",
)


class ConformanceError(AssertionError):
    """A game broke the contract; the message says where."""


@dataclass(frozen=True)
class Step:
    """One move of a playout: ``seat`` turned ``before`` into ``after`` by ``text``."""

    ply: int
    seat: int
    move: Any
    text: str
    before: Any
    after: Any


@dataclass
class Playout:
    """A game from ``new_game`` to its last move, with the options and seed that made it."""

    game: Game
    options: dict[str, Any]
    seed: int
    start: Any
    steps: list[Step] = field(default_factory=list)

    @property
    def final(self) -> Any:
        """The last state reached."""
        return self.steps[-1].after if self.steps else self.start

    @property
    def states(self) -> list[Any]:
        """Every state, the start first."""
        return [self.start, *(step.after for step in self.steps)]

    @property
    def record(self) -> list[tuple[int, str]]:
        """``(seat, text)`` of every move, as the server's move table stores them."""
        return [(step.seat, step.text) for step in self.steps]

    def where(self, ply: int | None = None) -> str:
        """Context for failure messages."""
        at = "" if ply is None else f" at ply {ply}"
        return f"{self.game.SPEC.name} {self.options} seed {self.seed}{at}"


def viewers(game: Game) -> list[Viewer]:
    """Every kind of viewer: each seat, PUBLIC and OMNISCIENT."""
    return [*range(game.SPEC.players), PUBLIC, OMNISCIENT]


def option_sets(game: Game) -> list[dict[str, str]]:
    """Raw option dicts worth playing: the defaults, then each int option at its minimum and
    maximum and each choice of each choice option (the other options left at their defaults)."""
    sets: list[dict[str, str]] = [{}]
    for opt in game.SPEC.options:
        values: list[Any] = []
        if opt.choices:
            values = list(opt.choices)
        elif opt.type is int:
            values = [v for v in (opt.minimum, opt.maximum) if v is not None]
        for value in values:
            if value != opt.default:
                sets.append({opt.name: str(value)})
    return sets


def _fail(message: str) -> ConformanceError:
    return ConformanceError(message)


def _normal_json(data: Any, where: str) -> Any:
    """``data`` after a trip through JSON text (tuples become lists, and so on)."""
    try:
        return json.loads(json.dumps(data, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise _fail(f"{where}: dump() is not JSON-serialisable: {exc}") from None


def _mentions(message: str, text: str) -> bool:
    """Whether ``message`` quotes ``text`` (a long text may be quoted by its start only)."""
    probe = text.strip()
    if not probe:
        return True
    if len(probe) > 40:
        probe = probe[:20]
    return any(f"{quote}{probe}" in message for quote in ('"', "'", "\u201c", "`"))


# --- static facts --------------------------------------------------------------------------


def check_spec(game: Game) -> None:
    """The SPEC is consistent and the registry finds the game by its name and aliases."""
    spec = game.SPEC
    if not spec.name or spec.name != spec.name.lower() or not spec.name.isidentifier():
        raise _fail(f"{spec.name!r}: a game name is one lower-case word")
    if spec.players < 1:
        raise _fail(f"{spec.name}: no seat names")
    if not isinstance(game.STATE_VERSION, int):
        raise _fail(f"{spec.name}: STATE_VERSION must be an int")
    if spec.numbering not in ("plies", "chess") or (
        spec.numbering == "chess" and spec.players != 2
    ):
        raise _fail(f"{spec.name}: numbering is plies, or chess for a two-player game")
    for opt in spec.options:
        typed = (opt.default, *(opt.choices or ()))
        if opt.type not in (int, str) or any(type(v) is not opt.type for v in typed):
            raise _fail(f"{spec.name}: -{opt.name}'s default and choices must be {opt.type}")
        if opt.choices and opt.default not in opt.choices:
            raise _fail(f"{spec.name}: -{opt.name} default {opt.default!r} is not a choice")
        if opt.type is int and not (
            (opt.minimum is None or opt.minimum <= opt.default)
            and (opt.maximum is None or opt.default <= opt.maximum)
        ):
            raise _fail(f"{spec.name}: -{opt.name} default {opt.default} is out of range")
        if not opt.help:
            raise _fail(f"{spec.name}: -{opt.name} has no help line")
    for key in (spec.name, *spec.aliases):
        if find_game(key) is not game or find_game(key.upper()) is not game:
            raise _fail(f"{spec.name}: find_game({key!r}) does not return the game")


def check_options(game: Game) -> None:
    """Defaults fill in, bad names, bad values and wrong player counts raise OptionError."""
    spec = game.SPEC
    n = spec.players
    defaults = {opt.name: opt.default for opt in spec.options}
    got = game.validate_options({}, n)
    if got != defaults:
        raise _fail(f"{spec.name}: validate_options({{}}) gave {got}, not the defaults {defaults}")
    _expect_option_error(game, {"no-such-option": "1"}, n)
    _expect_option_error(game, {}, n + 1)
    for opt in spec.options:
        if opt.choices:
            for choice in opt.choices:
                written = str(choice).upper()
                value = game.validate_options({opt.name: written}, n)[opt.name]
                if value != choice:
                    raise _fail(f"{spec.name}: -{opt.name}={written} gave {value!r}")
            _expect_option_error(game, {opt.name: "no-such-choice"}, n)
        elif opt.type is int:
            for bound in (opt.minimum, opt.maximum):
                if bound is not None:
                    value = game.validate_options({opt.name: str(bound)}, n)[opt.name]
                    if value != bound:
                        raise _fail(f"{spec.name}: -{opt.name}={bound} gave {value!r}")
            if opt.minimum is not None:
                _expect_option_error(game, {opt.name: str(opt.minimum - 1)}, n)
            if opt.maximum is not None:
                _expect_option_error(game, {opt.name: str(opt.maximum + 1)}, n)
            _expect_option_error(game, {opt.name: "lots"}, n)


def _expect_option_error(game: Game, options: Mapping[str, str], n_players: int) -> None:
    try:
        game.validate_options(options, n_players)
    except OptionError as exc:
        if not str(exc) or "\n" in str(exc):
            raise _fail(f"{game.SPEC.name}: OptionError needs a one-line message") from None
        return
    raise _fail(f"{game.SPEC.name}: options {dict(options)} for {n_players} players were accepted")


# --- playing ---------------------------------------------------------------------------------


def random_playout(
    game: Game,
    options: Mapping[str, Any],
    seed: int,
    *,
    max_plies: int = DEFAULT_MAX_PLIES,
    require_end: bool = True,
) -> Playout:
    """Play random legal moves from ``new_game``: at each turn a random seat among those to
    move picks a random legal move. ``options`` are validated values (not raw strings)."""
    chooser = random.Random(f"playout:{seed}")
    state = game.new_game(options, random.Random(seed))
    playout = Playout(game, dict(options), seed, state)
    for ply in range(max_plies):
        seats = game.to_move(state).seats
        if not seats:
            return playout
        seat = chooser.choice(sorted(seats))
        moves = game.legal_moves(state, seat)
        if not moves:
            raise _fail(f"{playout.where(ply)}: seat {seat} is to move but has no legal move")
        move = chooser.choice(moves)
        text = game.format_move(state, move)
        after = game.apply(state, move, move_rng(seed, ply))
        playout.steps.append(Step(ply, seat, move, text, state, after))
        state = after
    if require_end and game.to_move(state).seats:
        raise _fail(f"{playout.where()}: no end after {max_plies} moves")
    return playout


def replay(
    game: Game, options: Mapping[str, Any], seed: int, record: Iterable[tuple[int, str]]
) -> list[Any]:
    """Replay ``(seat, text)`` moves from the start as the server does; every state, start
    first. Raises the game's MoveError if a text does not parse."""
    state = game.new_game(options, random.Random(seed))
    states = [state]
    for ply, (seat, text) in enumerate(record):
        state = game.apply(state, game.parse_move(state, seat, text), move_rng(seed, ply))
        states.append(state)
    return states


# --- checks on one position ------------------------------------------------------------------


def check_position(
    game: Game,
    state: Any,
    *,
    seed: int = 0,
    ply: int = 0,
    moves_per_position: int | None = None,
    where: str = "",
) -> dict[str, Any]:
    """Everything that must hold in any one position; returns the (JSON-normal) dump.

    Every legal move of each seat to move is applied with ``move_rng(seed, ply)``; up to
    ``moves_per_position`` of them (all if None or if there are no more) are also formatted,
    parsed back and compared by the state they give.
    """
    where = where or f"{game.SPEC.name} ply {ply}"
    players = game.SPEC.players
    turn = game.to_move(state)
    result = game.outcome(state)
    if not turn.seats <= set(range(players)):
        raise _fail(f"{where}: to_move names seats {set(turn.seats)}")
    if bool(turn.seats) == (result is not None):
        raise _fail(f"{where}: outcome {result} while seats {set(turn.seats)} are to move")
    if result is not None and (
        not result.winners <= set(range(players)) or not isinstance(result.reason, str)
    ):
        raise _fail(f"{where}: bad outcome {result}")
    if result is not None and result.termination not in RULE_TERMINATIONS:
        kinds = sorted(t.value for t in RULE_TERMINATIONS)
        raise _fail(f"{where}: a game's own end must be one of {kinds}")
    if not set(turn.prompts) <= set(turn.seats) or not isinstance(turn.stage, str):
        raise _fail(f"{where}: bad Turn {turn}")
    if type(game.move_number(state)) is not int or game.move_number(state) < 0:
        raise _fail(f"{where}: move_number must be an int >= 0")
    last = game.last_move_text(state)
    if last is not None and not isinstance(last, str):
        raise _fail(f"{where}: last_move_text must be a str or None")

    data = _check_storage(game, state, where)
    names = _player_names(players)
    for viewer in viewers(game):
        for picture in (game.render(state, viewer), game.render(state, viewer, names)):
            if not isinstance(picture, str) or not picture.strip():
                raise _fail(f"{where}: render(viewer={viewer!r}) gave {picture!r}")
        drawn = game.svg(state, viewer)
        if not isinstance(drawn, str) or not drawn.startswith("<svg") or "</svg>" not in drawn:
            raise _fail(f"{where}: svg(viewer={viewer!r}) is not an SVG picture")
        if game.SPEC.one_picture_for_all and drawn != game.svg(state, PUBLIC):
            raise _fail(f"{where}: one_picture_for_all, yet svg(viewer={viewer!r}) differs")

    rng = random.Random(f"check:{where}")
    sample_text: str | None = None
    for seat in range(players):
        moves = game.legal_moves(state, seat)
        if seat not in turn.seats:
            if moves:
                raise _fail(f"{where}: seat {seat} is not to move but has legal moves")
            continue
        if not moves:
            raise _fail(f"{where}: seat {seat} is to move but has no legal move")
        texts = [game.format_move(state, move) for move in moves]
        if len(set(texts)) != len(texts):
            raise _fail(f"{where}: two legal moves of seat {seat} format to the same text")
        shared = move_rng(seed, ply)  # any generator will do to see that a move applies
        for move, text in zip(moves, texts, strict=True):
            try:
                game.apply(state, move, shared)
            except Exception as exc:
                raise _fail(f"{where}: legal move {text!r} does not apply: {exc!r}") from exc
        picks = list(range(len(moves)))
        if moves_per_position is not None and len(picks) > moves_per_position:
            picks = rng.sample(picks, moves_per_position)
        for k in picks:
            _check_move(game, state, seat, moves[k], texts[k], seed, ply, where)
        sample_text = texts[picks[0]]

    if sample_text is not None:
        for seat in set(range(players)) - turn.seats:
            _expect_illegal(game, state, seat, sample_text, f"{where}: seat {seat} out of turn")
    if _normal_json(game.dump(state), where) != data:
        raise _fail(f"{where}: applying moves changed the state they were applied to")
    return data


def _check_storage(game: Game, state: Any, where: str) -> dict[str, Any]:
    raw = game.dump(state)
    if not isinstance(raw, dict) or raw.get("version") != game.STATE_VERSION:
        raise _fail(f"{where}: dump() must be a dict with version {game.STATE_VERSION}")
    data = _normal_json(raw, where)
    again = _normal_json(game.dump(game.load(data)), where)
    if again != data:
        raise _fail(f"{where}: dump(load(dump(state))) differs from dump(state)")
    return data


def _check_move(
    game: Game, state: Any, seat: int, move: Any, text: str, seed: int, ply: int, where: str
) -> None:
    if not isinstance(text, str) or not text.strip() or "\n" in text:
        raise _fail(f"{where}: format_move gave {text!r}")
    try:
        parsed = game.parse_move(state, seat, text)
    except MoveError as exc:
        raise _fail(f"{where}: legal move {text!r} of seat {seat} does not parse: {exc}") from None
    if game.format_move(state, parsed) != text:
        raise _fail(f"{where}: {text!r} parses to a move formatted differently")
    expected = game.dump(game.apply(state, move, move_rng(seed, ply)))
    if game.dump(game.apply(state, parsed, move_rng(seed, ply))) != expected:
        raise _fail(f"{where}: {text!r} parsed back gives another state than the listed move")


def _check_message(exc: MoveError, text: str, where: str) -> None:
    """A MoveError for the player: one line that quotes what they wrote."""
    message = str(exc)
    if not message or "\n" in message:
        raise _fail(f"{where}: the error for {text!r} is not one line: {message!r}")
    if not _mentions(message, text):
        raise _fail(f"{where}: the error for {text!r} does not quote it: {message}")


def _expect_illegal(game: Game, state: Any, seat: int, text: str, where: str) -> None:
    try:
        game.parse_move(state, seat, text)
    except IllegalMoveError as exc:
        _check_message(exc, text, where)
        return
    except MoveError as exc:
        raise _fail(
            f"{where}: {text!r} raised {type(exc).__name__}, not IllegalMoveError"
        ) from None
    raise _fail(f"{where}: {text!r} was accepted")


def _legal_texts(game: Game, state: Any, seat: int) -> set[str]:
    return {game.format_move(state, m) for m in game.legal_moves(state, seat)}


def check_garbage(game: Game, state: Any, where: str = "") -> None:
    """Each of :data:`GARBAGE_INPUTS` raises a one-line MoveError that quotes the input, for
    every seat to move in ``state``."""
    where = where or game.SPEC.name
    for seat in sorted(game.to_move(state).seats):
        for text in GARBAGE_INPUTS:
            try:
                move = game.parse_move(state, seat, text)
            except MoveError as exc:
                _check_message(exc, text, where)
                continue
            raise _fail(f"{where}: garbage {text!r} was accepted as {move!r}")


def _player_names(players: int) -> tuple[str, ...]:
    """Users' names for a board of ``players`` seats, as the server passes them to render."""
    return tuple(f"player{seat + 1}" for seat in range(players))


def _seen_by(game: Game, state: Any, viewer: Viewer) -> dict[str, Any]:
    """Everything ``viewer`` is shown of ``state`` through the contract."""
    turn = game.to_move(state)
    seen: dict[str, Any] = {
        "render": game.render(state, viewer),
        "named render": game.render(state, viewer, _player_names(game.SPEC.players)),
        "picture": game.svg(state, viewer),
        "seats": sorted(turn.seats),
        "stage": turn.stage,
        "over": game.outcome(state) is not None,
        "moves": game.move_number(state),
    }
    if isinstance(viewer, int):
        seen["prompt"] = turn.prompts.get(viewer)
        if viewer in turn.seats:
            moves = game.legal_moves(state, viewer)
            seen["legal"] = sorted(
                (game.format_move(state, m), game.public_move_text(state, m)) for m in moves
            )
            errors = []
            for text in GARBAGE_INPUTS:
                try:
                    game.parse_move(state, viewer, text)
                except MoveError as exc:
                    errors.append(str(exc))
            seen["errors"] = errors
    return seen


def check_hidden(game: Game, state: Any, seed: int = 0, where: str = "") -> bool:
    """No-leak check for a game with hidden information: for each seat and the public, a state
    that differs only in secrets that viewer may not see (``vary_hidden``) must look the same
    to it: diagram, turn, prompt, legal moves and their public texts, error messages. Returns
    whether any variation changed the state at all (a kit run must see one, else the check
    proved nothing)."""
    where = where or game.SPEC.name
    changed = False
    for viewer in [*range(game.SPEC.players), PUBLIC]:
        rng = random.Random(f"hidden:{seed}:{where}:{viewer}")
        for _ in range(3):
            varied = game.vary_hidden(state, viewer, rng)
            changed = changed or game.dump(varied) != game.dump(state)
            _expect_seen_alike(game, viewer, state, varied, "with secrets it may not see", where)
    return changed


def _expect_seen_alike(
    game: Game, viewer: Viewer, state: Any, other: Any, how: str, where: str
) -> None:
    """``viewer`` is shown the same of ``other`` as of ``state`` (``how``: how ``other`` came
    about, for the message)."""
    before, after = _seen_by(game, state, viewer), _seen_by(game, other, viewer)
    for key in before:
        if before[key] != after[key]:
            raise _fail(
                f"{where}: what viewer {viewer!r} sees ({key}) changes {how}:"
                f"\n{before[key]}\n---\n{after[key]}"
            )


def _determinized(game: Game, state: Any, seat: int, rng: random.Random, where: str) -> Any:
    try:
        return game.determinize(state, seat, rng)
    except NotImplementedError:
        raise _fail(f"{where}: a game with hidden information must determinize") from None


def _dump_text(game: Game, state: Any, where: str) -> str:
    return json.dumps(_normal_json(game.dump(state), where), sort_keys=True)


def check_determinize(game: Game, state: Any, seed: int = 0, where: str = "") -> bool:
    """For each seat, ``determinize`` (a whole state drawn for a computer player) draws from
    what the seat sees and its generator alone: given the same generator, the same state
    (by dump) for ``state`` and for states that differ from it only in secrets the seat may
    not see (``vary_hidden``). The drawn state looks the same to the seat (as in
    :func:`check_hidden`), loads back and takes every legal move. Returns whether two
    generators drew different states (a kit run must see that, else determinize might hand
    back a fixed state and the check proved little)."""
    where = where or game.SPEC.name
    differed = False
    for seat in range(game.SPEC.players):
        draws = [
            _determinized(game, state, seat, random.Random(f"determinize:{seed}:{k}"), where)
            for k in range(4)
        ]
        drawn = draws[0]
        data = _check_storage(game, drawn, where)
        vary = random.Random(f"determinize-vary:{seed}:{where}:{seat}")
        for _ in range(3):
            other = game.vary_hidden(state, seat, vary)
            again = _determinized(game, other, seat, random.Random(f"determinize:{seed}:0"), where)
            if _normal_json(game.dump(again), where) != data:
                raise _fail(
                    f"{where}: determinize for seat {seat} depends on secrets it may not see: "
                    "two states that look the same to it drew different states"
                )
        _expect_seen_alike(game, seat, state, drawn, "in the state determinize drew", where)
        for mover in sorted(game.to_move(drawn).seats):
            for move in game.legal_moves(drawn, mover):
                try:
                    game.apply(drawn, move, random.Random(seed))
                except Exception as exc:
                    text = game.format_move(drawn, move)
                    raise _fail(
                        f"{where}: legal move {text!r} does not apply in the state determinize "
                        f"drew for seat {seat}: {exc!r}"
                    ) from exc
        differed = differed or len({_dump_text(game, d, where) for d in draws}) > 1
    return differed


def check_nothing_to_determinize(game: Game, state: Any, where: str = "") -> None:
    """A game without hidden information has nothing to draw: ``determinize`` gives the state
    itself."""
    where = where or game.SPEC.name
    for seat in range(game.SPEC.players):
        if game.determinize(state, seat, random.Random(0)) is not state:
            raise _fail(
                f"{where}: a game without hidden information must determinize to the state itself"
            )


# --- checks on a whole game ------------------------------------------------------------------


def check_replay(playout: Playout, dumps: Sequence[Mapping[str, Any]] | None = None) -> None:
    """Replaying the move texts from the start reproduces every state (``dumps``: the
    JSON-normal dumps of ``playout.states`` if already made)."""
    game = playout.game
    try:
        states = replay(game, playout.options, playout.seed, playout.record)
    except MoveError as exc:
        raise _fail(f"{playout.where()}: replay failed: {exc}") from None
    if dumps is None:
        dumps = [_normal_json(game.dump(s), playout.where()) for s in playout.states]
    for ply, (state, expected) in enumerate(zip(states, dumps, strict=True)):
        if _normal_json(game.dump(state), playout.where(ply)) != expected:
            raise _fail(f"{playout.where(ply)}: the replayed state differs from the played one")


def check_texts_read_back(playout: Playout, per_position: int = 24) -> None:
    """In every position of the game (not only the sampled ones), the text of each legal move
    (up to ``per_position`` of them, chosen at random) parses back to a move written the same
    way: a notation clash that needs a rare position (two bishops on one file) shows up here."""
    game = playout.game
    rng = random.Random(f"texts:{playout.seed}")
    for ply, state in enumerate(playout.states):
        for seat in sorted(game.to_move(state).seats):
            moves = game.legal_moves(state, seat)
            for move in rng.sample(moves, min(per_position, len(moves))):
                text = game.format_move(state, move)
                try:
                    again = game.format_move(state, game.parse_move(state, seat, text))
                except MoveError as exc:
                    raise _fail(
                        f"{playout.where(ply)}: legal move {text!r} does not parse: {exc}"
                    ) from None
                if again != text:
                    raise _fail(f"{playout.where(ply)}: {text!r} reads back as {again!r}")


def check_repeated_moves(playout: Playout, tries_per_position: int = 2) -> None:
    """A text played earlier, sent again later by the same seat in the same stage, is refused
    with IllegalMoveError or AmbiguousMoveError, unless the game lists it as legal again."""
    game = playout.game
    rng = random.Random(f"repeat:{playout.seed}")
    earlier: dict[tuple[int, str], list[str]] = {}
    states = playout.states
    for ply, state in enumerate(states):
        turn = game.to_move(state)
        for seat in sorted(turn.seats):
            olds = earlier.get((seat, turn.stage), [])
            for text in rng.sample(olds, min(tries_per_position, len(olds))):
                _check_repeat(game, state, seat, text, playout.where(ply))
        if ply < len(playout.steps):
            step = playout.steps[ply]
            earlier.setdefault((step.seat, turn.stage), []).append(step.text)
    final = states[-1]
    if not game.to_move(final).seats and playout.steps:
        last = playout.steps[-1]
        for seat in range(game.SPEC.players):
            _expect_illegal(game, final, seat, last.text, f"{playout.where()}: after the end")


def _check_repeat(game: Game, state: Any, seat: int, text: str, where: str) -> None:
    try:
        move = game.parse_move(state, seat, text)
    except (IllegalMoveError, AmbiguousMoveError) as exc:
        _check_message(exc, text, where)
        return
    except InvalidMoveError as exc:
        raise _fail(f"{where}: {text!r}, valid earlier, is now InvalidMoveError: {exc}") from None
    if game.format_move(state, move) not in _legal_texts(game, state, seat):
        raise _fail(f"{where}: {text!r} was accepted again but is not a legal move now")


def check_playout(
    game: Game,
    options: Mapping[str, Any],
    seed: int,
    *,
    max_plies: int = DEFAULT_MAX_PLIES,
    positions: int = 150,
    moves_per_position: int | None = 24,
    determinize_positions: int = 10,
) -> Playout:
    """Play one random game and check it: about ``positions`` positions spread over the game
    (always the start and the end) get :func:`check_position`; the start, middle and last
    position before the end get :func:`check_garbage`; a game with hidden information gets
    :func:`check_hidden` at those positions and :func:`check_determinize` at about
    ``determinize_positions`` of them (one without, :func:`check_nothing_to_determinize` at the
    start, middle and end); then replay, every position's move texts
    (:func:`check_texts_read_back`) and repeated moves."""
    fresh = [_normal_json(game.dump(game.new_game(options, random.Random(seed))), "") for _ in "ab"]
    playout = random_playout(game, options, seed, max_plies=max_plies)
    if fresh[0] != fresh[1]:
        raise _fail(f"{playout.where()}: new_game with the same seed gave another state")
    if _normal_json(game.dump(playout.start), "") != fresh[0]:
        raise _fail(f"{playout.where()}: apply changed the state it was applied to (the start)")
    states = playout.states
    last = len(states) - 1
    stride = max(1, last // max(1, positions - 1))
    chosen = {0, last, *range(0, last, stride)}
    dumps = []
    for ply, state in enumerate(states):
        where = playout.where(ply)
        if ply in chosen:
            data = check_position(
                game, state, seed=seed, ply=ply, moves_per_position=moves_per_position, where=where
            )
        else:
            data = _normal_json(game.dump(state), where)
        dumps.append(data)
        if bool(game.to_move(state).seats) == (game.outcome(state) is not None):
            raise _fail(f"{where}: outcome and to_move disagree")
        if game.move_number(state) != ply:
            # The server counts the moves it applies; the board mail's number must be that
            # count, or #N, show BOARD#N and undo would disagree with it.
            raise _fail(f"{where}: move_number is {game.move_number(state)}, not {ply}")
    for ply in sorted({0, last // 2, max(0, last - 1)}):
        if game.to_move(states[ply]).seats:
            check_garbage(game, states[ply], playout.where(ply))
    if game.SPEC.hidden_information:
        varied = [check_hidden(game, states[p], seed, playout.where(p)) for p in sorted(chosen)]
        if not any(varied):
            raise _fail(f"{playout.where()}: vary_hidden never changed a state in the game")
        picks = sorted(chosen)[:: max(1, len(chosen) // max(1, determinize_positions))]
        drew = [check_determinize(game, states[p], seed, playout.where(p)) for p in picks]
        if not any(drew):
            raise _fail(f"{playout.where()}: determinize never drew two different states")
    else:
        for ply in sorted({0, last // 2, last}):
            check_nothing_to_determinize(game, states[ply], playout.where(ply))
    check_replay(playout, dumps)
    check_texts_read_back(playout)
    check_repeated_moves(playout)
    return playout


def check_conformance(
    game: Game,
    seeds: Iterable[int] = range(3),
    *,
    max_plies: int = DEFAULT_MAX_PLIES,
    positions: int = 150,
    moves_per_position: int | None = 24,
) -> None:
    """The whole kit for one game: SPEC, options, and a checked random playout per seed for
    every entry of :func:`option_sets`."""
    check_spec(game)
    check_options(game)
    players = game.SPEC.players
    for raw in option_sets(game):
        options = game.validate_options(raw, players)
        for seed in seeds:
            check_playout(
                game,
                options,
                seed,
                max_plies=max_plies,
                positions=positions,
                moves_per_position=moves_per_position,
            )
