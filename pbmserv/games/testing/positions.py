"""Checks on one position: storage, legal and illegal moves, garbage input, the views of each
seat (no secret of another seat in them) and determinizing hidden information."""

from __future__ import annotations

import json
import random
from typing import Any

from pbmserv.games.base import (
    PUBLIC,
    Game,
    IllegalMoveError,
    MoveError,
    Viewer,
    move_rng,
)
from pbmserv.games.testing.kit import (
    GARBAGE_INPUTS,
    RULE_TERMINATIONS,
    fail,
    mentions,
    normal_json,
    viewers,
)

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
        raise fail(f"{where}: to_move names seats {set(turn.seats)}")
    if bool(turn.seats) == (result is not None):
        raise fail(f"{where}: outcome {result} while seats {set(turn.seats)} are to move")
    if result is not None and (
        not result.winners <= set(range(players)) or not isinstance(result.reason, str)
    ):
        raise fail(f"{where}: bad outcome {result}")
    if result is not None and result.termination not in RULE_TERMINATIONS:
        kinds = sorted(t.value for t in RULE_TERMINATIONS)
        raise fail(f"{where}: a game's own end must be one of {kinds}")
    if not set(turn.prompts) <= set(turn.seats) or not isinstance(turn.stage, str):
        raise fail(f"{where}: bad Turn {turn}")
    if type(game.move_number(state)) is not int or game.move_number(state) < 0:
        raise fail(f"{where}: move_number must be an int >= 0")
    last = game.last_move_text(state)
    if last is not None and not isinstance(last, str):
        raise fail(f"{where}: last_move_text must be a str or None")

    data = _check_storage(game, state, where)
    names = _player_names(players)
    for viewer in viewers(game):
        for picture in (game.render(state, viewer), game.render(state, viewer, names)):
            if not isinstance(picture, str) or not picture.strip():
                raise fail(f"{where}: render(viewer={viewer!r}) gave {picture!r}")
        drawn = game.svg(state, viewer)
        if not isinstance(drawn, str) or not drawn.startswith("<svg") or "</svg>" not in drawn:
            raise fail(f"{where}: svg(viewer={viewer!r}) is not an SVG picture")
        if game.SPEC.one_picture_for_all and drawn != game.svg(state, PUBLIC):
            raise fail(f"{where}: one_picture_for_all, yet svg(viewer={viewer!r}) differs")

    rng = random.Random(f"check:{where}")
    sample_text: str | None = None
    for seat in range(players):
        moves = game.legal_moves(state, seat)
        if seat not in turn.seats:
            if moves:
                raise fail(f"{where}: seat {seat} is not to move but has legal moves")
            continue
        if not moves:
            raise fail(f"{where}: seat {seat} is to move but has no legal move")
        texts = [game.format_move(state, move) for move in moves]
        if len(set(texts)) != len(texts):
            raise fail(f"{where}: two legal moves of seat {seat} format to the same text")
        shared = move_rng(seed, ply)  # any generator will do to see that a move applies
        for move, text in zip(moves, texts, strict=True):
            try:
                game.apply(state, move, shared)
            except Exception as exc:
                raise fail(f"{where}: legal move {text!r} does not apply: {exc!r}") from exc
        picks = list(range(len(moves)))
        if moves_per_position is not None and len(picks) > moves_per_position:
            picks = rng.sample(picks, moves_per_position)
        for k in picks:
            _check_move(game, state, seat, moves[k], texts[k], seed, ply, where)
        sample_text = texts[picks[0]]

    if sample_text is not None:
        for seat in set(range(players)) - turn.seats:
            expect_illegal(game, state, seat, sample_text, f"{where}: seat {seat} out of turn")
    if normal_json(game.dump(state), where) != data:
        raise fail(f"{where}: applying moves changed the state they were applied to")
    return data


def _check_storage(game: Game, state: Any, where: str) -> dict[str, Any]:
    raw = game.dump(state)
    if not isinstance(raw, dict) or raw.get("version") != game.STATE_VERSION:
        raise fail(f"{where}: dump() must be a dict with version {game.STATE_VERSION}")
    data = normal_json(raw, where)
    again = normal_json(game.dump(game.load(data)), where)
    if again != data:
        raise fail(f"{where}: dump(load(dump(state))) differs from dump(state)")
    return data


def _check_move(
    game: Game, state: Any, seat: int, move: Any, text: str, seed: int, ply: int, where: str
) -> None:
    if not isinstance(text, str) or not text.strip() or "\n" in text:
        raise fail(f"{where}: format_move gave {text!r}")
    try:
        parsed = game.parse_move(state, seat, text)
    except MoveError as exc:
        raise fail(f"{where}: legal move {text!r} of seat {seat} does not parse: {exc}") from None
    if game.format_move(state, parsed) != text:
        raise fail(f"{where}: {text!r} parses to a move formatted differently")
    expected = game.dump(game.apply(state, move, move_rng(seed, ply)))
    if game.dump(game.apply(state, parsed, move_rng(seed, ply))) != expected:
        raise fail(f"{where}: {text!r} parsed back gives another state than the listed move")


def check_message(exc: MoveError, text: str, where: str) -> None:
    """A MoveError for the player: one line that quotes what they wrote."""
    message = str(exc)
    if not message or "\n" in message:
        raise fail(f"{where}: the error for {text!r} is not one line: {message!r}")
    if not mentions(message, text):
        raise fail(f"{where}: the error for {text!r} does not quote it: {message}")


def expect_illegal(game: Game, state: Any, seat: int, text: str, where: str) -> None:
    try:
        game.parse_move(state, seat, text)
    except IllegalMoveError as exc:
        check_message(exc, text, where)
        return
    except MoveError as exc:
        raise fail(f"{where}: {text!r} raised {type(exc).__name__}, not IllegalMoveError") from None
    raise fail(f"{where}: {text!r} was accepted")


def legal_texts(game: Game, state: Any, seat: int) -> set[str]:
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
                check_message(exc, text, where)
                continue
            raise fail(f"{where}: garbage {text!r} was accepted as {move!r}")


def _player_names(players: int) -> tuple[str, ...]:
    """Users' names for a board of ``players`` seats, as the server passes them to render."""
    return tuple(f"player{seat + 1}" for seat in range(players))


def seen_by(game: Game, state: Any, viewer: Viewer) -> dict[str, Any]:
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
    before, after = seen_by(game, state, viewer), seen_by(game, other, viewer)
    for key in before:
        if before[key] != after[key]:
            raise fail(
                f"{where}: what viewer {viewer!r} sees ({key}) changes {how}:"
                f"\n{before[key]}\n---\n{after[key]}"
            )


def _determinized(game: Game, state: Any, seat: int, rng: random.Random, where: str) -> Any:
    try:
        return game.determinize(state, seat, rng)
    except NotImplementedError:
        raise fail(f"{where}: a game with hidden information must determinize") from None


def _dump_text(game: Game, state: Any, where: str) -> str:
    return json.dumps(normal_json(game.dump(state), where), sort_keys=True)


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
            if normal_json(game.dump(again), where) != data:
                raise fail(
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
                    raise fail(
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
            raise fail(
                f"{where}: a game without hidden information must determinize to the state itself"
            )
