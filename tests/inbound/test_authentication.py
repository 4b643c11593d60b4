"""The receiving MTA's verdict on a reply's From address, read from the Authentication-Results
headers a trusted host wrote: which headers count, what they must say, and the attacks of
issue 29 (a forged header below the MTA's, a pass in a comment or a quoted string, no header
at all, a public suffix as the signing domain)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbmserv.inbound.authentication import Verdict, mta_verdict, trusted_ids
from pbmserv.inbound.reading.decode import IncomingMail, parse_message

MX = "mx.games.test"
TRUSTED = [MX]
RECEIVED = ("received", "")


def ar(value: str) -> tuple[str, str]:
    return ("authentication-results", value)


def mail(*trace: tuple[str, str], sender: str | None = "alice@ex.test") -> IncomingMail:
    return IncomingMail(
        sender=sender,
        sender_display=sender or "",
        subject="Re: board 1",
        text="e4",
        message_id="<1@ex.test>",
        references=(),
        auto_reason=None,
        trace=trace,
    )


def verdict(*values: str, sender: str = "alice@ex.test") -> Verdict:
    """The verdict on a mail whose MTA wrote ``values`` on top, above its Received."""
    return mta_verdict(mail(*(ar(v) for v in values), RECEIVED, sender=sender), TRUSTED)


def test_the_setting_names_the_trusted_hosts() -> None:
    assert trusted_ids(" MX.Games.Test, ,mx2.games.test ,") == [MX, "mx2.games.test"]
    assert trusted_ids("") == [] and trusted_ids(" , ") == []


def test_without_trusted_hosts_nothing_is_checked() -> None:
    assert mta_verdict(mail(ar(f"{MX}; dmarc=fail")), []) is Verdict.UNCHECKED
    assert mta_verdict(mail(), [" "]) is Verdict.UNCHECKED


# Headers as real hosts write them (the From is alice@ex.test).
OPENDKIM = (
    f"{MX}; dkim=pass (2048-bit key; unprotected) header.d=ex.test header.i=@ex.test"
    " header.a=rsa-sha256 header.s=mail header.b=AbCdEfGh"
)
OPENDMARC = f"{MX}; dmarc=pass (p=none dis=none) header.from=ex.test"
RSPAMD = (
    f'{MX}; dkim=pass header.d=mail.ex.test header.s=dkim header.b="a/b+c"; '
    "dmarc=none; spf=pass (mx.games.test: domain of "
    '"alice@ex.test" designates 192.0.2.1 as permitted sender) smtp.mailfrom=alice@ex.test'
)
GMAIL = (
    "mx.google.com; dkim=pass header.i=@ex.test header.s=20230601 header.b=Qw1+2x/y; "
    "spf=pass (google.com: domain of alice@ex.test designates 209.85.220.41 as permitted "
    "sender) smtp.mailfrom=alice@ex.test; dmarc=pass (p=NONE sp=NONE dis=NONE) header.from=ex.test"
)
POLICYD_SPF = f"{MX}; spf=pass (sender SPF authorized) smtp.mailfrom=ex.test"


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([OPENDKIM], Verdict.PASS),
        ([OPENDMARC], Verdict.PASS),
        ([OPENDKIM, OPENDMARC], Verdict.PASS),  # a milter each, together on top
        ([RSPAMD], Verdict.PASS),  # aligned DKIM with a subdomain's d=, no DMARC policy
        ([POLICYD_SPF], Verdict.PASS),
        ([f"{MX} 1; spf=pass smtp.mailfrom=alice@mail.ex.test"], Verdict.PASS),  # a version
        ([f"{MX} (amavis); dmarc=pass header.from=ex.test;"], Verdict.PASS),  # a trailing ;
        ([f"{MX.upper()}; DMARC=PASS header.from=EX.TEST"], Verdict.PASS),
        ([f'{MX}; dkim=pass reason="good signature" header.i=alice@ex.test'], Verdict.PASS),
        ([f"{MX}; none"], Verdict.NONE),
        ([f"{MX}; dkim=fail header.d=ex.test; spf=softfail smtp.mailfrom=ex.test"], Verdict.NONE),
        ([f"{MX}; dkim=pass header.d=evil.test"], Verdict.NONE),
        ([f"{MX}; spf=pass smtp.mailfrom=alice@evil.test"], Verdict.NONE),
        ([f"{MX}; spf=pass smtp.helo=ex.test"], Verdict.NONE),  # not the MAIL FROM identity
        ([f"{MX}; iprev=pass policy.iprev=192.0.2.1; auth=pass smtp.auth=ex.test"], Verdict.NONE),
        ([f"{MX}; dmarc=pass header.from=evil.test"], Verdict.NONE),  # another From checked
        ([f"{MX}; dmarc=pass header.from=mail.ex.test"], Verdict.NONE),  # DMARC's is exact
        ([f"{MX}; dmarc=fail (p=reject) header.from=ex.test"], Verdict.FAIL),
        ([f"{MX}; dmarc=fail"], Verdict.FAIL),
        # dmarc=fail outweighs any pass beside it, in the same header or the next.
        ([f"{MX}; dkim=pass header.d=ex.test; dmarc=fail header.from=ex.test"], Verdict.FAIL),
        ([OPENDKIM, f"{MX}; dmarc=fail header.from=ex.test"], Verdict.FAIL),
        # ... but not a fail for another From domain, which is no pass either.
        ([f"{MX}; dmarc=fail header.from=evil.test"], Verdict.NONE),
        # d= names the signer; i= is read only without it.
        ([f"{MX}; dkim=pass header.d=evil.test header.i=@ex.test"], Verdict.NONE),
    ],
)
def test_what_the_mtas_headers_say(values: list[str], expected: Verdict) -> None:
    assert verdict(*values) is expected


def test_a_hosted_mailbox_names_its_own_authserv_id() -> None:
    assert mta_verdict(mail(ar(GMAIL), RECEIVED), ["mx.google.com"]) is Verdict.PASS
    assert mta_verdict(mail(ar(GMAIL), RECEIVED), TRUSTED) is Verdict.NONE


@pytest.mark.parametrize(
    ("identity", "sender", "aligned"),
    [
        ("mail.ex.co.uk", "alice@ex.co.uk", True),
        ("ex.co.uk", "alice@mail.ex.co.uk", True),
        ("co.uk", "alice@ex.co.uk", False),
        ("uk", "alice@ex.co.uk", False),
        ("other.co.uk", "alice@ex.co.uk", False),
        ("test", "alice@ex.test", False),  # not listed: the default rule makes it a suffix
        ("org", "alice@example.org", False),
        ("com", "alice@example.com", False),
        ("github.io", "alice@alice.github.io", False),
        ("bob.github.io", "alice@alice.github.io", False),
        ("x.alice.github.io", "alice@alice.github.io", True),
        ("EX.TEST.", "alice@ex.test", True),
        ("192.0.2.1", "alice@2.1", False),
        ("[192.0.2.1]", "alice@ex.test", False),
    ],
)
def test_alignment_is_by_organisational_domain(identity: str, sender: str, aligned: bool) -> None:
    expected = Verdict.PASS if aligned else Verdict.NONE
    assert verdict(f"{MX}; dkim=pass header.d={identity}", sender=sender) is expected
    assert verdict(f"{MX}; spf=pass smtp.mailfrom=x@{identity}", sender=sender) is expected


# --- the attacks of issue 29 ----------------------------------------------------------------


@pytest.mark.parametrize("theirs", [f"{MX}; dmarc=fail header.from=ex.test", f"{MX}; dkim=none"])
def test_a_header_below_the_mtas_received_does_not_count(theirs: str) -> None:
    forged = f"{MX}; dmarc=pass"
    expected = Verdict.FAIL if "fail" in theirs else Verdict.NONE
    assert mta_verdict(mail(ar(theirs), RECEIVED, ar(forged)), TRUSTED) is expected
    # Below another host's Received, or below several, just the same.
    trace = (RECEIVED, ar(theirs), RECEIVED, RECEIVED, ar(forged), ar(OPENDMARC))
    assert mta_verdict(mail(*trace), TRUSTED) is expected


@pytest.mark.parametrize(
    "value",
    [
        f'{MX}; spf=fail smtp.mailfrom="x;dmarc=pass y"@evil.test',
        f'{MX}; spf=fail smtp.mailfrom="x; dmarc=pass"@evil.test',
        f"{MX}; dkim=fail (bad signature; dmarc=pass ) header.d=ex.test",
        f"{MX}; dkim=fail (nested (comment; dmarc=pass) here) header.d=ex.test",
        f'{MX}; dkim=fail reason="x; dmarc=pass" header.d=ex.test',
        f"{MX} (; dmarc=pass); none",
    ],
)
def test_a_pass_inside_a_comment_or_quoted_string_is_not_read(value: str) -> None:
    assert verdict(value) is Verdict.NONE


def test_no_trusted_header_is_no_pass() -> None:
    assert mta_verdict(mail(), TRUSTED) is Verdict.NONE
    assert mta_verdict(mail(RECEIVED, RECEIVED), TRUSTED) is Verdict.NONE
    untrusted = "mx.evil.test; dmarc=pass header.from=ex.test; dkim=pass header.d=ex.test"
    assert verdict(untrusted) is Verdict.NONE
    assert verdict(f"mx.games.test.evil.test; {OPENDMARC.split('; ', 1)[1]}") is Verdict.NONE


def test_a_header_that_cannot_be_read_is_no_pass() -> None:
    for broken in (
        f"{MX}; dkim=pass header.d=ex.test foo.bar=1",  # a ptype RFC 8601 does not have
        f"{MX}; dmarc=pass header.from=ex.test (unclosed",
        f"{MX}; dmarc=pass header.from=ex.test; =",
        f"{MX}; spf=pass smtp.mailfrom=<alice@ex.test>",
        f"{MX}; dkim=pass header.d=ex.test " + "(" * 3000 + ")" * 3000,
        f"{MX}; dmarc=pass header.from=ex.test " + "x" * 5000,
        f"{MX}; dmarc=pass header.from=ex.test (café)",
        f"{MX}",
    ):
        assert verdict(broken) is Verdict.NONE, broken
        # It takes the trusted host's place, and may hide a dmarc=fail: nothing beside it
        # passes then.
        assert verdict(broken, OPENDMARC) is Verdict.NONE, broken
        assert verdict(OPENDMARC, broken) is Verdict.NONE, broken
    # A trusted id written quoted, or after a comment, is the trusted host's as well.
    assert verdict(f'"{MX}"; dmarc=pass', OPENDMARC) is Verdict.NONE
    assert verdict(f"(c) {MX}; dmarc=pass header.from=ex.test") is Verdict.PASS


def test_the_first_trusted_header_need_not_be_the_first_header() -> None:
    below = (RECEIVED, ar("mx.evil.test; none"), ar(OPENDKIM), ar(OPENDMARC), RECEIVED)
    assert mta_verdict(mail(*below), TRUSTED) is Verdict.PASS
    apart = (ar(f"{MX}; dkim=none"), ar("mx.other.test; none"), ar(f"{MX}; dmarc=fail"))
    assert mta_verdict(mail(*apart), TRUSTED) is Verdict.FAIL  # no Received between


def test_a_sender_without_a_domain_never_passes() -> None:
    assert verdict(OPENDMARC, sender="alice") is Verdict.NONE
    assert mta_verdict(mail(ar(f"{MX}; dmarc=fail"), sender=None), TRUSTED) is Verdict.FAIL


# --- the trace, from a whole message --------------------------------------------------------


def test_the_trace_keeps_the_header_order() -> None:
    raw = (
        f"Authentication-Results: {MX};\r\n\tdkim=pass header.d=ex.test\r\n"
        "X-Received: by 2002:a05 with SMTP id x\r\n"
        "Received: from ex.test by mx.games.test; Tue, 24 Nov 2026 10:00:00 +0000\r\n"
        f"authentication-results: {MX}; dmarc=pass\r\n"
        "ARC-Authentication-Results: i=1; mx.games.test; dmarc=pass\r\n"
        "From: Alice <alice@EX.TEST>\r\nSubject: Re: x\r\n\r\ne4\r\n"
    ).encode()
    parsed = parse_message(raw)
    assert parsed.trace == (
        ar(f"{MX}; dkim=pass header.d=ex.test"),
        RECEIVED,
        ar(f"{MX}; dmarc=pass"),
    )
    assert mta_verdict(parsed, TRUSTED) is Verdict.PASS
    # The sender's forged header below the Received does not turn a fail into a pass.
    failing = raw.replace(b"dkim=pass header.d=ex.test", b"dmarc=fail header.from=ex.test")
    assert mta_verdict(parse_message(failing), TRUSTED) is Verdict.FAIL


def test_the_trace_ends_at_the_tenth_authentication_results() -> None:
    headers = "".join(
        f"Received: hop {n}\r\nAuthentication-Results: h{n}; none\r\n" for n in range(30)
    )
    parsed = parse_message(f"{headers}From: alice@ex.test\r\n\r\ne4\r\n".encode())
    assert [kind for kind, _ in parsed.trace] == ["received", "authentication-results"] * 10
    assert parsed.trace[-1] == ar("h9; none")


# --- properties -----------------------------------------------------------------------------

_RESULTS = [
    "none",
    "dmarc=pass",
    "dmarc=fail",
    "dmarc=none",
    "dmarc=pass header.from=ex.test",
    "dmarc=fail header.from=ex.test",
    "dkim=pass header.d=ex.test",
    "dkim=pass header.d=mail.ex.test",
    "dkim=pass header.d=test",
    "dkim=fail header.d=ex.test",
    "dkim=pass header.i=@ex.test",
    "spf=pass smtp.mailfrom=alice@ex.test",
    "spf=softfail smtp.mailfrom=ex.test",
    'spf=fail smtp.mailfrom="x;dmarc=pass y"@evil.test',
    "dkim=fail (bad; dmarc=pass ) header.d=ex.test",
]
_IDS = [MX, MX.upper(), "mx.evil.test", "mx2.games.test"]


@st.composite
def _header(draw: st.DrawFn, ids: list[str] | None = None) -> tuple[str, str]:
    host = draw(st.sampled_from(ids or _IDS))
    if draw(st.booleans()):
        return ar(f"{host}; {draw(st.text(max_size=40))}")
    results = draw(st.lists(st.sampled_from(_RESULTS), min_size=1, max_size=3))
    return ar(f"{host}; " + "; ".join(results))


_ENTRY = st.one_of(st.just(RECEIVED), _header())
_UNTRUSTED = st.one_of(st.just(RECEIVED), _header(["mx.evil.test"]))
_SENDERS = st.sampled_from(["alice@ex.test", "alice@mail.ex.test", "bob@evil.test"])


# No deadline: the first example loads the public suffix list, which took over 200 ms once on
# a fresh checkout (hypothesis then reports the test as failing).
@settings(deadline=None)
@given(
    before=st.lists(_UNTRUSTED, max_size=3),
    first=_header([MX, MX.upper()]),
    group=st.lists(_header(), max_size=3),
    after=st.lists(_ENTRY, max_size=5),
    inserted=_header([MX, MX.upper(), "mx2.games.test"]),
    where=st.integers(min_value=0),
    sender=_SENDERS,
)
def test_a_header_below_a_received_never_changes_the_verdict(
    before: list[tuple[str, str]],
    first: tuple[str, str],
    group: list[tuple[str, str]],
    after: list[tuple[str, str]],
    inserted: tuple[str, str],
    where: int,
    sender: str,
) -> None:
    """The sender writes whatever Authentication-Results they like, naming the trusted host,
    anywhere below the Received header under the receiving MTA's own: the verdict is the
    MTA's."""
    trusted = [MX, "mx2.games.test"]
    top = [*before, first, *group, RECEIVED]
    trace = [*top, *after]
    at = len(top) + where % (len(after) + 1)
    forged = [*trace[:at], inserted, *trace[at:]]
    original = mta_verdict(mail(*trace, sender=sender), trusted)
    assert mta_verdict(mail(*forged, sender=sender), trusted) is original


@given(st.lists(st.one_of(st.just(RECEIVED), st.text(max_size=60).map(ar)), max_size=6))
def test_any_headers_give_a_verdict(trace: list[tuple[str, str]]) -> None:
    assert mta_verdict(mail(*trace), TRUSTED) in set(Verdict)
    assert mta_verdict(mail(*(ar(f"{MX};{v}") for _, v in trace)), TRUSTED) in set(Verdict)
