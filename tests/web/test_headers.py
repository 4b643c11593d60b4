"""The headers of every response: the security policy (the same on SVG), nosniff and the
referrer policy everywhere, error pages and redirects included; a private link's manners;
strong ETags on the public pages, pictures and records, and 304 for ``If-None-Match``."""

from __future__ import annotations

import re

import pytest
from starlette.testclient import TestClient

from pbmserv.web.headers import CONTENT_SECURITY_POLICY
from pbmserv.web.views import front
from tests.core.client import Client
from tests.core.play.boards_played import move
from tests.web.pages_fixtures import (  # noqa: F401 (fixtures)
    CHAMELEON,
    chameleon_board,
    link_of,
    people_fixture,
    site_settings_fixture,
    web_as_served_fixture,
    web_fixture,
)

pytestmark = pytest.mark.db

POLICY = (
    "default-src 'none'; img-src 'self'; style-src 'self'; script-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
STRONG_ETAG = re.compile(r'"[0-9a-z-]+"')


def public_manners(response) -> None:  # type: ignore[no-untyped-def]
    assert response.headers["content-security-policy"] == POLICY
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "same-origin"
    assert "x-robots-tag" not in response.headers


def private_manners(response) -> None:  # type: ignore[no-untyped-def]
    assert response.headers["content-security-policy"] == POLICY
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"
    assert response.headers["cache-control"] == "private, no-store"
    assert response.headers["x-robots-tag"] == "noindex"
    assert "etag" not in response.headers


def test_the_policy_is_the_designed_one() -> None:
    assert CONTENT_SECURITY_POLICY == POLICY


def test_every_public_response_has_the_policy(people: Client, web: TestClient) -> None:
    board = chameleon_board(people)
    paths = [
        "/",
        "/games",
        "/games?board=1",  # a redirect
        "/rules/chameleon",
        "/robots.txt",
        "/static/site.css",
        "/static/steps.js",
        f"/g/{board}",
        f"/g/{board}/1",
        f"/g/{board}/1.svg",
        f"/g/{board}/1.png",
        f"/g/{board}.json",
        f"/g/{board}.txt",
        "/nowhere",  # 404
        f"/g/{board}/99",  # 404
        f"/g/{board}.pgn",  # 404
        "/games?page=x",  # 400
        "/" + "a" * 400,  # too long: 404
        "/games?player=" + "a" * 400,  # too long: 400
    ]
    for path in paths:
        response = web.get(path)
        assert response.status_code in (200, 303, 400, 404), path
        public_manners(response)
    public_manners(web.post("/"))  # 405


def test_a_server_error_is_a_plain_page_with_the_same_headers(
    web_as_served: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken() -> list[object]:
        raise RuntimeError("the database at /secret/path is on fire")

    monkeypatch.setattr(front, "all_games", broken)
    failed = web_as_served.get("/")
    assert failed.status_code == 500
    assert failed.headers["content-type"] == "text/html; charset=utf-8"
    assert "Something went wrong" in failed.text
    for secret in ("secret/path", "on fire", "RuntimeError", "Traceback", ".py"):
        assert secret not in failed.text
    public_manners(failed)


def test_a_private_link_has_a_private_link_s_manners(
    people: Client, web: TestClient, engine
) -> None:  # type: ignore[no-untyped-def]
    board = chameleon_board(people)
    token = link_of(engine, board, "alice", 0)
    for path in (
        f"/p/{token}",
        f"/p/{token}/1",
        f"/p/{token}/1.svg",
        f"/p/{token}/1.png",
        f"/p/{token}.json",
        f"/p/{token}.txt",
        f"/p/{token}/99",  # 404
        "/p/" + "A" * 32,  # no such link: 404
    ):
        response = web.get(path)
        assert response.status_code in (200, 404), path
        private_manners(response)
        if response.status_code == 200:  # the same page asked again: no 304 without a tag
            again = web.get(path, headers={"If-None-Match": "*"})
            assert again.status_code == 200, path


def test_strong_etags_and_304(people: Client, web: TestClient) -> None:
    board = chameleon_board(people)
    kinds = [
        f"/g/{board}",
        f"/g/{board}/2",
        f"/g/{board}/2?since=1",
        f"/g/{board}/2.svg",
        f"/g/{board}/2.png",
        f"/g/{board}.json",
        f"/g/{board}.txt",
        "/rules/chameleon",
    ]
    tags = {}
    for path in kinds:
        response = web.get(path)
        tag = response.headers["etag"]
        assert STRONG_ETAG.fullmatch(tag), (path, tag)
        assert response.headers["cache-control"] == "no-cache"
        tags[path] = tag
        for asked in (tag, f"W/{tag}", f'"other", {tag}', "*"):
            cached = web.get(path, headers={"If-None-Match": asked})
            assert cached.status_code == 304, (path, asked)
            assert cached.content == b"" and cached.headers["etag"] == tag
            public_manners(cached)
        assert web.get(path, headers={"If-None-Match": '"other"'}).status_code == 200
        head = web.head(path, headers={"If-None-Match": tag})
        assert head.status_code == 304
    assert len(set(tags.values())) == len(kinds)  # every representation its own tag


def test_a_move_changes_the_tag_and_a_repeat_keeps_it(people: Client, web: TestClient) -> None:
    board = chameleon_board(people, ("a1x", "e5o"))
    before = {p: web.get(p).headers["etag"] for p in (f"/g/{board}", f"/g/{board}/1.svg")}
    assert {p: web.get(p).headers["etag"] for p in before} == before  # the same: the same tag
    assert CHAMELEON is not None
    move(people, CHAMELEON, board, 0, "b2x")
    page = web.get(f"/g/{board}", headers={"If-None-Match": before[f"/g/{board}"]})
    assert page.status_code == 200 and "b2x" in page.text
    assert page.headers["etag"] != before[f"/g/{board}"]
