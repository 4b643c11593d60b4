"""A player's private link (core/play/private_links.py): a capability of 192 bits, the same on
every board mail, stored only as its SHA-256, found again by its holder, dead once revoked, and
nothing for anything that is not a live link's token."""

from __future__ import annotations

import base64
import hashlib
import secrets
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Engine, make_url, select
from sqlalchemy.orm import Session

from pbmserv.core.play.private_links import (
    TOKEN_PATTERN,
    LinkHolder,
    holder_of,
    private_token,
    revoke,
)
from pbmserv.db.engine import transaction
from pbmserv.db.models import Base, PrivateLink, User
from pbmserv.games import find_game
from tests.core.client import Client
from tests.core.play.boards_played import challenge

pytestmark = pytest.mark.db

NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)
HMDG = find_game("hmdg")


def users(client: Client) -> dict[str, int]:
    return {name: uid for name, uid in client.query(select(User.userid, User.id))}


def token_for(client: Client, board: int, user: int, seat: int) -> str:
    with transaction(client.factory) as session:
        return private_token(session, board, user, seat, NOW)


def holder(client: Client, token: str) -> LinkHolder | None:
    with client.session() as session:
        return holder_of(session, token)


def everything_stored(engine: Engine) -> str:
    """Every row of every table, as text: what a dump of the database would hold."""
    cells = []
    with Session(engine) as session:
        for table in Base.metadata.sorted_tables:
            for row in session.execute(select(table)):
                cells.extend(repr(value) for value in row)
    return "\n".join(cells)


def database_files(engine: Engine) -> bytes:
    """The bytes of an SQLite database's files (its write-ahead log too); empty elsewhere."""
    url = make_url(str(engine.url))
    if url.get_backend_name() != "sqlite" or not url.database:
        return b""
    path = Path(url.database)
    return b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal")) if p.exists())


def test_a_token_is_32_url_safe_letters_of_192_bits(players: Client) -> None:
    ids = users(players)
    board = challenge(players, HMDG)
    token = token_for(players, board, ids["alice"], 0)
    assert len(token) == 32 and TOKEN_PATTERN.fullmatch(token)
    assert set(token) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    assert len(base64.urlsafe_b64decode(token)) * 8 >= 128


def test_the_same_player_and_board_get_the_same_token_and_only_its_hash_is_kept(
    players: Client, engine: Engine
) -> None:
    ids = users(players)
    board = challenge(players, HMDG)
    token = token_for(players, board, ids["alice"], 0)
    assert token_for(players, board, ids["alice"], 0) == token
    with transaction(players.factory) as session:  # asked again in one transaction
        assert private_token(session, board, ids["alice"], 0, NOW) == token
        assert private_token(session, board, ids["alice"], 0, NOW) == token
    stored = players.query(select(PrivateLink.token_hash, PrivateLink.seat, PrivateLink.game_id))
    assert stored == [(hashlib.sha256(token.encode()).hexdigest(), 0, board)]
    assert token not in everything_stored(engine)
    assert token.encode() not in database_files(engine)
    assert holder(players, token) == LinkHolder(board=board, user_id=ids["alice"], seat=0)


def test_a_link_made_and_asked_for_again_in_one_transaction(players: Client) -> None:
    ids = users(players)
    board = challenge(players, HMDG)
    with transaction(players.factory) as session:  # not flushed in between
        token = private_token(session, board, ids["bob"], 1, NOW)
        assert private_token(session, board, ids["bob"], 1, NOW) == token
    assert holder(players, token) == LinkHolder(board, ids["bob"], 1)
    assert len(players.query(select(PrivateLink.token_hash))) == 1


def test_tokens_differ_between_players_and_boards(players: Client, engine: Engine) -> None:
    ids = users(players)
    boards = [challenge(players, HMDG) for _ in range(3)]
    made = {
        (board, name): token_for(players, board, ids[name], seat)
        for board in boards
        for seat, name in enumerate(("alice", "bob"))
    }
    assert len(set(made.values())) == len(made)
    dump = everything_stored(engine)
    files = database_files(engine)
    for (board, name), token in made.items():
        seat = 0 if name == "alice" else 1
        assert holder(players, token) == LinkHolder(board, ids[name], seat)
        assert token not in dump and token.encode() not in files
    assert len(players.query(select(PrivateLink.token_hash))) == len(made)


def test_a_revoked_token_finds_nothing_and_the_next_one_differs(players: Client) -> None:
    ids = users(players)
    board, other = challenge(players, HMDG), challenge(players, HMDG)
    old = token_for(players, board, ids["bob"], 1)
    kept = token_for(players, other, ids["bob"], 1)
    with transaction(players.factory) as session:
        assert revoke(session, board, ids["bob"])
        assert not revoke(session, board, ids["alice"])  # she had none
    assert holder(players, old) is None
    new = token_for(players, board, ids["bob"], 1)
    assert new != old and TOKEN_PATTERN.fullmatch(new)
    assert holder(players, new) == LinkHolder(board, ids["bob"], 1)
    assert holder(players, kept) == LinkHolder(other, ids["bob"], 1)  # only that board's
    with transaction(players.factory) as session:
        assert revoke(session, board, ids["bob"])
    third = token_for(players, board, ids["bob"], 1)
    assert holder(players, new) is None and third not in (old, new)
    assert holder(players, third) == LinkHolder(board, ids["bob"], 1)


@pytest.mark.parametrize(
    "garbage",
    [
        "",
        "A",
        "A" * 31,
        "A" * 33,
        "A" * 1_000_000,
        "+" * 32,
        "A" * 31 + "=",
        "A" * 31 + "/",
        "A" * 31 + " ",
        "A" * 31 + "\x00",
        "ａ" * 32,  # fullwidth letters
        "é" * 32,
        "' OR '1'='1' --" + "A" * 17,
        "%41" * 10 + "AA",
        "../../../../etc/passwd/AAAAAAAA",
    ],
    ids=lambda g: f"{g[:12]!r}{len(g)}",
)
def test_garbage_tokens_find_nothing(players: Client, garbage: str) -> None:
    ids = users(players)
    board = challenge(players, HMDG)
    token = token_for(players, board, ids["alice"], 0)
    assert holder(players, garbage) is None
    for near in (token + "\n", " " + token, token[:-1], token + garbage[:1], token.upper()):
        if near != token:
            assert holder(players, near) is None


def test_a_well_formed_token_never_issued_finds_nothing(players: Client) -> None:
    ids = users(players)
    board = challenge(players, HMDG)
    token_for(players, board, ids["alice"], 0)
    for _ in range(20):
        guess = secrets.token_urlsafe(24)
        assert TOKEN_PATTERN.fullmatch(guess)
        assert holder(players, guess) is None
