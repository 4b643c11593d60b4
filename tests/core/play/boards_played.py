"""Boards played through the command core (``tests.core.client``), as mail would play them,
and read back as the web view reads them: a Board and its stored moves."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import func, select

from pbmserv.core.context import CommandContext
from pbmserv.core.play.boards import Board, board_of
from pbmserv.core.play.game_service import history
from pbmserv.core.play.positions import moves_of
from pbmserv.db.models import GameRow, MoveRow
from pbmserv.games.base import AnyGame
from tests.core.client import Client

#: The players of the ``players`` fixture by seat: the login words and the sender.
LOGINS = (("alice secret1", "alice@example.org"), ("Bob hunter22", "bob@example.org"))


@contextmanager
def loaded(client: Client, number: int) -> Iterator[tuple[Board, list[MoveRow]]]:
    """Board ``number`` and its stored moves, read in a session of their own (open while the
    caller looks at them)."""
    with client.session() as session:
        row = session.get(GameRow, number)
        assert row is not None, f"no board {number}"
        board = board_of(row)
        assert board is not None
        ctx = CommandContext(session=session, settings=client.settings, sender=None)
        yield board, moves_of(history(ctx, board))


def state_of(client: Client, number: int) -> Any:
    with loaded(client, number) as (board, _):
        return board.state


def challenge(client: Client, game: AnyGame, options: str = "") -> int:
    """A new board of ``game`` between alice (seat 0) and Bob (seat 1); its number."""
    made = client.run(f"{game.SPEC.name} challenge {options} alice bob".replace("  ", " "))
    assert made.ok, made.text
    number = client.query(select(func.max(GameRow.id)))[0][0]
    assert isinstance(number, int)
    return number


def move(client: Client, game: AnyGame, number: int, seat: int, text: str) -> None:
    login, sender = LOGINS[seat]
    played = client.run(f"{game.SPEC.name} move {number} {login} {text}", sender=sender)
    assert played.ok, played.text


def resign(client: Client, game: AnyGame, number: int, seat: int) -> None:
    login, sender = LOGINS[seat]
    done = client.run(f"{game.SPEC.name} resign {number} {login}", sender=sender)
    assert done.ok, done.text


def play_random(
    client: Client, game: AnyGame, number: int, rng: random.Random, plies: int
) -> list[str]:
    """Up to ``plies`` random legal moves on the board (fewer if it ends); their texts."""
    played = []
    for _ in range(plies):
        state = state_of(client, number)
        seats = sorted(game.to_move(state).seats)
        if not seats:
            break
        chosen = rng.choice(game.legal_moves(state, seats[0]))
        text = game.format_move(state, chosen)
        move(client, game, number, seats[0], text)
        played.append(text)
    return played
