"""`pbmserv admin links revoke BOARD USERID`, run as a real subprocess on a real database: a
player's private link to the web view stops working, and their next board mail carries a new
one (the players play in-process, as the server would run their mail)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlalchemy import Engine, select

from pbmserv.config import Settings
from pbmserv.core.context import CommandContext
from pbmserv.core.dispatch import dispatch_line
from pbmserv.core.play.private_links import holder_of
from pbmserv.db.engine import session_factory, transaction
from pbmserv.db.models import GameRow
from pbmserv.outbound.compose import render_notice
from tests.e2e.admin.test_admin import Shell

pytestmark = pytest.mark.db

BASE = "https://games.example.org"
WEB = Settings(confirm_addresses=False, web_url=BASE)
NO_WEB = Settings(confirm_addresses=False)
PRIVATE = re.compile(re.escape(BASE) + r"/p/([A-Za-z0-9_-]{32})/\d+")


def mail(engine: Engine, line: str, sender: str, settings: Settings = WEB) -> dict[str, str]:
    """A command processed as the server processes one mail; the board mail it caused, as
    mailed, by address."""
    with transaction(session_factory(engine)) as session:
        ctx = CommandContext(session, settings, sender)
        assert dispatch_line(ctx, line).ok, line
        return {n.to: render_notice(n, "pbmserv@x") for n in ctx.notifications}


def token_in(text: str) -> str:
    found = PRIVATE.findall(text)
    assert len(found) == 1, text
    return str(found[0])


def holder(engine: Engine, token: str) -> tuple[int, int] | None:
    with session_factory(engine)() as session:
        found = holder_of(session, token)
        return None if found is None else (found.board, found.seat)


@pytest.fixture
def shell(db_url: str, engine: Engine, tmp_path: Path) -> Shell:
    for userid in ("alice", "bob", "carol"):
        mail(engine, f"signup {userid} pw-{userid}", f"{userid}@example.org")
    return Shell(db_url, tmp_path)


def test_revoke_stops_the_link_and_the_next_board_mail_brings_a_new_one(
    shell: Shell, engine: Engine
) -> None:
    started = mail(engine, "chameleon challenge -size=5 alice bob", "alice@example.org")
    old = token_in(started["bob@example.org"])
    alices = token_in(started["alice@example.org"])
    assert holder(engine, old) == (1, 1)

    done = shell.run("links", "revoke", "1", "Bob")
    assert done.strip() == (
        "board 1: revoked bob's private link (it leads nowhere now); "
        "their next board mail carries a new one"
    )
    assert holder(engine, old) is None
    assert holder(engine, alices) == (1, 0)  # the other player's link stands
    assert shell.new_mail() == []  # nothing mailed: the next board mail brings the new link

    moved = mail(engine, "chameleon move 1 alice pw-alice c3x", "alice@example.org")
    new = token_in(moved["bob@example.org"])
    assert new != old and holder(engine, new) == (1, 1)
    assert token_in(moved["alice@example.org"]) == alices

    assert shell.json("links", "revoke", "1", "bob") == {
        "ok": True,
        "message": "board 1: revoked bob's private link (it leads nowhere now); "
        "their next board mail carries a new one",
        "board": "1",
        "userid": "bob",
    }
    assert holder(engine, new) is None


def test_revoke_tells_what_it_could_not_do(shell: Shell, engine: Engine) -> None:
    # A board made with no web view: no player has a private link to it.
    mail(engine, "chameleon challenge -size=5 alice bob", "alice@example.org", NO_WEB)
    assert shell.run("links", "revoke", "1", "alice").strip() == (
        "board 1: alice has no private link; nothing revoked"
    )
    assert "carol" in shell.run("links", "revoke", "1", "carol", ok=False)
    assert "is not a player" in shell.run("links", "revoke", "1", "carol", ok=False)
    assert "there is no board 9" in shell.run("links", "revoke", "9", "alice", ok=False)
    assert "the following arguments are required" in shell.run("links", "revoke", "1", ok=False)
    with session_factory(engine)() as session:
        assert session.scalar(select(GameRow.status)) == "active"
