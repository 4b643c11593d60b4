"""Out-of-office replies that set no auto header are known by their Subject and never answered
(an answer would start a loop with the absent player's vacation program)."""

from __future__ import annotations

import pytest

from pbmserv.inbound.reading.decode import parse_message


def reason(subject: bytes) -> str | None:
    raw = (
        b"From: Bob <bob@example.org>\r\nTo: pbmserv@localhost\r\nSubject: "
        + subject
        + b"\r\nMessage-ID: <1@example.org>\r\n\r\nI am away until Monday.\r\n"
    )
    return parse_message(raw, "bob@example.org", "pbmserv@localhost").auto_reason


@pytest.mark.parametrize(
    "subject",
    [
        b"Out of Office: chameleon board 3: your move",
        b"Out of Office AutoReply: chameleon board 3",
        b"Automatic reply: chameleon board 3: your move",
        b"Auto: chameleon board 3: your move",
        b"AutoReply: Re: help",
        b"Abwesenheitsnotiz: chameleon board 3",
        b"=?utf-8?q?R=C3=A9ponse_automatique=3A_chameleon_board_3?=",
    ],
)
def test_out_of_office_subjects_are_not_answered(subject: bytes) -> None:
    assert (reason(subject) or "").startswith("auto-reply (Subject:")


@pytest.mark.parametrize(
    "subject",
    [
        b"chameleon move 3 bob secret c3",
        b"Re: chameleon board 3: your move",
        b"out of office next week, can we pause?",  # a person: no colon after the words
        b"automatic",
        b"help autoplay",
    ],
)
def test_ordinary_subjects_are_answered(subject: bytes) -> None:
    assert reason(subject) is None
