"""The one projection (core/play/positions.py) leaks no secret, in the conformance kit's way
(``vary_hidden``), but through the server: for every game with hidden information, two boards
played through the command core that differ only in one seat's secrets look the same, at every
ply, to the public and to every other seat: the same PositionView, ETag, picture and diagram,
and the same records. Past positions are replayed from the board's start and its stored moves,
so the twin boards are played with moves whose public texts are equal (a secret point in the
same announced line) and that give the same public position.

Also: a finished board shows everything to everyone, every ply 0..plies can be projected and no
other, and the ETag tells positions apart.
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, replace
from typing import Any

import pytest
from sqlalchemy import update

from pbmserv.core.play import records
from pbmserv.core.play.positions import PositionView, project, replayed
from pbmserv.db.engine import transaction
from pbmserv.db.models import GameRow
from pbmserv.games import all_games
from pbmserv.games.base import OMNISCIENT, PUBLIC, AnyGame, Viewer, move_rng
from tests.core.client import Client
from tests.core.play.boards_played import challenge, loaded, move, play_random, resign, state_of

pytestmark = pytest.mark.db

HIDDEN = [game for game in all_games() if game.SPEC.hidden_information]
SEATS = (0, 1)
#: The longest twin game: long enough for reveals, passes and fives, short of a quick test.
PLIES = 40


def test_the_games_with_hidden_information_are_found() -> None:
    assert "hmdg" in {game.SPEC.name for game in HIDDEN}
    assert all(game.SPEC.players == len(SEATS) for game in HIDDEN)


# --- twin boards -----------------------------------------------------------------------------


def alike(game: AnyGame, a: Any, b: Any, varied: int) -> bool:
    """Whether the game shows ``a`` and ``b`` alike to the public and to every seat but
    ``varied`` (the game's own views, the contract the kit checks)."""
    if game.outcome(a) is not None or game.outcome(b) is not None:
        return False  # over, everything would be shown: the twins end here
    if game.to_move(a) != game.to_move(b) or game.last_move_text(a) != game.last_move_text(b):
        return False
    viewers: list[Viewer] = [PUBLIC, *(s for s in SEATS if s != varied)]
    return all(
        game.render(a, v) == game.render(b, v)
        and game.svg(a, v) == game.svg(b, v)
        and all(game.seat_name(a, s) == game.seat_name(b, s) for s in SEATS)
        for v in viewers
    )


def twin_move(
    game: AnyGame, a: Any, b: Any, varied: int, ply: int, seed: int, rng: random.Random
) -> tuple[int, str, str] | None:
    """A move for each twin: the same text for any seat but ``varied``; for ``varied`` a move
    with the same public text, mostly another one (its secret then differs). None when no
    pair keeps the twins alike."""
    seat = min(game.to_move(a).seats)
    ours = game.legal_moves(a, seat)
    rng.shuffle(ours)
    for mine in ours:
        text = game.format_move(a, mine)
        public = game.public_move_text(a, mine)
        after = game.apply(a, mine, move_rng(seed, ply))
        theirs = game.legal_moves(b, seat)
        rng.shuffle(theirs)
        if seat == varied:
            candidates = [m for m in theirs if game.public_move_text(b, m) == public]
            if rng.random() < 0.7:  # mostly another secret; at times the same, to be revealed
                candidates.sort(key=lambda m: game.format_move(b, m) == text)
        else:
            candidates = [m for m in theirs if game.format_move(b, m) == text]
        for other in candidates:
            if alike(game, after, game.apply(b, other, move_rng(seed, ply)), varied):
                return seat, text, game.format_move(b, other)
    return None


def twin_boards(players: Client, game: AnyGame, varied: int, seed: int) -> tuple[int, int]:
    """Two boards of ``game`` (same players, seed, start and day) played with the same public
    history; they differ only in the secrets of seat ``varied``."""
    first, second = challenge(players, game), challenge(players, game)
    with transaction(players.factory) as session:
        row = session.get(GameRow, first)
        assert row is not None
        same = {"seed": row.seed, "state": row.state, "created_at": row.created_at}
        session.execute(update(GameRow).where(GameRow.id == second).values(**same))
    rng = random.Random(f"twins:{game.SPEC.name}:{varied}:{seed}")
    for ply in range(PLIES):
        a, b = state_of(players, first), state_of(players, second)
        if not game.to_move(a).seats:
            break
        chosen = twin_move(game, a, b, varied, ply, same["seed"], rng)
        if chosen is None:
            break
        seat, text_a, text_b = chosen
        move(players, game, first, seat, text_a)
        move(players, game, second, seat, text_b)
    return first, second


def views(players: Client, number: int, seat: int | None) -> list[PositionView]:
    """The board's every position as ``seat`` (None: the public) sees it, as board 0."""
    with loaded(players, number) as (board, moves):
        state_at = replayed(board, moves)
        return [
            replace(project(board, moves, seat, ply, state_at), board=0)
            for ply in range(len(moves) + 1)
        ]


def records_of(players: Client, number: int, seat: int | None) -> tuple[str, str]:
    """The JSON and text records as ``seat`` sees them, as board 0."""
    with loaded(players, number) as (board, moves):
        data = records.json_record(board, moves, seat)
        text = records.text_record(board, moves, seat)
    data["board"] = 0
    return json.dumps(data, sort_keys=True), text.replace(f"board {number}\n", "board 0\n", 1)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("varied", SEATS)
@pytest.mark.parametrize("game", HIDDEN, ids=lambda g: g.SPEC.name)
def test_twins_differing_in_a_secret_look_the_same_to_others(
    players: Client, game: AnyGame, varied: int, seed: int
) -> None:
    first, second = twin_boards(players, game, varied, seed)
    with loaded(players, first) as (board, moves):
        plies = len(moves)
        texts = [row.text for row in moves]
    with loaded(players, second) as (_, moves):
        other_texts = [row.text for row in moves]
    assert plies >= 12, f"the twin game stopped early, after {plies} moves"
    # The twins really differ: in the varied seat's moves, and in what that seat sees.
    assert texts != other_texts
    own_a, own_b = views(players, first, varied), views(players, second, varied)
    assert own_a != own_b and own_a[-1].svg != own_b[-1].svg
    # The public and every other seat: byte for byte the same, at every ply.
    for seat in (None, *(s for s in SEATS if s != varied)):
        seen_a, seen_b = views(players, first, seat), views(players, second, seat)
        assert len(seen_a) == len(seen_b) == plies + 1
        for ply, (a, b) in enumerate(zip(seen_a, seen_b, strict=True)):
            where = f"{game.SPEC.name}, seat {varied} varied, seen by {seat}, ply {ply}"
            assert a.svg == b.svg, where
            assert a.diagram == b.diagram, where
            assert a.moves == b.moves and a.last_move == b.last_move, where
            assert a == b, where
            assert a.etag == b.etag and a.description == b.description, where
        assert records_of(players, first, seat) == records_of(players, second, seat)


def test_a_seat_sees_its_own_moves_and_the_public_only_public_texts(players: Client) -> None:
    game = next(g for g in HIDDEN if g.SPEC.name == "hmdg")
    number = challenge(players, game)
    play_random(players, game, number, random.Random("own"), 30)
    with loaded(players, number) as (board, moves):
        assert not board.finished
        assert any(row.public_text for row in moves)  # secrets were played
        state_at = replayed(board, moves)
        for ply in range(len(moves) + 1):
            public = project(board, moves, None, ply, state_at)
            assert public.viewer == "public"
            assert public.diagram == game.render(state_at(ply), PUBLIC, ["alice", "Bob"])
            assert public.svg == game.svg(state_at(ply), PUBLIC)
            assert [m.text for m in public.moves] == [r.public_text or r.text for r in moves]
            for seat in SEATS:
                view = project(board, moves, seat, ply, state_at)
                assert view.viewer == f"seat {seat}"
                assert view.svg == game.svg(state_at(ply), seat)
                assert [m.text for m in view.moves] == [
                    r.text if r.seat == seat else r.public_text or r.text for r in moves
                ]


# --- a finished board, the plies, the ETag --------------------------------------------------


@pytest.mark.parametrize("game", HIDDEN, ids=lambda g: g.SPEC.name)
def test_a_finished_board_shows_everything_to_everyone(players: Client, game: AnyGame) -> None:
    number = challenge(players, game)
    play_random(players, game, number, random.Random("finished"), 20)
    with loaded(players, number) as (board, moves):
        before = project(board, moves, None)
    resign(players, game, number, 1)
    with loaded(players, number) as (board, moves):
        assert board.finished
        state_at = replayed(board, moves)
        names = ["alice", "Bob"]
        for ply in range(len(moves) + 1):
            seen = [project(board, moves, seat, ply, state_at) for seat in (None, *SEATS)]
            assert all(view == seen[0] for view in seen)
            view = seen[0]
            assert view.viewer == "everyone" and view.finished and view.result
            assert view.diagram == game.render(state_at(ply), OMNISCIENT, names)
            assert view.svg == game.svg(state_at(ply), OMNISCIENT)
            assert [m.text for m in view.moves] == [row.text for row in moves]
        assert project(board, moves, None).etag != before.etag


@pytest.mark.parametrize("game", all_games(), ids=lambda g: g.SPEC.name)
def test_every_ply_and_only_those_can_be_projected(players: Client, game: AnyGame) -> None:
    number = challenge(players, game)
    play_random(players, game, number, random.Random("plies"), 12)
    with loaded(players, number) as (board, moves):
        plies = len(moves)
        state_at = replayed(board, moves)
        seen = []
        for ply in range(plies + 1):
            for seat in (None, *SEATS):
                view = project(board, moves, seat, ply, state_at)
                assert (view.ply, view.plies, view.is_latest) == (ply, plies, ply == plies)
                assert view.last_move == (view.moves[ply - 1].text if ply else None)
                assert view == project(board, moves, seat, ply)  # replayed alike, no cache
                assert view.etag == project(board, moves, seat, ply).etag  # stable
                seen.append(view)
        assert project(board, moves, None) == project(board, moves, None, plies)
        for wrong in (-1, plies + 1, plies + 1000, 10**12):
            with pytest.raises(ValueError):
                project(board, moves, None, wrong)
    # Views that differ in anything have different ETags; equal views, equal ones.
    by_content: dict[str, str] = {}
    for view in seen:
        content = json.dumps(asdict(view), sort_keys=True)
        assert by_content.setdefault(view.etag, content) == content
    tags = {(view.ply, view.viewer): view.etag for view in seen}
    assert len({tags[(ply, "public")] for ply in range(plies + 1)}) == plies + 1
