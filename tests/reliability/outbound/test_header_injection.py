"""Every header we send is one we meant: hostile subjects, addresses and Message-IDs sent over
real SMTP come back as replies whose header block at the relay is exactly ours."""

from __future__ import annotations

import email
import email.policy
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbmserv.config import Settings
from pbmserv.outbound.compose import build_message
from pbmserv.outbound.headers import safe_address, safe_text
from pbmserv.runtime.answer_subjects import reply_subject
from tests.support import Sink, settle, smtp_send

REPLY_HEADERS = [
    "From", "To", "Subject", "Date", "Message-ID", "Auto-Submitted", "X-Loop",
    "In-Reply-To", "References", "MIME-Version", "Content-Type", "Content-Transfer-Encoding",
]  # fmt: skip

SUBJECTS = [
    "=?utf-8?q?hello=0D=0ABcc:_evil@x.test=0D=0AX-Injected:_yes?=",
    "=?utf-8?b?aGVsbG8NCkJjYzogZXZpbEB4LnRlc3QNClgtSW5qZWN0ZWQ6IHllcw==?=",
    # An encoded-word that decodes to another encoded-word carrying CR LF.
    "=?utf-8?q?=3D=3Futf-8=3Fq=3Fhi=3D0D=3D0ABcc=3A_evil=40x.test=3F=3D?=",
    "=?utf-8?q?x=0D=0A=0D=0AThis_is_a_forged_body?=",
    "=?utf-8?q?x=0D=0AContent-Type:_text/html=0D=0A=0D=0A<b>forged</b>?=",
    "=?utf-8?q?x=0AX-Injected:_lf-only?=",
    "=?utf-8?q?x=0DX-Injected:_cr-only?=",
    "=?utf-8?q?x=C2=85X-Injected:_nel=E2=80=A8X-Injected:_ls=0CX-Injected:_ff?=",
    "=?utf-8?q?x=00X-Injected:_nul?=",
    "help" + "\r\n word word word" * 300,  # folded over 300 lines (under the 8 KB cap)
    "Re: =?iso-8859-1?q?caf=E9=0D=0ABcc:_evil@x.test?=",
]


def message_from(sender: str, subject: str, extra: str = "") -> bytes:
    return (
        f"From: {sender}\r\nTo: pbmserv@localhost\r\nSubject: {subject}\r\n"
        f"Message-ID: <m{abs(hash((sender, subject, extra)))}@test.example>\r\n{extra}\r\nhelp\r\n"
    ).encode()


def assert_only_our_headers(raw_names: list[str], to: str) -> None:
    assert sorted(raw_names) == sorted(REPLY_HEADERS), raw_names


@pytest.mark.db
def test_hostile_headers_never_reach_the_relay(server, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    cases = [("alice@example.org", subject, "") for subject in SUBJECTS]
    many = "\r\n ".join(f"<r{k}@x.test>" for k in range(300))
    cases += [
        ('"=?utf-8?q?Eve=0D=0ABcc:_evil@x.test?=" <eve@example.org>', "help", ""),
        ("mallory@example.org", "help", "In-Reply-To: <a@b>\r\n X-Injected: folded\r\n"),
        ("trent@example.org", "help", "References: <=?utf-8?q?a=0D=0AX:_y?=@x.test>\r\n"),
        ("oscar@example.org", "help", f"References: {many}\r\n"),
    ]
    for sender, subject, extra in cases:
        assert (
            smtp_send(server.port, message_from(sender, subject, extra), mail_from="a@b.test")[0]
            == 250
        )
    settle(engine, timeout=40)
    replies = sink.messages
    assert len(replies) == len(cases)
    for reply in replies:
        names = list(reply.message.keys())
        assert "Bcc" not in names and "X-Injected" not in names
        assert len(reply.recipients) == 1 and reply.recipients[0].endswith("@example.org")
        assert set(names) <= set(REPLY_HEADERS) and len(names) == len(set(names)), names
        assert str(reply.message["To"]) == reply.recipients[0]
        assert reply.message.get_content_type() == "text/plain"
        assert "forged" not in reply.body and "<b>" not in reply.body
        for name in names:
            value = str(reply.message[name])
            assert "\n" not in value and "\r" not in value, (name, value)


ADDRESSES = st.one_of(
    st.text(min_size=1, max_size=40),
    st.builds(
        lambda local, domain: f"{local}@{domain}",
        st.text(min_size=1, max_size=20),
        st.text(min_size=1, max_size=20),
    ),
    st.sampled_from(["alice@example.org", "jürgen@beispiel.de", "a.b+c@x-y.example"]),
)
SETTINGS = Settings(confirm_addresses=False, address="pbmserv@test.example")


@settings(max_examples=400, deadline=None)
@given(to=ADDRESSES, subject=st.text(max_size=300), reference=st.text(max_size=60))
def test_any_address_and_subject_give_exactly_our_headers_or_no_mail(
    to: str, subject: str, reference: str
) -> None:
    if safe_address(to) is None:
        with pytest.raises(ValueError):
            build_message(
                settings=SETTINGS, to=to, subject=subject, body="b", now=datetime.now(UTC),
                auto_submitted="auto-replied",
            )  # fmt: skip
        return
    built = build_message(
        settings=SETTINGS,
        to=to,
        subject=reply_subject(subject),
        body="body\n",
        now=datetime.now(UTC),
        auto_submitted="auto-replied",
        in_reply_to="<a@b.example>",
        references=[reference],
    )
    head = built.raw.split(b"\n\n", 1)[0].decode("utf-8")
    names = [line.split(":", 1)[0] for line in head.split("\n") if not line[:1].isspace()]
    assert set(names) <= set(REPLY_HEADERS) and len(names) == len(set(names)), names
    parsed = email.message_from_bytes(built.raw, policy=email.policy.default)
    assert str(parsed["To"]) == to
    assert str(parsed["Subject"]) == safe_text(reply_subject(subject), 500)
    assert parsed.get_content() == "body\n"
