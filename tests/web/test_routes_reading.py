"""How the site reads: its engine writes nothing and waits for no writer (a page is served while
the processing of moves holds its write transaction and the board's row lock), and the states
of past positions are kept, so that stepping through a game replays a move a step, the same
states as the game service's own replay."""

from __future__ import annotations

import random
import threading
import time

import pytest
from sqlalchemy import Engine, select, text
from sqlalchemy.exc import DBAPIError
from starlette.testclient import TestClient

from pbmserv.core.play.game_service import replay_moves
from pbmserv.db.engine import session_factory, transaction
from pbmserv.db.models import GameRow
from pbmserv.web import boards
from pbmserv.web.database import read_engine, read_sessions, reading
from pbmserv.web.replay import States
from tests.core.client import Client
from tests.core.play.boards_played import challenge, loaded, move, play_random
from tests.web.pages_fixtures import (  # noqa: F401 (fixtures)
    CHAMELEON,
    chameleon_board,
    people_fixture,
    site_settings_fixture,
    web_fixture,
)

pytestmark = pytest.mark.db


def test_the_site_s_engine_writes_nothing(people: Client, db_url: str) -> None:
    board = chameleon_board(people)
    engine = read_engine(db_url)
    try:
        with reading(read_sessions(engine)) as session:
            assert session.scalar(select(GameRow.ply).where(GameRow.id == board)) == 5
            with pytest.raises(DBAPIError):
                session.execute(text("UPDATE games SET ply = ply + 1"))
    finally:
        engine.dispose()
    assert people.query(select(GameRow.ply).where(GameRow.id == board))[0][0] == 5


def test_a_page_is_served_while_a_writer_holds_the_board(
    people: Client, web: TestClient, engine: Engine
) -> None:
    """The writer (as a processing batch: BEGIN IMMEDIATE on SQLite, FOR NO KEY UPDATE of the
    board on PostgreSQL) keeps its transaction open while the site serves the board."""
    board = chameleon_board(people)
    holding, done = threading.Event(), threading.Event()

    def writer() -> None:
        with transaction(session_factory(engine)) as session:
            query = select(GameRow).where(GameRow.id == board)
            row = session.scalars(query.with_for_update(key_share=True)).one()
            row.ply = row.ply  # a write under way
            session.flush()
            holding.set()
            done.wait(30)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        assert holding.wait(30)
        began = time.monotonic()
        for path in (f"/g/{board}", f"/g/{board}/2", f"/g/{board}.json", "/games", "/"):
            assert web.get(path).status_code == 200, path
        assert time.monotonic() - began < 5  # no wait for the writer's lock
    finally:
        done.set()
        thread.join()


def test_stepping_through_a_game_replays_a_move_a_step(people: Client, web: TestClient) -> None:
    assert CHAMELEON is not None
    board = challenge(people, CHAMELEON, "-size=7")
    plies = len(play_random(people, CHAMELEON, board, random.Random(7), 30))
    states = web.app.state.site.states  # type: ignore[attr-defined]
    for ply in range(plies + 1):
        assert web.get(f"/g/{board}/{ply}").status_code == 200
    assert states.replayed <= plies  # not 1 + 2 + ... + plies
    before = states.replayed
    for ply in range(plies, -1, -1):  # and back: every position kept
        assert web.get(f"/g/{board}/{ply}.svg").status_code == 200
    assert states.replayed == before


def test_kept_states_are_the_game_service_s_replay(people: Client, engine: Engine) -> None:
    """In any order, from any kept state: the state at each ply is the one replayed from the
    start (a game with chance, Entropy, whose draws follow each move's own generator)."""
    from pbmserv.games import find_game

    entropy = find_game("entropy")
    assert entropy is not None
    number = challenge(people, entropy, "-size=5")
    play_random(people, entropy, number, random.Random(11), 24)
    states = States(capacity=6)  # small: states are dropped as it goes
    with loaded(people, number) as (board, moves):
        state_at = states.state_at(board, moves)
        order = list(range(len(moves) + 1))
        random.Random(3).shuffle(order)
        for ply in order + order[::-1]:
            expected = replay_moves(board, [m.text for m in moves[:ply]])
            assert entropy.dump(state_at(ply)) == entropy.dump(expected), ply
        assert len(states) <= 6


def test_a_changed_board_is_not_read_from_kept_states(people: Client) -> None:
    """States are kept under the row's version: once the board changes (a move, a take-back),
    its positions are replayed afresh."""
    assert CHAMELEON is not None
    board = chameleon_board(people, ("a1x", "e5o", "b2x"))
    states = States()
    with loaded(people, board) as (loaded_board, moves):
        states.state_at(loaded_board, moves)(2)
        states.state_at(loaded_board, moves)(2)
    assert states.replayed == 2
    move(people, CHAMELEON, board, 1, "d4o")
    with loaded(people, board) as (loaded_board, moves):
        states.state_at(loaded_board, moves)(2)
    assert states.replayed == 4


def test_a_page_asked_again_is_not_projected_again(
    people: Client, web: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A view is kept by the board's stamp: asked again (a 304, the same page, its picture),
    the board is not even loaded; a move makes a new stamp. (A clock that starts, the row
    untouched, does too: test_pages.py's clocks.)"""
    board = chameleon_board(people)
    etag = web.get(f"/g/{board}/2").headers["etag"]
    web.get(f"/g/{board}")

    def no_loading(*args: object) -> None:
        raise AssertionError("the board was loaded again")

    with monkeypatch.context() as patched:
        patched.setattr(boards, "board_of", no_loading)
        assert web.get(f"/g/{board}/2", headers={"If-None-Match": etag}).status_code == 304
        assert web.get(f"/g/{board}/2").headers["etag"] == etag
        assert web.get(f"/g/{board}").status_code == 200
        assert web.get(f"/g/{board}/2.svg").status_code == 200
    assert people.run(f"chameleon move {board} Bob hunter22 e1o", sender="bob@example.org").ok
    assert web.get(f"/g/{board}/2", headers={"If-None-Match": etag}).status_code == 200
