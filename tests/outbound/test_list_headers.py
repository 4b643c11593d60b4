"""The List-* headers of bulk mail (outbound.list_headers), written through outbound.headers:
what they say, that nothing unsafe gets into them, and that mail which is no bulk mail has none."""

from __future__ import annotations

import email
import email.policy
from datetime import UTC, datetime

import pytest

from pbmserv.config import Settings
from pbmserv.core.results import BulkMail
from pbmserv.outbound import headers
from pbmserv.outbound.compose import build_message
from pbmserv.outbound.list_headers import list_fields

BULK = BulkMail("digest", "unsubscribe digest bob abcdefghijklmnop")
NOW = datetime(2027, 1, 5, 7, tzinfo=UTC)


def test_bulk_mail_names_its_list_and_the_mail_that_leaves_it() -> None:
    assert list_fields("pbmserv@games.example.org", BULK) == [
        "List-Id: pbmserv digest <digest.games.example.org>",
        "List-Unsubscribe: <mailto:pbmserv@games.example.org"
        "?subject=unsubscribe%20digest%20bob%20abcdefghijklmnop"
        "&body=unsubscribe%20digest%20bob%20abcdefghijklmnop>",
        "List-Unsubscribe-Post: List-Unsubscribe=One-Click",
        "Precedence: bulk",
    ]
    assert list_fields("pbmserv@games.example.org", None) == []


def test_an_https_target_goes_first_beside_the_mailto() -> None:
    [_, unsubscribe, *_] = list_fields(
        "pbmserv@games.example.org", BULK, web_unsubscribe="https://games.example.org/u/x"
    )
    unfolded = unsubscribe.replace("\n ", " ")  # folded after the comma, as RFC 5322 allows
    assert unfolded.startswith("List-Unsubscribe: <https://games.example.org/u/x>, <mailto:")


def test_a_server_on_an_internationalised_domain_leaves_the_list_id_out() -> None:
    fields = list_fields("pbmserv@spiele.bücher.example", BULK)
    assert [f.split(":")[0] for f in fields] == [
        "List-Unsubscribe",
        "List-Unsubscribe-Post",
        "Precedence",
    ]
    assert "bücher" not in fields[0] and fields[0].isascii()  # percent-encoded UTF-8


@pytest.mark.parametrize(
    "url",
    [
        "mailto:a b@example.org",
        "mailto:x@example.org>, <https://evil.example",
        "mailto:x@example.org\r\nBcc: evil@example.org",
        "mailto:=?utf-8?q?x?=@example.org",
        "http://plain.example.org/",
        "javascript:alert(1)",
    ],
)
def test_an_unsafe_url_is_never_written(url: str) -> None:
    with pytest.raises(ValueError):
        headers.urls_field("List-Unsubscribe", [url])


def test_a_list_id_must_be_a_dot_atom() -> None:
    with pytest.raises(ValueError):
        headers.list_id_field("pbmserv digest", "digest.example.org>\r\nBcc: x")
    with pytest.raises(ValueError):
        headers.list_id_field("pbmserv digest", "localhost")


def test_only_bulk_mail_carries_the_headers() -> None:
    settings = Settings()
    facts = {"to": "bob@example.org", "subject": "s", "body": "b\n", "now": NOW}
    answer = build_message(settings=settings, auto_submitted="auto-replied", **facts)
    digest = build_message(settings=settings, auto_submitted="auto-generated", bulk=BULK, **facts)
    parse = email.message_from_bytes
    names = ("List-Id", "List-Unsubscribe", "List-Unsubscribe-Post", "Precedence")
    assert not any(parse(answer.raw, policy=email.policy.strict)[n] for n in names)
    parsed = parse(digest.raw, policy=email.policy.strict)
    assert all(parsed[n] for n in names)
    assert parsed["List-Id"] == "pbmserv digest <digest.localhost>"
