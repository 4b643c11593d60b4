"""Replies to a seat's reply address, piece by piece: the commands bare words mean, the tags
and their masking, and one Re: however long the exchange (the MTA's verdict is read in
tests/inbound/test_authentication.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbmserv.core.accounts.logins import REPLY_PASSWORD
from pbmserv.core.dispatch import is_command
from pbmserv.core.play.board_mail import mask_tokens, new_token, parse_tag
from pbmserv.core.replies import reply_commands
from pbmserv.games import find_game
from pbmserv.runtime.answer_subjects import reply_subject

EXTINCTION = find_game("extinction")
HMDG = find_game("hmdg")
assert EXTINCTION is not None and HMDG is not None


def commands(lines: list[str], game=EXTINCTION) -> list[tuple[str, bool]]:  # type: ignore[no-untyped-def]
    found = reply_commands(lines, game, 17, "alice", is_command)
    return [(line.text.replace(REPLY_PASSWORD, "PW"), line.built) for line in found]


def test_the_first_line_is_the_move_and_later_lines_count_only_as_commands() -> None:
    assert commands(["Nf3", "Cheers,", "Alice"]) == [("extinction move 17 alice PW Nf3", True)]
    assert commands(["a8-b7", "chat nice one", "propose draw", "Thanks!"]) == [
        ("extinction move 17 alice PW a8-b7", True),
        ("extinction chat 17 alice PW nice one", True),
        ("extinction propose 17 alice PW draw", True),
    ]


@pytest.mark.parametrize(
    ("line", "command"),
    [
        ("resign", "extinction resign 17 alice PW"),
        ("RESIGN", "extinction resign 17 alice PW"),
        ("draw", "extinction draw 17 alice PW"),
        ("accept undo", "extinction accept 17 alice PW undo"),
        ("move e4", "extinction move 17 alice PW e4"),
        ("board", "extinction board 17 alice PW"),
        ("history pgn", "extinction history 17 pgn"),
    ],
)
def test_a_command_word_without_its_board_words(line: str, command: str) -> None:
    assert commands([line]) == [(command, True)]


def test_a_games_own_kind_of_move_and_a_whole_command() -> None:
    assert commands(["reveal C5 C7"], HMDG) == [("hmdg reveal 17 alice PW C5 C7", True)]
    whole = "extinction move 17 alice secret1 e4"
    assert commands([whole, "resign"]) == [(whole, False), ("extinction resign 17 alice PW", True)]


def test_tags_read_back_and_reject_anything_else() -> None:
    token = new_token()
    tag = parse_tag(f"b17-s1-{token}")
    assert tag is not None and (tag.board, tag.seat, tag.token) == (17, 1, token)
    assert parse_tag(f"B17-S1-{token.upper()}") == tag  # some systems change the case
    for bad in ("", "b17-s1", f"b17-s1-{token}x", f"bx-s1-{token}", f"b17-s1-{token[:-1]}1"):
        assert parse_tag(bad) is None
    assert len({new_token() for _ in range(200)}) == 200


@given(st.text(max_size=40), st.text(max_size=40), st.booleans(), st.booleans())
def test_a_token_never_survives_masking(
    before: str, after: str, upper: bool, confirm: bool
) -> None:
    token = new_token()
    tag = "confirm" if confirm else "b3-s0"
    # In any letter case: the server plays PBMSERV+B3-S0-TOKEN too, so it must mask it.
    written = f"pbmserv+{tag}-{token}".upper() if upper else f"pbmserv+{tag}-{token}"
    masked = mask_tokens(f"{before}{written}@games.example{after}")
    assert token.lower() not in masked.lower() or token in (before + after).lower()


@pytest.mark.parametrize(
    ("subject", "answer"),
    [
        ("chameleon board 1: your move", "Re: chameleon board 1: your move"),
        ("Re: chameleon board 1: your move", "Re: chameleon board 1: your move"),
        ("Re: Re: AW: Re[2]: x", "Re: x"),
        ("RE: Fwd: SV: x", "Re: x"),
        ("Review: the rules", "Re: Review: the rules"),
        ("", "Re: your message to pbmserv"),
    ],
)
def test_one_re_however_long_the_exchange(subject: str, answer: str) -> None:
    assert reply_subject(subject) == answer


# --- tokens in the database -------------------------------------------------------------------


def _tokens(client) -> dict[tuple[int, int | None], str | None]:  # type: ignore[no-untyped-def]
    from sqlalchemy import select

    from pbmserv.db.models import BoardMail

    rows = client.query(select(BoardMail.game_id, BoardMail.seat, BoardMail.token))
    return {(game, seat): token for game, seat, token in rows}


@pytest.mark.db
def test_tokens_are_per_seat_and_board_and_rotate_with_the_password_or_address(players) -> None:  # type: ignore[no-untyped-def]
    assert players.run("chameleon challenge -size=3 alice bob").ok
    assert players.run("chameleon challenge -size=3 alice bob").ok
    assert players.run("chameleon observe 1 carol pass3333", sender="carol@example.org").ok
    assert players.run("chameleon move 1 alice secret1 a1x").ok
    first = _tokens(players)
    assert set(first) == {(1, 0), (1, 1), (2, 0), (2, 1), (1, None)}
    assert first[(1, None)] is None  # an observer gets no reply address
    assert len({first[k] for k in first if k[1] is not None}) == 4
    assert players.run("change password alice secret1 secret2").ok
    second = _tokens(players)
    assert second[(1, 0)] != first[(1, 0)] and second[(2, 0)] != first[(2, 0)]
    assert second[(1, 1)] == first[(1, 1)]  # bob's stay
    assert players.run(
        "change address bob hunter22 robert@example.org", sender="bob@example.org"
    ).ok
    third = _tokens(players)
    assert third[(1, 1)] != second[(1, 1)] and third[(1, 0)] == second[(1, 0)]


@pytest.mark.db
def test_help_replying_explains_it_with_the_servers_domain(players) -> None:  # type: ignore[no-untyped-def]
    text = players.run("help replying").text
    assert "pbmserv+b17-s0-" in text and "alone on the first line" in text
    assert "help replying" in players.run("help").text
