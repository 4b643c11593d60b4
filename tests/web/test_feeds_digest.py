"""Where a player learns of their feed: the daily digest gives its address when the server has
a web view (``web_url``), and ``help web`` tells of the feeds; the address given is the feed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import feedparser
import pytest
from starlette.testclient import TestClient

from pbmserv.config import Settings
from pbmserv.core.context import CommandContext
from pbmserv.core.digest import send_digests
from pbmserv.db.engine import transaction
from pbmserv.outbound.compose import render_notice
from pbmserv.web.app import make_app
from tests.core.client import Client
from tests.web.pages_fixtures import (  # noqa: F401 (fixtures)
    chameleon_board,
    people_fixture,
    site_settings_fixture,
)

pytestmark = pytest.mark.db

BASE = "https://games.example.org"
BOB = "bob@example.org"


def digest_text(people: Client) -> str:
    """Bob's digest, made at the digest hour tomorrow, as mailed."""
    seven = datetime.now(UTC).replace(hour=7, minute=0, second=0, microsecond=0) + timedelta(1)
    with transaction(people.factory) as session:
        ctx = CommandContext(session, people.settings, None, clock=lambda: seven)
        assert len(send_digests(ctx)) == 1
        [digest] = ctx.notifications
    return render_notice(digest, "pbmserv@x")


def test_the_digest_gives_the_players_feed_when_there_is_a_web_view(
    people: Client, site_settings: Settings
) -> None:
    people.settings = Settings(confirm_addresses=False, web_url=BASE + "/")
    assert people.run("set bob hunter22 digest=daily", sender=BOB).ok
    number = chameleon_board(people)
    text = digest_text(people)
    feed = f"{BASE}/u/Bob/feed.atom"
    assert "\nA feed reader can follow your boards where it is your move" in text
    assert f"\n{feed}\n" in text
    assert text.index(feed) > text.index(f"board {number} ====")  # after the boards
    # The address is the feed, under web_url, with the board waiting for Bob.
    served = Settings(confirm_addresses=False, db_url=site_settings.db_url, web_url=BASE + "/")
    with TestClient(make_app(served)) as web:
        response = web.get(feed.removeprefix(BASE))
    parsed = feedparser.parse(response.content)
    assert parsed.bozo == 0 and {link.href for link in parsed.feed.links} >= {feed}
    assert [e.link for e in parsed.entries] == [f"{BASE}/g/{number}/5"]


def test_without_a_web_view_the_digest_names_no_feed(people: Client) -> None:
    assert people.run("set bob hunter22 digest=daily", sender=BOB).ok
    chameleon_board(people)
    text = digest_text(people)
    assert "feed" not in text and "http" not in text


def test_help_web_tells_of_the_feeds(people: Client) -> None:
    plain = " ".join(people.run("help web").text.split())
    assert "/u/USERID/feed.atom a feed of the boards waiting for USERID's move" in plain
    assert "/g/BOARD/feed.atom a feed of a board's moves" in plain
    assert "Yours is" not in plain
    people.settings = Settings(confirm_addresses=False, web_url=BASE + "/")
    linked = " ".join(people.run("help web").text.split())
    assert f"Yours is {BASE}/u/USERID/feed.atom" in linked
