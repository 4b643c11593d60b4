"""Whatever the address (odd characters, bytes that are no UTF-8, huge numbers, long paths and
query strings, any parameter), the site answers with a page or a plain 4xx page: never a 5xx,
never a traceback."""

from __future__ import annotations

from urllib.parse import quote, urlencode

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from tests.core.client import Client
from tests.web.pages_fixtures import (  # noqa: F401 (fixtures)
    chameleon_board,
    hmdg_board,
    link_of,
    people_fixture,
    site_settings_fixture,
    web_as_served_fixture,
)

pytestmark = pytest.mark.db

PREFIXES = ["", "g", "g/1", "g/2", "p", "rules", "games", "static", "robots.txt", "g/1/2"]
PARAMETERS = ["since", "page", "game", "player", "status", "board", "x"]
#: Words that mean something somewhere on the site, to reach past the first check.
MEANINGFUL = [
    "1", "2", "0", "5", "-1", "1.svg", "2.png", "1.json", "1.txt", "1.pgn", "hmdg", "chameleon",
    "site.css", "..", ".", "%", "%00", "9" * 12, str(10**30), "active", "finished", "alice",
]  # fmt: skip
TRACES = ("Traceback", 'File "', "Error:", "Exception", "sqlalchemy", "psycopg", "sqlite")

segments = st.one_of(
    st.sampled_from(MEANINGFUL),
    st.text(min_size=1, max_size=40).map(lambda t: quote(t, safe="")),
    st.binary(min_size=1, max_size=20).map(lambda b: quote(b, safe="")),
    st.text(alphabet="0123456789.-+eE_/", min_size=1, max_size=40),
)
values = st.one_of(st.sampled_from(MEANINGFUL), st.text(max_size=60))
queries = st.dictionaries(
    st.one_of(st.sampled_from(PARAMETERS), st.text(max_size=10)), values, max_size=4
)


def check(web: TestClient, url: str, query: dict[str, str] | None = None) -> None:
    """``url`` (with ``query``, if any) answers without a server error, trace or sniffing."""
    if query:
        url += "?" + urlencode(query)
    response = web.get(url)
    assert response.status_code < 500, (url, response.status_code)
    if response.headers.get("content-type", "").startswith("text/html"):
        for trace in TRACES:
            assert trace not in response.text, (url, trace)
    assert response.headers["x-content-type-options"] == "nosniff", url


@pytest.fixture
def boards(people: Client, engine) -> str:  # type: ignore[no-untyped-def]
    """Board 1 (Chameleon) and board 2 (HMDG, running, with a secret); Bob's link to 2."""
    assert chameleon_board(people) == 1
    assert hmdg_board(people) == 2
    return link_of(engine, 2, "bob", 1)


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    prefix=st.sampled_from(PREFIXES),
    path=st.lists(segments, max_size=3),
    query=queries,
)
def test_no_address_breaks_the_site(
    web_as_served: TestClient, boards: str, prefix: str, path: list[str], query: dict[str, str]
) -> None:
    url = "/" + "/".join([prefix, *path]).strip("/")
    check(web_as_served, url, query)


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(rest=st.lists(segments, max_size=2), query=queries)
def test_no_private_address_breaks_the_site(
    web_as_served: TestClient, boards: str, rest: list[str], query: dict[str, str]
) -> None:
    url = "/p/" + "/".join([boards, *rest])
    check(web_as_served, url, query)


@pytest.mark.parametrize(
    "url",
    [
        "/g/1/" + "1" * 500,
        "/" + "x" * 5000,
        "/games?" + "a=b&" * 1000,
        "/g/1?since=" + "9" * 400,
        "/g/1/%ff%fe",
        "/g/%c0%af",
        "/rules/%00",
        "/static/%00",
        "/static/..%2f..%2fpyproject.toml",
        "/p/%2e%2e/1",
        "/g/1/1%2esvg",
        "/g//1",
        "//g/1",
        "/g/1/",
    ],
)
def test_odd_addresses(web_as_served: TestClient, boards: str, url: str) -> None:
    check(web_as_served, url)
