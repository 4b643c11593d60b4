"""No address under ``/t/`` or ``/tournaments`` breaks the site (issue 51): whatever the path
and query, a page or a plain 4xx page, never a 5xx nor a traceback (as tests/web/test_fuzz.py
for the rest of the site)."""

from __future__ import annotations

from urllib.parse import quote, urlencode

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from tests.web.pages_fixtures import (  # noqa: F401 (fixtures)
    site_settings_fixture,
    web_as_served_fixture,
)
from tests.web.test_fuzz import check
from tests.web.tournaments_rig import Club, club_fixture, seed_wins  # noqa: F401 (club)

pytestmark = pytest.mark.db


@pytest.fixture
def played(club: Club) -> int:
    """A round robin (tournament 1) with a round played, and a draft (2)."""
    club.begin("rr", "roundrobin", ["chameleon:size=3"], ["ann", "bob", "cat"])
    club.play_round("rr", seed_wins(["ann", "bob", "cat"]))
    club.create("draft", "swiss", ["chameleon:size=3"])
    return club.tournament_id("rr")


MEANINGFUL = ["1", "2", "3", "0", "-1", "01", "1.json", "rr", "draft", "%00", "9" * 12, str(10**30)]
segments = st.one_of(
    st.sampled_from(MEANINGFUL),
    st.text(min_size=1, max_size=30).map(lambda t: quote(t, safe="")),
    st.binary(min_size=1, max_size=20).map(lambda b: quote(b, safe="")),
    st.text(alphabet="0123456789.-+eE_/", min_size=1, max_size=30),
)
queries = st.dictionaries(st.text(max_size=10), st.text(max_size=40), max_size=3)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    prefix=st.sampled_from(["t", "tournaments", "t/1", "t/2"]),
    path=st.lists(segments, max_size=2),
    query=queries,
)
def test_no_tournament_address_breaks_the_site(
    web_as_served: TestClient, played: int, prefix: str, path: list[str], query: dict[str, str]
) -> None:
    url = "/" + "/".join([prefix, *path]).strip("/")
    if query:
        url += "?" + urlencode(query)
    check(web_as_served, url)


@pytest.mark.parametrize(
    "url",
    ["/t/1", "/t/2", "/t/" + "1" * 400, "/t/%ff", "/t/1/", "/t//1", "/tournaments/", "/t/1%2e0"],
)
def test_odd_tournament_addresses(web_as_served: TestClient, played: int, url: str) -> None:
    check(web_as_served, url)
    if url == "/t/1":
        assert web_as_served.get(url).status_code == 200
    if url == "/t/2":
        assert web_as_served.get(url).status_code == 404
