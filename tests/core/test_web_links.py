"""Links to the web view in mail (issue 50): every board mail links to the board's page at the new
position and, for a player, to the position after their last move and to their own view by a
private link, which goes in that player's mail alone; the digest links each board; ``GAME
newlink`` replaces a player's private link. With no ``web_url`` set, mail carries no link."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from pbmserv.config import Settings
from pbmserv.core.context import CommandContext
from pbmserv.core.digest import send_digests
from pbmserv.core.play import game_service
from pbmserv.core.play.boards import board_of
from pbmserv.core.play.positions import moves_of, project
from pbmserv.core.play.private_links import holder_of
from pbmserv.core.results import Notification
from pbmserv.db.engine import transaction
from pbmserv.db.models import GameRow, PrivateLink
from pbmserv.outbound.compose import render_html, render_notice
from tests.core.client import Client
from tests.core.test_no_glued_sentences import render_with_stand_ins

pytestmark = pytest.mark.db

BASE = "https://games.example.org"
ALICE, BOB, CAROL = "alice@example.org", "bob@example.org", "carol@example.org"
PRIVATE = re.compile(re.escape(BASE) + r"/p/([A-Za-z0-9_-]{32})/(\d+)")
PAGE_LABEL = "See this position on the web (step through the game from there):"


@pytest.fixture
def web(players: Client) -> Client:
    """The players, on a server with a web view; carol observes alice and bob's board 1."""
    players.settings = Settings(confirm_addresses=False, web_url=BASE + "/")
    assert players.run("extinction challenge alice bob").ok
    assert players.run("extinction observe 1 carol pass3333", sender=CAROL).ok
    return players


def board_mail(client: Client) -> dict[str, tuple[Notification, str]]:
    """The board mail the last command sent, by address: the notice and its text as mailed."""
    mails = [n for n in client.notifications if n.kind == "board"]
    by_address = {n.to: (n, render_notice(n, "pbmserv@x")) for n in mails}
    assert len(by_address) == len(mails), "one board mail a reader"
    return by_address


def private_of(text: str) -> tuple[str, int] | None:
    found = PRIVATE.findall(text)
    assert len(found) <= 1, found
    return (found[0][0], int(found[0][1])) if found else None


def holder(client: Client, token: str) -> tuple[int, int, int] | None:
    with client.session() as session:
        found = holder_of(session, token)
        return None if found is None else (found.board, found.user_id, found.seat)


def user_ids(client: Client) -> dict[str, int]:
    with client.session() as session:
        row = session.get(GameRow, 1)
        assert row is not None
        return {s.user.userid: s.user_id for s in row.seats}


def plies(client: Client) -> tuple[int, int]:
    """Board 1's ply as stored, and as the web view's projection counts it."""
    with client.session() as session:
        row = session.get(GameRow, 1)
        assert row is not None
        board = board_of(row)
        assert board is not None
        ctx = CommandContext(session=session, settings=client.settings, sender=None)
        moves = moves_of(game_service.history(ctx, board))
        return row.ply, project(board, moves, None).plies


def test_each_reader_gets_their_own_links_and_no_one_elses(web: Client) -> None:
    ids = user_ids(web)
    moved = web.run("extinction move 1 alice secret1 e4")
    assert moved.ok
    mails = board_mail(web)
    assert set(mails) == {ALICE, BOB, CAROL}
    alice, bob, carol = (mails[a][1] for a in (ALICE, BOB, CAROL))
    for text in (alice, bob, carol):
        assert f"{PAGE_LABEL}\n{BASE}/g/1/1\n" in text
    # Alice moved last: nothing came since; Bob has not moved yet.
    assert "since your last move" not in alice and "since your last move" not in bob
    own = {address: private_of(mails[address][1]) for address in (ALICE, BOB)}
    assert own[ALICE] is not None and own[BOB] is not None
    assert own[ALICE][1] == own[BOB][1] == 1 and own[ALICE][0] != own[BOB][0]
    assert holder(web, own[ALICE][0]) == (1, ids["alice"], 0)
    assert holder(web, own[BOB][0]) == (1, ids["bob"], 1)
    # Each token in its player's mail alone: not the opponent's, not the observer's.
    assert own[BOB][0] not in alice and own[ALICE][0] not in bob
    assert "/p/" not in carol and "private" not in carol
    assert mails[CAROL][0].data["links"]["private"] is None
    # Nor in the answer to the mover, nor in what is logged of it.
    for token, _ply in own.values():  # type: ignore[misc]
        assert token not in moved.text and token not in str(moved.log_fields())

    answered = web.run("extinction move 1 Bob hunter22 e5", sender=BOB)
    assert answered.ok
    mails = board_mail(web)
    alice = mails[ALICE][1]
    assert f"What happened since your last move, marked:\n{BASE}/g/1/1?since=1\n" in alice
    assert f"{BASE}/g/1/2\n" in alice and "since your last move" not in mails[BOB][1]
    # The same link again (one per player and board), at the new position.
    assert private_of(alice) == (own[ALICE][0], 2)
    assert private_of(mails[BOB][1]) == (own[BOB][0], 2)
    assert private_of(mails[CAROL][1]) is None
    assert plies(web) == (2, 2)


def test_the_links_count_positions_as_the_web_view_does_after_a_take_back(web: Client) -> None:
    assert web.run("extinction move 1 alice secret1 e4").ok
    assert web.run("extinction move 1 Bob hunter22 e5", sender=BOB).ok
    assert web.run("extinction move 1 alice secret1 Nf3").ok
    assert web.run("extinction propose 1 Bob hunter22 undo", sender=BOB).ok
    # Bob's turn: undo takes back his e5 and alice's Nf3 after it.
    assert web.run("extinction accept 1 alice secret1 undo").ok
    assert plies(web) == (1, 1)
    mails = board_mail(web)
    assert f"{BASE}/g/1/1\n" in mails[CAROL][1]
    assert private_of(mails[ALICE][1]) is not None
    assert private_of(mails[ALICE][1])[1] == 1  # type: ignore[index]
    # Alice's last move left is e4: the position after it is the position now.
    assert "since your last move" not in mails[ALICE][1]
    assert web.run("extinction move 1 Bob hunter22 c5", sender=BOB).ok
    mails = board_mail(web)
    assert f"{BASE}/g/1/1?since=1\n" in mails[ALICE][1] and f"{BASE}/g/1/2\n" in mails[BOB][1]
    assert plies(web) == (2, 2)


def test_a_finished_board_has_public_links_only(web: Client) -> None:
    assert web.run("extinction move 1 alice secret1 e4").ok
    assert web.run("extinction resign 1 Bob hunter22", sender=BOB).ok
    mails = board_mail(web)
    for _notice, text in mails.values():
        assert f"{BASE}/g/1/1\n" in text and "/p/" not in text


def test_without_web_url_no_mail_carries_a_link(players: Client) -> None:
    assert players.settings.web_base is None
    assert players.run("extinction challenge alice bob").ok
    assert players.run("extinction observe 1 carol pass3333", sender=CAROL).ok
    assert players.run("extinction move 1 alice secret1 e4").ok
    assert players.run("extinction move 1 Bob hunter22 e5", sender=BOB).ok
    mails = board_mail(players)
    assert len(mails) == 3
    for notice, text in mails.values():
        assert "links" not in notice.data
        assert "http" not in text and "on the web" not in text
    assert players.query(select(PrivateLink)) == []


def test_the_html_part_links_the_addresses_the_text_shows(web: Client) -> None:
    assert web.run("extinction move 1 alice secret1 e4").ok
    text = board_mail(web)[ALICE][1]
    token, _ply = private_of(text)  # type: ignore[misc]
    html = render_html("extinction board 1: waiting for Bob", text, [], "pbmserv@x")
    assert f'<a href="{BASE}/g/1/1" style="color:#1a4f8b">{BASE}/g/1/1</a>' in html
    assert f'<a href="{BASE}/p/{token}/1"' in html
    # Only a line that is an address alone becomes a link.
    plain = render_html("s", "See https://example.net/x here.\nhttps://a.example/b\n", [])
    assert "See https://example.net/x here." in plain and plain.count("<a ") == 1
    assert '<a href="https://a.example/b"' in plain


def test_board_mail_with_its_links_on_and_off_reads_line_by_line() -> None:
    """The stand-in renderings (tests/core/test_no_glued_sentences.py) take the links in turn."""
    texts = [render_with_stand_ins("mail/board.txt.j2", r) for r in range(48)]
    assert any(PAGE_LABEL in t for t in texts) and any(PAGE_LABEL not in t for t in texts)
    assert any("Your own view" in t for t in texts)
    assert any("since your last move" in t for t in texts)
    digests = [render_with_stand_ins("mail/digest.txt.j2", r) for r in range(48)]
    assert any("On the web:" in t for t in digests) and any("On the web:" not in t for t in digests)


def test_the_digest_links_each_board_at_its_position_now(web: Client) -> None:
    assert web.run("set bob hunter22 digest=daily", sender=BOB).ok
    assert web.run("extinction move 1 alice secret1 e4").ok
    seven = datetime.now(UTC).replace(hour=7, minute=0, second=0, microsecond=0) + timedelta(1)
    with transaction(web.factory) as session:
        ctx = CommandContext(session, web.settings, None, clock=lambda: seven)
        assert len(send_digests(ctx)) == 1
        [digest] = ctx.notifications
    text = render_notice(digest, "pbmserv@x")
    assert "==== extinction board 1 ====\nReply to: pbmserv+b1-s1-" in text
    assert f"\nOn the web:\n{BASE}/g/1/1\n" in text and "/p/" not in text


def test_newlink_replaces_the_players_link_and_mails_it_to_their_own_address(
    web: Client,
) -> None:
    ids = user_ids(web)
    assert web.run("extinction move 1 alice secret1 e4").ok
    old, _ply = private_of(board_mail(web)[ALICE][1])  # type: ignore[misc]
    bobs, _ply = private_of(board_mail(web)[BOB][1])  # type: ignore[misc]
    # Sent from another address with alice's password: the new link goes to alice's own.
    renewed = web.run("extinction newlink 1 alice secret1", sender="mallory@example.net")
    assert renewed.ok, renewed.text
    assert "Your private link to extinction board 1 no longer works." in renewed.text
    assert "in the board mail sent now to your own address" in " ".join(renewed.text.split())
    [notice] = web.notifications
    assert notice.to == ALICE and notice.kind == "board"
    text = render_notice(notice, "pbmserv@x")
    assert text.startswith("extinction board 1: waiting for Bob\n")
    assert "You asked for a new private link to this board" in text
    new, ply = private_of(text)  # type: ignore[misc]
    assert new != old and ply == 1
    assert holder(web, old) is None and holder(web, new) == (1, ids["alice"], 0)
    assert holder(web, bobs) == (1, ids["bob"], 1)  # the other player's link stands
    for token in (old, new):
        assert token not in renewed.text and token not in str(renewed.log_fields())
    # The next board mail carries the new link too.
    assert web.run("extinction move 1 Bob hunter22 e5", sender=BOB).ok
    assert private_of(board_mail(web)[ALICE][1]) == (new, 2)


def test_newlink_errors_say_what_is_wrong_and_change_nothing(web: Client) -> None:
    syntax = "extinction newlink BOARD USERID PASSWORD"
    for line, sender, problem in (
        ("extinction newlink 1 alice", ALICE, "some words are missing"),
        ("extinction newlink 1 alice secret1 now", ALICE, "too many words"),
        ("extinction newlink 9 alice secret1", ALICE, "board 9"),
        ("extinction newlink 1 alice wrong-password", ALICE, "password"),
        ("extinction newlink 1 carol pass3333", CAROL, "carol is not playing on board 1"),
    ):
        answer = web.run(line, sender=sender)
        assert not answer.ok, line
        assert problem in answer.text, (line, answer.text)
        assert web.notifications == []
    assert syntax in web.run("extinction newlink 1 alice", sender=ALICE).text
    with_link = web.query(select(PrivateLink.generation))
    assert all(generation == 1 for (generation,) in with_link)
    assert web.run("extinction resign 1 Bob hunter22", sender=BOB).ok
    over = web.run("extinction newlink 1 alice secret1")
    assert not over.ok and "board 1 is over" in over.text and web.notifications == []


def test_newlink_on_a_server_without_web_view(players: Client) -> None:
    assert players.run("extinction challenge alice bob").ok
    answer = players.run("extinction newlink 1 alice secret1")
    assert not answer.ok and "this server has no web view" in answer.text
    assert players.notifications == [] and players.query(select(PrivateLink)) == []


def test_help_web_and_help_newlink(web: Client) -> None:
    page = web.run("help web")
    assert page.ok and f"on the web at {BASE}/" in page.text
    assert "GAME newlink BOARD USERID PASSWORD" in page.text and "/g/BOARD/N" in page.text
    assert "help web" in web.run("help topics").text
    command = web.run("help newlink")
    assert command.ok and "GAME newlink BOARD USERID PASSWORD" in command.text
    web.settings = Settings(confirm_addresses=False)
    assert "This server has no web view at present" in web.run("help web").text


def test_a_hidden_information_game_links_each_player_to_their_own_view(players: Client) -> None:
    players.settings = Settings(confirm_addresses=False, web_url=BASE)
    assert players.run("hmdg challenge alice bob").ok
    mails = board_mail(players)
    alice, bob = private_of(mails[ALICE][1]), private_of(mails[BOB][1])
    assert alice is not None and bob is not None and alice[0] != bob[0]
    assert alice[0] not in mails[BOB][1] and bob[0] not in mails[ALICE][1]
    assert f"{BASE}/g/1/0\n" in mails[ALICE][1]
