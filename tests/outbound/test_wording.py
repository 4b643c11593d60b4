"""Every kind of result core can produce is worded by the mail layer, and only those."""

from __future__ import annotations

import pytest

from pbmserv.core.results import NOTICE_KINDS, SECTION_KINDS, Notification, Section
from pbmserv.outbound import wording
from pbmserv.resources import templates_dir


def test_every_kind_of_section_has_a_template_that_exists() -> None:
    assert set(wording.HELP_TEMPLATES) | wording.PLAIN_SECTIONS == SECTION_KINDS
    for kind in wording.PLAIN_SECTIONS:
        assert (templates_dir() / wording.section_template(Section(kind))).is_file(), kind


def test_every_kind_of_notice_has_a_subject_and_a_template() -> None:
    assert set(wording.NOTICE_SUBJECTS) == NOTICE_KINDS
    for kind in NOTICE_KINDS:
        path = templates_dir() / wording.notice_template(Notification("a@b", "notice", kind))
        assert path.is_file(), kind


def test_a_kind_nobody_words_is_refused_where_it_is_made() -> None:
    with pytest.raises(ValueError, match="no such kind"):
        Section("mail/sections/moved.txt.j2")
    with pytest.raises(ValueError, match="no such kind"):
        Notification("a@b", "notice", "party_invitation")


def test_subjects_read_as_before() -> None:
    view = {"game": "hmdg", "board": 7, "status": "your move", "your_turn": False}
    board = Notification("a@b", "board", "board", {"view": view})
    assert wording.notice_headline(board) == "hmdg board 7: your move"
    reminder = Notification(
        "a@b", "notice", "reminder", {"view": {**view, "waiting_for": ["bob", "carol"]}}
    )
    assert wording.notice_headline(reminder) == "hmdg board 7: reminder, waiting for bob, carol"
    tournament = {"name": "spring", "round": 2}
    standings = Notification(
        "a@b",
        "notice",
        "tournament_standings",
        {"tournament": tournament, "final": False, "round": 2},
    )
    assert wording.notice_subject(standings) == "tournament spring: standings after round 2"


def test_a_boards_thread_keeps_one_subject_and_each_mail_says_its_news_first() -> None:
    """Gmail threads by Subject too: a board's mail to a reader never changes it (issue 31)."""
    from pbmserv.outbound.compose import render_notice

    view = {"game": "hmdg", "board": 7, "status": "your move", "your_turn": True}
    notes = [
        Notification("a@b", "board", "board", {"view": view}),
        Notification("a@b", "board", "board", {"view": {**view, "status": "waiting for bob"}}),
        Notification("a@b", "notice", "reminder", {"view": {**view, "waiting_for": ["bob"]}}),
        Notification(
            "a@b", "notice", "chat", {"game": "hmdg", "board": 7, "from": "bob", "text": "hi"}
        ),
        Notification(
            "a@b",
            "notice",
            "proposal",
            {"game": "hmdg", "board": 7, "by": "bob", "action": "proposed", "kind": "draw"},
        ),
    ]
    assert {wording.notice_subject(n) for n in notes} == {"hmdg board 7"}
    assert wording.notice_headline(notes[1]) == "hmdg board 7: waiting for bob"
    full = {
        **view,
        "title": "HMDG",
        "players": [],
        "diagram": "+",
        "moves": 3,
        "moves_played": "3",
        "next_move": 4,
        "last_move": None,
        "prompt": None,
        "userid": "alice",
        "reply_verb": "move",
        "reply_args": "MOVE",
        "has_swap": False,
        "finished": False,
        "waiting_for": ["bob"],
    }
    for status in ("your move", "waiting for bob"):
        data = {"view": {**full, "status": status}, "event": None}
        note = Notification("a@b", "board", "board", data)
        assert render_notice(note, "s@x").splitlines()[0] == f"hmdg board 7: {status}"
