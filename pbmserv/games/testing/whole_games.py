"""Checks on whole games: replays, texts that read back, repeated moves, and everything at
once (:func:`check_conformance`)."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pbmserv.games.base import (
    AmbiguousMoveError,
    Game,
    IllegalMoveError,
    InvalidMoveError,
    MoveError,
)
from pbmserv.games.testing.kit import (
    DEFAULT_MAX_PLIES,
    Playout,
    fail,
    normal_json,
    option_sets,
)
from pbmserv.games.testing.playing import random_playout, replay
from pbmserv.games.testing.positions import (
    check_determinize,
    check_garbage,
    check_hidden,
    check_message,
    check_nothing_to_determinize,
    check_position,
    expect_illegal,
    legal_texts,
)
from pbmserv.games.testing.static import check_options, check_spec

# --- checks on a whole game ------------------------------------------------------------------


def check_replay(playout: Playout, dumps: Sequence[Mapping[str, Any]] | None = None) -> None:
    """Replaying the move texts from the start reproduces every state (``dumps``: the
    JSON-normal dumps of ``playout.states`` if already made)."""
    game = playout.game
    try:
        states = replay(game, playout.options, playout.seed, playout.record)
    except MoveError as exc:
        raise fail(f"{playout.where()}: replay failed: {exc}") from None
    if dumps is None:
        dumps = [normal_json(game.dump(s), playout.where()) for s in playout.states]
    for ply, (state, expected) in enumerate(zip(states, dumps, strict=True)):
        if normal_json(game.dump(state), playout.where(ply)) != expected:
            raise fail(f"{playout.where(ply)}: the replayed state differs from the played one")


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
                    raise fail(
                        f"{playout.where(ply)}: legal move {text!r} does not parse: {exc}"
                    ) from None
                if again != text:
                    raise fail(f"{playout.where(ply)}: {text!r} reads back as {again!r}")


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
            expect_illegal(game, final, seat, last.text, f"{playout.where()}: after the end")


def _check_repeat(game: Game, state: Any, seat: int, text: str, where: str) -> None:
    try:
        move = game.parse_move(state, seat, text)
    except (IllegalMoveError, AmbiguousMoveError) as exc:
        check_message(exc, text, where)
        return
    except InvalidMoveError as exc:
        raise fail(f"{where}: {text!r}, valid earlier, is now InvalidMoveError: {exc}") from None
    if game.format_move(state, move) not in legal_texts(game, state, seat):
        raise fail(f"{where}: {text!r} was accepted again but is not a legal move now")


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
    fresh = [normal_json(game.dump(game.new_game(options, random.Random(seed))), "") for _ in "ab"]
    playout = random_playout(game, options, seed, max_plies=max_plies)
    if fresh[0] != fresh[1]:
        raise fail(f"{playout.where()}: new_game with the same seed gave another state")
    if normal_json(game.dump(playout.start), "") != fresh[0]:
        raise fail(f"{playout.where()}: apply changed the state it was applied to (the start)")
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
            data = normal_json(game.dump(state), where)
        dumps.append(data)
        if bool(game.to_move(state).seats) == (game.outcome(state) is not None):
            raise fail(f"{where}: outcome and to_move disagree")
        if game.move_number(state) != ply:
            # The server counts the moves it applies; the board mail's number must be that
            # count, or #N, show BOARD#N and undo would disagree with it.
            raise fail(f"{where}: move_number is {game.move_number(state)}, not {ply}")
    for ply in sorted({0, last // 2, max(0, last - 1)}):
        if game.to_move(states[ply]).seats:
            check_garbage(game, states[ply], playout.where(ply))
    if game.SPEC.hidden_information:
        varied = [check_hidden(game, states[p], seed, playout.where(p)) for p in sorted(chosen)]
        if not any(varied):
            raise fail(f"{playout.where()}: vary_hidden never changed a state in the game")
        picks = sorted(chosen)[:: max(1, len(chosen) // max(1, determinize_positions))]
        drew = [check_determinize(game, states[p], seed, playout.where(p)) for p in picks]
        if not any(drew):
            raise fail(f"{playout.where()}: determinize never drew two different states")
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
