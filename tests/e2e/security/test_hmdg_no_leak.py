"""Hidden Move Double Gomoku through the real server: no mail gives away a hidden piece.

Random games are played by mail (real SMTP in, real relay out), with random legal moves and
answers picked from the true state in the database. After every command, every mail the server
sent is checked against the state it left: a player's mail, subject and body, may name or draw
only points the player knows (their own pieces, their own pending point, revealed pieces), and
an observer's only revealed ones. The other side's hidden points appear neither as names in the
text nor as pieces in the diagram, until the game is over.
"""

from __future__ import annotations

import random
import re

import pytest
from sqlalchemy import select

from pbmserv.db.models import GameRow
from pbmserv.games.hmdg import GAME, HOW_TO_MOVE, HmdgState, point_name, points_of
from tests.support import Received, Sink, make_mail, settle, smtp_send

pytestmark = pytest.mark.db

USERS = {  # user id: (address, password)
    "ann": ("ann@example.org", "ann-pass1"),
    "ben": ("ben@example.org", "ben-pass2"),
    "obs": ("obs@example.org", "obs-pass3"),
}
GAMES = 3
PLIES = 20  # per game: about ten turns, with secrets on both sides
ROW_OF_GRID = re.compile(r"  ([A-HJ])  ((?:\S ){8}\S)  \1")
POINT_NAME = re.compile(r"\b[A-HJ][1-9]\b", re.IGNORECASE)


def send(server, engine, sink: Sink, user: str, subject: str) -> list[Received]:  # type: ignore[no-untyped-def]
    before = len(sink.messages)
    assert smtp_send(server.port, make_mail(USERS[user][0], subject))[0] == 250
    settle(engine)
    return sink.messages[before:]


def stored_state(engine, board: int) -> HmdgState:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        return GAME.load(conn.scalar(select(GameRow.state).where(GameRow.id == board)))


def known_to(state: HmdgState, seat: int | None) -> int:
    """The points where ``seat`` (None: an observer) may know of a piece or a pending point."""
    known = state.revealed
    side = None if seat is None else state.side_of(seat)
    if side is not None:
        known |= state.pieces[side]
        if state.pending is not None and state.mover == side:
            known |= 1 << state.pending.point
    return known


def hidden_from(state: HmdgState, seat: int | None) -> set[str]:
    """Points of pieces (and a pending point) that ``seat`` may not know of."""
    secret = state.hidden(0) | state.hidden(1)
    if state.pending is not None:
        secret |= 1 << state.pending.point
    return {point_name(p) for p in points_of(secret & ~known_to(state, seat))}


def check_mail(message: Received, state: HmdgState, seat: int | None) -> None:
    secrets = hidden_from(state, seat)
    # The move syntax example names a fixed point (C5), whatever the position.
    text = f"{message.subject}\n{message.body}".replace(HOW_TO_MOVE, "")
    named = {name.upper() for name in POINT_NAME.findall(text)}
    assert not named & secrets, (message.to, named & secrets, message.body)
    for line in message.body.splitlines():
        match = ROW_OF_GRID.fullmatch(line.rstrip())
        if match is None:
            continue
        for col, char in enumerate(match.group(2).split(" ")):
            if char != ".":
                point = f"{match.group(1)}{col + 1}"
                assert point not in secrets, (message.to, point, message.body)


def command_for(state: HmdgState, board: int, user: str, text: str) -> str:
    words = f"{board} {user} {USERS[user][1]}"
    if text.startswith("reveal "):
        points = text.removeprefix("reveal ")
        return f"hmdg reveal {words} {'' if points == 'none' else points}".rstrip()
    return f"hmdg move {words} {text}"


def look_around(  # type: ignore[no-untyped-def]
    server, engine, sink: Sink, board: int, players: list[str], state: HmdgState
) -> list[Received]:
    """The commands that show a board, chat about it or try a move on it, by both players and
    the observer: their answers must keep the same secrets as the board mail."""
    mails: list[Received] = []
    for user in players:
        login = f"{user} {USERS[user][1]}"
        mails += send(server, engine, sink, user, f"hmdg showas {login} {board}")
        mails += send(server, engine, sink, user, f"hmdg showas {login} all")
        mails += send(server, engine, sink, user, f"hmdg chat {board} {login} still here")
    (seat,) = GAME.to_move(state).seats
    mover = players[seat]
    # A move on a point the mover cannot know is taken may name it: that is no leak, so the
    # trial move is one the name check can tell apart.
    secrets = hidden_from(state, seat)
    texts = [GAME.format_move(state, m) for m in GAME.legal_moves(state, seat)]
    trial = next((t for t in texts if not {n.upper() for n in POINT_NAME.findall(t)} & secrets), "")
    if trial and not trial.startswith("reveal"):
        login = f"{board} {mover} {USERS[mover][1]}"
        mails += send(server, engine, sink, mover, f"hmdg preview {login} {trial}")
        mails += send(server, engine, sink, mover, f"hmdg submit {login} {trial}")
    for line in (f"hmdg show {board}", f"hmdg show {board}#{state.ply // 2}", "all show ann",
                 f"hmdg history {board}", "hmdg games all", f"hmdg board {board}"):  # fmt: skip
        mails += send(server, engine, sink, "obs", line)
    return mails


def test_no_mail_tells_a_player_the_opponent_secrets(server, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    for user, (_, password) in USERS.items():
        send(server, engine, sink, user, f"signup {user} {password}")
    checked = secrets_seen = 0
    for board in range(1, GAMES + 1):
        rng = random.Random(board)
        players = ["ann", "ben"] if board % 2 else ["ben", "ann"]
        send(server, engine, sink, players[0], f"hmdg challenge {' '.join(players)}")
        send(server, engine, sink, "obs", f"hmdg observe {board} obs {USERS['obs'][1]}")
        for _ in range(PLIES):
            state = stored_state(engine, board)
            (seat,) = GAME.to_move(state).seats
            text = GAME.format_move(state, rng.choice(GAME.legal_moves(state, seat)))
            mails = send(
                server, engine, sink, players[seat], command_for(state, board, players[seat], text)
            )
            after = stored_state(engine, board)
            assert after.ply == state.ply + 1, [m.body for m in mails]
            if GAME.outcome(after) is not None:
                break  # everything is shown at the end
            viewers = {USERS[players[0]][0]: 0, USERS[players[1]][0]: 1, USERS["obs"][0]: None}
            if after.ply % 4 == 0:  # now and then, every way of looking at the board too
                mails += look_around(server, engine, sink, board, players, after)
            for message in mails:
                check_mail(message, after, viewers[message.to])
                checked += 1
            secrets_seen += bool(hidden_from(after, 0) and hidden_from(after, 1))
    assert checked > GAMES * PLIES * 2  # every move mails the mover and the others
    assert secrets_seen > GAMES * 5  # the check had secrets to keep, on both sides
