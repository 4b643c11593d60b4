"""The listener reads MAIL and RCPT addresses without aiosmtpd's per-call class (issue 52):
the same answer as aiosmtpd's own ``_getaddr`` for any argument, plain or strange."""

from __future__ import annotations

from aiosmtpd.handlers import Sink
from aiosmtpd.smtp import SMTP
from hypothesis import given, settings
from hypothesis import strategies as st

from pbmserv.inbound.smtp import read_address

ATEXT = "abcXYZ019!#$%&'*+/=?^_`{|}~-"
WEIRD = ATEXT + '.@<>()[]\\" \t,;:=?\x00é'

aiosmtpd = SMTP(Sink())


def theirs(arg: str, limit: int = 0) -> tuple[str | None, str | None]:
    aiosmtpd.local_part_limit = limit
    try:
        return aiosmtpd._getaddr(arg)
    except Exception as error:  # the stdlib raises on some (the listener answers 501)
        return type(error).__name__, None


def ours(arg: str, limit: int = 0) -> tuple[str | None, str | None]:
    try:
        return read_address(arg, limit)
    except Exception as error:
        return type(error).__name__, None


def test_plain_addresses_are_read_as_aiosmtpd_reads_them() -> None:
    for arg in [
        "<player@example.org>",
        "<a.b+tag@mail.example.org> SIZE=1200 BODY=8BITMIME",
        "<pbmserv+Xy_1-z@host.test>",
        "player@example.org",
        " <spaced@example.org>",
        "<>",
        "",
        "<a..b@example.org>",
        "<a@b@example.org>",
        '<"quoted local"@example.org>',
        "<=?utf-8?q??=@x.test>",
        "<a@[>",
        "<a@>",
        "<" + "x" * 70 + "@example.org>",
    ]:
        for limit in (0, 64):
            assert ours(arg, limit) == theirs(arg, limit), arg


@settings(max_examples=600)
@given(
    st.text(alphabet=ATEXT + ".", min_size=1, max_size=12),
    st.text(alphabet=ATEXT + ".", min_size=1, max_size=12),
    st.text(alphabet=" =SIZEBODY8", max_size=10),
)
def test_dot_atom_addresses_match(local: str, domain: str, rest: str) -> None:
    arg = f"<{local}@{domain}>{rest}"
    assert ours(arg) == theirs(arg)
    assert ours(arg, 8) == theirs(arg, 8)


@settings(max_examples=600)
@given(st.text(alphabet=WEIRD, max_size=24))
def test_any_argument_matches(arg: str) -> None:
    assert ours(arg) == theirs(arg)
