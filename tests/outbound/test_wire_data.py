"""A message as DATA carries it (RFC 5321 4.5.2): every line ended by CRLF, whatever ended it
(CRLF, a lone CR or a lone LF), the last line ended too, and a dot that begins a line doubled
(the relay takes one away again). Checked against a line-by-line reading of the rule."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from pbmserv.outbound.relay.session import wire_data


def by_the_rule(raw: bytes) -> bytes:
    """The rule read line by line: split at each line end, double a leading dot, end each
    line with CRLF (a message ending in a line end has no empty line after it)."""
    lines = re.split(rb"\r\n|\r|\n", raw)
    if lines[-1] == b"" and len(lines) > 1:
        lines.pop()
    return b"".join((b"." + line if line.startswith(b".") else line) + b"\r\n" for line in lines)


# Lines of dots, line ends of every kind and plain text, in any order.
_PIECES = st.sampled_from([b"\r\n", b"\r", b"\n", b".", b"..", b"a", b"x.y", b" ", b"\r\r\n"])


@given(st.lists(_PIECES, max_size=40).map(b"".join))
def test_every_line_ends_in_crlf_and_a_leading_dot_is_doubled(raw: bytes) -> None:
    assert wire_data(raw) == by_the_rule(raw)


def test_a_board_mail_comes_out_as_the_rule_says() -> None:
    body = b"Subject: chameleon board 7\n\n.a line with a dot\r\n..two\rlast"
    assert wire_data(body) == (
        b"Subject: chameleon board 7\r\n\r\n..a line with a dot\r\n...two\r\nlast\r\n"
    )


def test_a_message_without_a_dot_at_a_line_start_keeps_its_dots() -> None:
    assert wire_data(b"a.b\r\nc. d\r\n") == b"a.b\r\nc. d\r\n"
