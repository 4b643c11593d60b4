"""The player pages' addresses fuzzed (as tests/web/test_fuzz.py does the rest of the site):
whatever the user ids, games, pages and search words, a page or a plain 4xx page, never a
5xx, never a traceback."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from tests.core.client import Client
from tests.web.pages_fixtures import (  # noqa: F401 (fixtures)
    hmdg_board,
    people_fixture,
    site_settings_fixture,
    web_as_served_fixture,
)
from tests.web.test_fuzz import check, queries, segments

pytestmark = pytest.mark.db

PREFIXES = ["u", "u/alice", "u/bob/vs", "u/alice/vs/bob", "ratings", "search", "u/robot1/vs"]
WORDS = ["alice", "Bob", "BOB", "robot1", "carol", "chameleon", "hmdg", "1", "#1", "_", "%", "a"]


@pytest.fixture
def played(people: Client) -> None:
    """A rated Chameleon board alice won, and a running HMDG board."""
    assert people.run("chameleon challenge -size=5 alice bob").ok
    assert people.run("chameleon resign 1 Bob hunter22", sender="bob@example.org").ok
    hmdg_board(people)


@settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    prefix=st.sampled_from(PREFIXES),
    path=st.lists(st.one_of(st.sampled_from(WORDS), segments), max_size=3),
    query=st.one_of(
        queries,
        st.dictionaries(
            st.sampled_from(["q", "page"]), st.one_of(st.sampled_from(WORDS), st.text()), max_size=2
        ),
    ),
)
def test_no_player_address_breaks_the_site(
    web_as_served: TestClient, played: None, prefix: str, path: list[str], query: dict[str, str]
) -> None:
    url = "/" + "/".join([prefix, *path]).strip("/")
    if query:
        url += "?" + urlencode(query)
    check(web_as_served, url)


@pytest.mark.parametrize(
    "url",
    [
        "/u/alice/vs/bob?page=0",
        "/u/alice/vs/bob?page=" + "9" * 12,
        "/u/alice/vs/bob?page=99",
        "/u/alice/vs/bob?page=-1",
        "/u/%00",
        "/u/alice%2fvs%2fbob",
        "/u/alice/vs/bob/",
        "/u/" + "a" * 280,
        "/ratings/%ff",
        "/ratings/chameleon/",
        "/search?q=" + "%" * 100,
        "/search?q=%00",
        "/search?q=alice&q=bob",
        "/search?q=" + "9" * 30,
        "/search?q=%23",
    ],
)
def test_odd_player_addresses(web_as_served: TestClient, played: None, url: str) -> None:
    check(web_as_served, url)
