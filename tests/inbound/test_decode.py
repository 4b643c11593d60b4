"""pbmserv.inbound.reading.decode: real MIME in, sender / subject / text / threading / loop
guard out."""

from __future__ import annotations

import base64
from email.message import EmailMessage

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbmserv.inbound.reading.decode import IncomingMail, command_lines, dedupe_key, parse_message

OWN = "pbmserv@localhost"
KEYWORDS = {"help", "games", "status", "signup", "password", "owlman", "chameleon", "buffalo"}


def is_command(line: str) -> bool:
    """A stand-in for the command parser: a known first word."""
    words = line.split()
    return bool(words) and words[0].lower() in KEYWORDS


def crlf(raw: bytes) -> bytes:
    """Messages travel with CRLF line ends; most literals below are written with LF."""
    return raw.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


def parse(raw: bytes, envelope_from: str | None = "alice@example.org") -> IncomingMail:
    return parse_message(raw, envelope_from, own_address=OWN)


def simple(body: bytes, headers: bytes = b"", subject: bytes = b"test") -> bytes:
    return crlf(
        b"From: Alice <alice@example.org>\n"
        b"To: pbmserv@localhost\n"
        b"Subject: " + subject + b"\n"
        b"Message-ID: <m1@example.org>\n" + headers + b"\n" + body
    )


# --- body: transfer encodings and charsets ------------------------------------------------


def test_quoted_printable_utf8_body() -> None:
    raw = simple(
        b"owlman move 17 j=C3=B6rg s=C3=A9cret d3-c4\na soft =\nbreak\n",
        b"Content-Type: text/plain; charset=UTF-8\nContent-Transfer-Encoding: quoted-printable\n",
    )
    mail = parse(raw)
    assert mail.text == "owlman move 17 jörg sécret d3-c4\na soft break\n"
    assert "\r" not in mail.text


def test_base64_body() -> None:
    encoded = base64.encodebytes("help owlman\nGrüße aus Köln\n".encode())
    raw = simple(
        encoded, b"Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64\n"
    )
    assert parse(raw).text == "help owlman\nGrüße aus Köln\n"


@pytest.mark.parametrize(
    ("charset", "text"),
    [
        ("iso-8859-1", "Grüße, Ærøskøbing"),
        ("windows-1252", "“smart quotes” cost 5 €"),
        ("koi8-r", "Привет, мир"),
        ("shift_jis", "こんにちは世界"),
        ("iso-8859-7", "Καλημέρα"),
        ("big5", "你好"),
        ("euc-kr", "안녕하세요"),
    ],
)
def test_8bit_bodies_in_many_charsets(charset: str, text: str) -> None:
    raw = simple(
        text.encode(charset) + b"\n",
        f"Content-Type: text/plain; charset={charset}\nContent-Transfer-Encoding: 8bit\n".encode(),
    )
    assert parse(raw).text == text + "\n"


def test_quoted_printable_koi8r_and_base64_shift_jis() -> None:
    qp = simple(
        b"=F0=D2=C9=D7=C5=D4\n",
        b'Content-Type: text/plain; charset="KOI8-R"\n'
        b"Content-Transfer-Encoding: quoted-printable\n",
    )
    assert parse(qp).text == "Привет\n"
    b64 = simple(
        base64.b64encode("日本語のメール".encode("shift_jis")),
        b"Content-Type: text/plain; charset=Shift_JIS\nContent-Transfer-Encoding: base64\n",
    )
    assert parse(b64).text == "日本語のメール"


def test_latin1_label_with_windows_1252_bytes() -> None:
    # Mailers label cp1252 text "iso-8859-1"; 0x80 is the euro sign there, as readers show it.
    raw = simple(b"price: 5 \x80\n", b"Content-Type: text/plain; charset=iso-8859-1\n")
    assert parse(raw).text == "price: 5 €\n"


@pytest.mark.parametrize("charset", ["koi8-r", "utf-8", "iso-8859-15", "shift_jis"])
def test_email_message_generated_bodies(charset: str) -> None:
    message = EmailMessage()
    message["From"] = "Борис <boris@example.ru>"
    message["To"] = OWN
    message["Subject"] = "Привет, mir"
    text = {"koi8-r": "Ход: d3-c4", "shift_jis": "手番です"}.get(charset, "Zug: d3-c4 €")
    message.set_content(text + "\n", charset=charset)
    mail = parse(message.as_bytes())
    assert mail.text == text + "\n"
    assert mail.subject == "Привет, mir"
    assert mail.sender == "boris@example.ru"
    assert mail.sender_display == "Борис <boris@example.ru>"


def test_text_part_without_charset() -> None:
    utf8 = simple("résigner".encode() + b"\n", b"Content-Type: text/plain\n")
    assert parse(utf8).text == "résigner\n"
    latin = simple("résigner".encode("latin-1") + b"\n", b"Content-Type: text/plain\n")
    assert parse(latin).text == "résigner\n"
    no_content_type = simple(b"help\n")
    assert parse(no_content_type).text == "help\n"


@pytest.mark.parametrize("charset", ["x-unknown", "utf-9", "unknown-8bit", "base64", "zlib", ""])
def test_bogus_charset_falls_back_to_utf8_then_cp1252(charset: str) -> None:
    header = f'Content-Type: text/plain; charset="{charset}"\n'.encode()
    assert parse(simple("Zürich ♞\n".encode(), header)).text == "Zürich ♞\n"
    assert parse(simple("Zürich\n".encode("cp1252"), header)).text == "Zürich\n"


def test_undecodable_bytes_are_replaced() -> None:
    raw = simple(b"help \xff\xfe owlman\n", b"Content-Type: text/plain; charset=utf-8\n")
    assert parse(raw).text == "help \ufffd\ufffd owlman\n"


def test_broken_base64_decodes_what_it_can() -> None:
    raw = simple(
        b"b3dsbWFu!!!IG1vdmU\n*&^%\n",
        b"Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64\n",
    )
    assert parse(raw).text == "owlman move"
    truncated = simple(
        b"aGVscCBvd2xtYW4K=aGk\n", b"Content-Type: text/plain\nContent-Transfer-Encoding: BASE64 \n"
    )
    assert parse(truncated).text == "help owlman\nhi"


def test_broken_quoted_printable_keeps_the_text() -> None:
    raw = simple(
        b"help =ZZ owlman=\n",
        b"Content-Type: text/plain\nContent-Transfer-Encoding: quoted-printable\n",
    )
    assert parse(raw).text == "help =ZZ owlman"


def test_crlf_and_lone_cr_normalised() -> None:
    raw = b"From: a@example.org\r\nSubject: x\r\n\r\nhelp\r\ngames\rstatus bob\r\n"
    assert parse(raw).text == "help\ngames\nstatus bob\n"


def test_format_flowed_rejoins_a_wrapped_command() -> None:
    raw = simple(
        b"owlman move 17 alice secret \nd3-c4\n> quoted \n> more\n--=20\nAlice\n",
        b"Content-Type: text/plain; charset=utf-8; format=flowed\n"
        b"Content-Transfer-Encoding: quoted-printable\n",
    )
    assert parse(raw).text.splitlines() == [
        "owlman move 17 alice secret d3-c4",
        "> quoted more",
        "-- ",
        "Alice",
    ]
    delsp = simple(
        b"owlman move 17 alice sec \nret d3-c4\n",
        b"Content-Type: text/plain; format=flowed; delsp=yes\n",
    )
    assert parse(delsp).text.splitlines() == ["owlman move 17 alice secret d3-c4"]


# --- body: MIME structure -------------------------------------------------------------------

ALTERNATIVE = crlf(
    b"""From: Alice <alice@example.org>
Subject:
MIME-Version: 1.0
Content-Type: multipart/alternative; boundary="ALT"

--ALT
Content-Type: text/html; charset=utf-8

<p>html version</p>
--ALT
Content-Type: text/plain; charset=utf-8

plain version
--ALT--
"""
)


def test_alternative_prefers_plain_text_wherever_it_is() -> None:
    # the line end before a boundary belongs to the boundary (RFC 2046)
    assert parse(ALTERNATIVE).text == "plain version"


def test_alternative_with_empty_plain_uses_html() -> None:
    raw = ALTERNATIVE.replace(b"plain version\r\n", b"\r\n")
    assert parse(raw).text == "html version"


def test_html_only_message_is_reduced_to_text() -> None:
    raw = simple(
        b"""<!DOCTYPE html><html><head><title>Title</title>
<style>p { color: red; }</style><script>if (a<b) { alert("x"); }</script></head>
<body><div>help <b>owl<i>man</i></b></div><p>games<br>status&nbsp;bob</p>
<ul><li>one &amp; two</li><li>caf&eacute; &#8364; &lt;3&gt;</li></ul>
<table><tr><td>a</td><td>b</td></tr><tr><td>c</td></tr></table>
<!-- a comment --><p>x &lt; y<br/>end</p></body></html>
""",
        b"Content-Type: text/html; charset=utf-8\n",
    )
    assert parse(raw).text.splitlines() == [
        "help owlman",
        "games",
        "status bob",
        "",
        "one & two",
        "café € <3>",
        "a b",
        "c",
        "x < y",
        "end",
    ]


def test_html_blockquote_and_rule_become_reply_markers() -> None:
    raw = simple(
        b"<div>help</div><div>On Monday Bob wrote:</div><blockquote>owlman board 17<br>"
        b"<blockquote>older</blockquote></blockquote><hr><div>From: Bob</div>",
        b"Content-Type: text/html\n",
    )
    assert parse(raw).text.splitlines() == [
        "help",
        "On Monday Bob wrote:",
        "> owlman board 17",
        "> > older",
        "________________________________",
        "From: Bob",
    ]


def test_html_unclosed_head_and_pre() -> None:
    raw = simple(
        b"<html><head><title>t</title><p>visible<pre>  a   b\n  c</pre>",
        b"Content-Type: text/html\n",
    )
    assert parse(raw).text.splitlines() == ["visible", "  a   b", "  c"]


def test_html_charset_from_meta_tag() -> None:
    raw = simple(
        b'<html><head><meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">'
        b"</head><body>Gr\xfc\xdfe</body></html>",
        b"Content-Type: text/html\n",
    )
    assert parse(raw).text == "Grüße"


MIXED = crlf(
    b"""From: Alice <alice@example.org>
Subject: Re: owlman board 17: your move
Content-Type: multipart/mixed; boundary="MIX"

preamble is not text
--MIX
Content-Type: text/plain; name="notes.txt"
Content-Disposition: attachment; filename="notes.txt"

attached text, not a command
--MIX
Content-Type: multipart/alternative; boundary="ALT"

--ALT
Content-Type: text/plain; charset=iso-8859-1
Content-Transfer-Encoding: quoted-printable

owlman move 17 alice secret d3-c4
chat 17 alice secret S=FCper
--ALT
Content-Type: text/html; charset=utf-8

<p>owlman move 17 alice secret d3-c4</p>
--ALT--
--MIX
Content-Type: image/png
Content-Transfer-Encoding: base64

iVBORw0KGgo=
--MIX
Content-Type: text/plain

second text part
--MIX--
epilogue
"""
)


def test_mixed_takes_first_text_part_skipping_attachments() -> None:
    assert parse(MIXED).text == "owlman move 17 alice secret d3-c4\nchat 17 alice secret Süper"


@pytest.mark.parametrize(
    ("content_type", "body", "expected"),
    [
        pytest.param(
            b"multipart/mixed; boundary=B",
            b"--B\nContent-Type: application/pdf\n\n%PDF\n"
            b"--B\nContent-Type: text/plain\nContent-Disposition: attachment\n\nhelp\n--B--\n",
            "",
            id="only-attachments",
        ),
        pytest.param(
            b"multipart/mixed; boundary=B",
            b"--B\nContent-Type: message/rfc822\n\nFrom: b@example.org\nSubject: x\n\nresign\n"
            b"--B\nContent-Type: text/plain\n\nhelp\n--B--\n",
            "help",
            id="forwarded-message-is-not-the-senders-text",
        ),
        pytest.param(
            b"multipart/alternative; boundary=B",
            b"--B\nContent-Type: text/plain\n\nhelp owlman\n"
            b"--B\nContent-Type: text/html\n\n<p>help owlman</p>",
            "help owlman",
            id="missing-closing-boundary",
        ),
        pytest.param(
            b"multipart/mixed",
            b"help\ngames\n",
            "help\ngames\n",
            id="no-boundary-read-as-text",
        ),
        pytest.param(
            b"multipart/mixed; boundary=B",
            b"--B\nContent-Ty",
            "Content-Ty",  # the parser reads the cut-off header line as the part's text
            id="truncated-part-headers",
        ),
    ],
)
def test_odd_multiparts(content_type: bytes, body: bytes, expected: str) -> None:
    raw = crlf(b"From: a@example.org\nContent-Type: " + content_type + b"\n\n" + body)
    mail = parse(raw)
    assert mail.sender == "a@example.org"
    assert mail.text == expected


def test_deeply_nested_multiparts_do_not_raise() -> None:
    # How long this takes is measured by bench/security/decode_hostile.py, not asserted here.
    head, tail = b"", b""
    for level in range(1500):
        head += b"Content-Type: multipart/mixed; boundary=b%d\n\n--b%d\n" % (level, level)
        tail = b"\n--b%d--\n" % level + tail
    raw = b"From: a@example.org\nSubject: x\n" + head + b"Content-Type: text/plain\n\nhelp\n" + tail
    mail = parse(raw + b"x\n" * 100_000)
    assert mail.sender == "a@example.org"
    assert mail.subject == "x"
    assert "help" in mail.text  # read as one text, MIME structure and all


@pytest.mark.parametrize("markup", [b"<a ", b"<a b='", b"<!--", b"</", b"<![", b"<script>"])
def test_html_scanner_survives_hostile_markup(markup: bytes) -> None:
    # html.parser needs minutes for these; bench/security/decode_hostile.py prints both times.
    raw = simple(markup * 150_000, b"Content-Type: text/html\n")
    mail = parse(raw)
    assert mail.sender is not None and "<" not in mail.text[:10]


def test_message_with_only_headers() -> None:
    mail = parse(b"From: Bob <bob@example.org>\r\nSubject: help\r\n", envelope_from=None)
    assert (mail.sender, mail.subject, mail.text, mail.auto_reason) == (
        "bob@example.org",
        "help",
        "",
        None,
    )


def test_message_without_headers_is_all_body() -> None:
    mail = parse(b"help\ngames\n", envelope_from=None)
    assert mail.text == "help\ngames\n"
    assert mail.sender is None
    assert mail.auto_reason == "no sender address"


def test_empty_message() -> None:
    assert parse_message(b"") == IncomingMail(
        sender=None,
        sender_display="",
        subject="",
        text="",
        message_id=None,
        references=(),
        auto_reason="no sender address",
    )
    assert parse_message(b"", "bob@example.org").sender == "bob@example.org"


# --- headers ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (b"=?UTF-8?B?w4RuZGVydW5n?=", "Änderung"),
        (b"=?iso-8859-1?q?R=E9sign=E9_le_jeu?=", "Résigné le jeu"),
        (b"=?utf-8?q?caf=C3=A9?= =?koi8-r?b?8NLJ18XU?= plain", "caféПривет plain"),
        (b"plain =?utf-8?q?mixed?= text", "plain mixed text"),
        (b"=?utf-8?b?5pel?= =?utf-8?b?5pys?=", "日本"),
        # one character split across two words, as some mailers do
        (b"=?utf-8?b?4pk=?= =?utf-8?b?ng==?=", "♞"),
        (b"=?utf-8*de?q?Gr=C3=BC=C3=9Fe?=", "Grüße"),
        (b"=?x-unknown?q?caf=C3=A9?=", "café"),
        (b"=?shift_jis?b?grGC8YLJgr+CzQ==?=", "こんにちは"),
        (b"=?gb2312?b?xOO6ww==?=", "你好"),
        (b"=?utf-8?x?not-an-encoding?=", "=?utf-8?x?not-an-encoding?="),
        (b"  owlman   move\n\t17   alice  ", "owlman move 17 alice"),
        (b"=?utf-8?q?tab=09and=0Anewline?=", "tab and newline"),
        (b"raw utf-8 \xc3\xa4\xc3\xb6", "raw utf-8 äö"),
        (b"raw latin-1 \xe4\xf6", "raw latin-1 äö"),
    ],
)
def test_subject_decoding(header: bytes, expected: str) -> None:
    assert parse(simple(b"", subject=header)).subject == expected


def test_eight_bit_raw_headers_everywhere() -> None:
    raw = (
        b"From: J\xf6rg M\xfcller <joerg@example.de>\r\n"
        b"Subject: Z\xc3\xbcge\r\n"
        b"X-Weird: \xff\xfe\x00\r\n"
        b"Content-Type: text/plain; charset=\xff\xfe\r\n\r\nhelp\r\n"
    )
    mail = parse(raw)
    assert mail.sender == "joerg@example.de"
    assert mail.sender_display == "Jörg Müller <joerg@example.de>"
    assert mail.subject == "Züge"
    assert mail.text == "help\r\n".replace("\r", "")


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (b"Alice <Alice.Smith@Example.ORG>", "Alice.Smith@example.org"),
        (b"alice@example.org (Alice)", "alice@example.org"),
        (b'"Smith, Alice" <alice@example.org>', "alice@example.org"),
        (b"Smith, Alice <alice@example.org>", "alice@example.org"),
        (b"=?utf-8?q?J=C3=B6rg?= <joerg@example.de>", "joerg@example.de"),
        (b"<bob@localhost>", "bob@localhost"),
        (b"bob@[192.0.2.1]", "bob@[192.0.2.1]"),
    ],
)
def test_sender_is_the_bare_from_address(header: bytes, expected: str) -> None:
    raw = crlf(b"From: " + header + b"\nSubject: help\n\n")
    assert parse(raw, envelope_from="other@example.net").sender == expected


@pytest.mark.parametrize("header", [None, b"", b"garbage", b"Alice <>", b"<@>", b"a b@c d"])
def test_sender_falls_back_to_envelope(header: bytes | None) -> None:
    raw = crlf((b"From: " + header + b"\n" if header is not None else b"") + b"Subject: help\n\n")
    assert parse(raw, envelope_from="<Carol@Example.NET>").sender == "Carol@example.net"
    mail = parse(raw, envelope_from=None)
    assert mail.sender is None
    assert mail.auto_reason == "no sender address"


def test_sender_display() -> None:
    assert parse(simple(b"")).sender_display == "Alice <alice@example.org>"
    assert parse(b"Subject: x\n\n").sender_display == ""


def test_message_id_and_references() -> None:
    raw = simple(
        b"",
        b"In-Reply-To: <p3@example.org> (Bob's message of Monday)\n"
        b"References: <p1@example.org>\n <p2@example.org>\n\t<p3@example.org>\n",
    )
    mail = parse(raw)
    assert mail.message_id == "<m1@example.org>"
    assert mail.references == ("<p3@example.org>", "<p2@example.org>", "<p1@example.org>")


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (b"Message-ID: <a@b>", "<a@b>"),
        (b"Message-Id:   <a@b> junk", "<a@b>"),
        (b"message-id: a@b", "<a@b>"),
        (b"Message-ID: <very-long-\n  id@b>", "<very-long-id@b>"),
        (b"Message-ID:", None),
        (b"X-Other: <a@b>", None),
    ],
)
def test_message_id_forms(header: bytes, expected: str | None) -> None:
    assert parse(crlf(b"From: a@example.org\n" + header + b"\n\nhelp\n")).message_id == expected


# --- auto_reason ------------------------------------------------------------------------------


def auto(
    extra: bytes = b"",
    envelope_from: str | None = "alice@example.org",
    sender: bytes = b"Alice <alice@example.org>",
) -> str | None:
    """The auto_reason of a small message with ``extra`` headers."""
    raw = crlf(b"From: " + sender + b"\nSubject: help\n" + extra + b"\nhelp\n")
    return parse(raw, envelope_from).auto_reason


def test_normal_message_is_answered() -> None:
    assert auto() is None
    assert auto(envelope_from=None) is None
    assert auto(b"Return-Path: <alice@example.org>\n", envelope_from=None) is None


@pytest.mark.parametrize("envelope", ["", "<>", " < > "])
def test_null_envelope_sender_is_not_answered(envelope: str) -> None:
    assert auto(envelope_from=envelope) == "null return path"


def test_null_return_path_header_when_envelope_unknown() -> None:
    assert auto(b"Return-Path: <>\n", envelope_from=None) == "null return path (Return-Path: <>)"
    # the envelope is the truth when we have it
    assert auto(b"Return-Path: <>\n", envelope_from="alice@example.org") is None


@pytest.mark.parametrize(
    ("sender", "envelope"),
    [
        (b"MAILER-DAEMON@mx.example.org", "alice@example.org"),
        (b"Mail Delivery System <Mailer-Daemon@example.org>", "alice@example.org"),
        (b"Mail Delivery Subsystem <MAILER-DAEMON>", "alice@example.org"),
        (b"postmaster@example.org", "alice@example.org"),
        (b"Postmaster <POSTMASTER@example.org>", "alice@example.org"),
        (b"Alice <alice@example.org>", "MAILER-DAEMON@example.org"),
    ],
)
def test_mailer_daemon_and_postmaster_are_not_answered(sender: bytes, envelope: str) -> None:
    reason = auto(envelope_from=envelope, sender=sender)
    assert reason is not None
    assert reason.startswith("from ")


@pytest.mark.parametrize(
    "value",
    [b"auto-replied", b"auto-generated", b"Auto-Replied; owner-email=x@y", b"auto-notified"],
)
def test_auto_submitted_is_not_answered(value: bytes) -> None:
    reason = auto(b"Auto-Submitted: " + value + b"\n")
    assert reason is not None
    assert reason.startswith("Auto-Submitted:")


@pytest.mark.parametrize("value", [b"no", b"No", b"no (a person wrote this)", b" no "])
def test_auto_submitted_no_is_answered(value: bytes) -> None:
    assert auto(b"Auto-Submitted: " + value + b"\n") is None


@pytest.mark.parametrize("value", [b"bulk", b"JUNK", b"list", b"List (from a list)", b"auto_reply"])
def test_precedence_bulk_junk_list_is_not_answered(value: bytes) -> None:
    reason = auto(b"Precedence: " + value + b"\n")
    assert reason is not None
    assert reason.startswith("Precedence:")


def test_other_precedence_is_answered() -> None:
    assert auto(b"Precedence: first-class\n") is None


def test_x_loop_with_our_address_is_not_answered() -> None:
    assert auto(b"X-Loop: PBMServ@localhost\n") == "X-Loop: pbmserv@localhost"
    assert auto(b"X-Loop: somebody-else@example.org\n") is None
    raw = crlf(b"From: a@example.org\nX-Loop: pbmserv@localhost\n\nhelp\n")
    assert parse_message(raw, "a@example.org").auto_reason is None  # own address not given
    named = parse_message(raw, "a@example.org", own_address="PBM server <pbmserv@localhost>")
    assert named.auto_reason == "X-Loop: pbmserv@localhost"


def test_mail_from_our_own_address_is_not_answered() -> None:
    assert auto(sender=b"PBM <PBMserv@LOCALHOST>") == "from our own address"


@pytest.mark.parametrize("header", [b"X-Autoreply: yes", b"X-Autorespond: vacation"])
def test_autoresponder_markers_are_not_answered(header: bytes) -> None:
    reason = auto(header + b"\n")
    assert reason is not None
    assert reason.startswith("auto-responder")


def test_outlook_auto_response_suppress_is_ordinary_mail() -> None:
    assert auto(b"X-Auto-Response-Suppress: All\n") is None


def test_delivery_status_notification_is_not_answered() -> None:
    raw = crlf(
        b"""From: Bob <bob@example.org>
Subject: Undelivered Mail Returned to Sender
Content-Type: multipart/report; report-type=delivery-status; boundary="R"

--R
Content-Type: text/plain

help
--R
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.example.org
Final-Recipient: rfc822; x@example.org
Action: failed
Status: 5.1.1
--R--
"""
    )
    mail = parse(raw, envelope_from="bob@example.org")
    assert mail.auto_reason == "delivery report (multipart/report)"
    assert mail.text == "help"


# --- dedupe_key -------------------------------------------------------------------------------

BARE = b"""From: Alice <alice@example.org>
To: pbmserv@localhost
Subject: owlman move 17 alice secret d3-c4
Date: Mon, 1 Jan 2024 10:00:00 +0000

hello
"""


def delivered(raw: bytes, hop: str) -> bytes:
    trace = (
        f"Return-Path: <alice-{hop}@example.org>\n"
        f"Received: from mx{hop}.example.net by mx.example.org; Mon, 1 Jan 2024 10:0{hop}:00\n"
        f"Received: from localhost\n  by relay{hop}\n"
        f"Delivered-To: pbmserv-{hop}@localhost\nX-Original-To: pbm{hop}@localhost\n"
        f"DKIM-Signature: v=1; a=rsa-sha256; b={hop}abc\n"
        f"ARC-Seal: i=1; cv=none; b={hop}\nAuthentication-Results: mx{hop}; spf=pass\n"
        f"X-Spam-Score: {hop}.0\n"
    ).encode()
    return trace + raw


def test_dedupe_key_ignores_trace_headers_without_message_id() -> None:
    first = dedupe_key(delivered(BARE, "1"))
    assert first.startswith("sha256:")
    assert dedupe_key(delivered(BARE, "2")) == first
    assert dedupe_key(crlf(delivered(BARE, "3"))) == first  # CRLF vs LF
    assert dedupe_key(b"From alice@example.org Mon Jan  1 10:00:00 2024\n" + BARE) == first
    assert dedupe_key(BARE.replace(b"hello\n", b"hello   \n\n\n")) == first
    folded = BARE.replace(b"Subject: owlman move 17", b"Subject: owlman\n move 17")
    assert dedupe_key(folded) == first


def test_dedupe_key_differs_for_different_messages() -> None:
    first = dedupe_key(BARE)
    assert dedupe_key(BARE.replace(b"hello", b"hallo")) != first
    assert dedupe_key(BARE.replace(b"d3-c4", b"d3-e4")) != first
    assert dedupe_key(BARE.replace(b"10:00:00", b"10:00:01")) != first


def test_dedupe_key_uses_message_id_and_sender() -> None:
    raw = BARE.replace(b"Date:", b"Message-ID: <abc@example.org>\nDate:")
    key = dedupe_key(raw)
    assert key == "mid:<abc@example.org>|alice@example.org"
    assert dedupe_key(delivered(raw, "5")) == key
    assert dedupe_key(raw.replace(b"hello", b"changed in transit")) == key
    assert dedupe_key(raw.replace(b"alice@example.org", b"mallory@example.net")) != key
    assert dedupe_key(raw.replace(b"abc@", b"abd@")) != key


def test_dedupe_key_hashes_a_long_message_id() -> None:
    raw = BARE.replace(b"Date:", b"Message-ID: <" + b"x" * 600 + b"@example.org>\nDate:")
    key = dedupe_key(raw)
    assert len(key) <= 250
    assert key.startswith("mid-sha256:")
    assert dedupe_key(delivered(raw, "1")) == key


def test_dedupe_key_of_empty_and_headerless_messages() -> None:
    assert dedupe_key(b"").startswith("sha256:")
    assert dedupe_key(b"help\n") != dedupe_key(b"games\n")


# --- command_lines ------------------------------------------------------------------------------


def cmds(subject: str, text: str, max_lines: int = 30) -> list[str]:
    return command_lines(subject, text, is_command, max_lines)


def test_subject_is_the_command() -> None:
    assert cmds("  owlman   board 17 ", "games\nhelp\n") == ["owlman board 17"]


def test_empty_subject_uses_body_lines() -> None:
    assert cmds("", "  help  \n\n\t\ngames\r\n  status bob\n") == ["help", "games", "status bob"]


@pytest.mark.parametrize(
    "subject",
    [
        "Re: owlman board 17: your move",
        "RE: owlman board 17: your move",
        "re:owlman board 17",
        "Aw: owlman board 17",
        "AW: owlman board 17",
        "Sv: owlman board 17",
        "Antw: owlman board 17",
        "Fwd: owlman board 17",
        "FW: owlman board 17",
        "Re: Re: Aw: owlman board 17",
        "Re[2]: owlman board 17",
        "Re:",
    ],
)
def test_reply_subject_uses_body(subject: str) -> None:
    assert cmds(subject, "owlman move 17 alice secret d3-c4\n") == [
        "owlman move 17 alice secret d3-c4"
    ]


def test_reply_with_empty_body_has_no_commands() -> None:
    assert cmds("Re: owlman board 17: your move", "\n\n") == []


@pytest.mark.parametrize("separator", ["-- ", "--", "  --  "])
def test_signature_separator_ends_commands(separator: str) -> None:
    assert cmds("", f"help\n{separator}\nAlice\ngames\n") == ["help"]


def test_quoted_lines_are_skipped_and_commands_below_them_count() -> None:
    assert cmds("", "help\n> owlman move 17 bob pw a8-b7\ngames\n") == ["help", "games"]
    assert cmds("", "help\n   >quoted\ngames\n") == ["help", "games"]


BOARD_MAIL_QUOTED = (
    "> owlman board 17: your move\n>\n> It is your move. Reply with:\n"
    ">     owlman move 17 alice PASSWORD MOVE\n> --\n> pbmserv at pbmserv@localhost\n"
)
MOVE = "owlman move 17 alice secret d3-c4"


@pytest.mark.parametrize(
    ("client", "body"),
    [
        # Gmail and Outlook.com, top-posting: the move, a sign-off, then the quote.
        (
            "gmail top",
            f"{MOVE}\n\nThanks,\nAlice\n\nOn Mon, 1 Jan 2024 at 10:00, pbmserv "
            f"<pbmserv@localhost> wrote:\n\n{BOARD_MAIL_QUOTED}",
        ),
        # mutt and Thunderbird, bottom-posting: the quote first, then the move and a sign-off.
        (
            "mutt bottom",
            f"On Mon, Jan 01, 2024 at 10:00:00AM +0000, pbmserv wrote:\n"
            f"{BOARD_MAIL_QUOTED}\n{MOVE}\n\nCheers,\nAlice\n",
        ),
        (
            "thunderbird bottom",
            f"On 1/1/24 10:00, pbmserv wrote:\n{BOARD_MAIL_QUOTED}\n"
            f"{MOVE}\n-- \nAlice Liddell\nowlman move 99 x y z\n",
        ),
        # Apple Mail, inline: the move between two quoted parts.
        (
            "apple inline",
            f"> On 1 Jan 2024, at 10:00, pbmserv <pbmserv@localhost> wrote:\n"
            f">\n> owlman board 17: your move\n\n{MOVE}\n\n"
            f"> --\n> pbmserv at pbmserv@localhost\n\nSent from my iPhone\n",
        ),
        # Outlook, top-posting: the original below its header block is not quoted with ">".
        (
            "outlook top",
            f"Hi,\n{MOVE}\nRegards\n\nFrom: pbmserv <pbmserv@localhost>\n"
            "Sent: Monday, January 1, 2024 10:00 AM\nTo: Alice\n"
            "Subject: owlman board 17: your move\n\nIt is your move. Reply with:\n"
            "    owlman move 17 alice PASSWORD MOVE\n",
        ),
        # German Gmail, a greeting above and a sign-off below.
        (
            "german",
            f"Hallo,\n\n{MOVE}\n\nGrüße\nAlice\n\nAm Mo., 1. Jan. 2024 um 10:00 "
            f"Uhr schrieb pbmserv <pbmserv@localhost>:\n{BOARD_MAIL_QUOTED}",
        ),
    ],
)
def test_replies_as_mail_programs_write_them_give_just_the_move(client: str, body: str) -> None:
    assert cmds("Re: owlman board 17: your move", body) == [MOVE], client


def test_with_no_command_the_lines_seen_are_given_for_the_answer() -> None:
    body = "Hello,\ncan I play?\n\nOn Mon, pbmserv wrote:\n> help\n"
    assert cmds("Re: help", body) == ["Hello,", "can I play?"]
    assert cmds("", "\n".join(f"line {i}" for i in range(50)), max_lines=3) == [
        "line 0",
        "line 1",
        "line 2",
    ]


@pytest.mark.parametrize(
    "attribution",
    [
        "On Mon, 1 Jan 2024 at 10:00, pbmserv <pbmserv@localhost> wrote:",
        "Am 01.01.2024 um 10:00 schrieb pbmserv <pbmserv@localhost>:",
        "Am 01.01.2024 um 10:00 schrieb pbmserv:",
        "Le lun. 1 janv. 2024 à 10:00, pbmserv <pbmserv@localhost> a écrit :",
    ],
)
def test_attribution_before_quote_ends_commands(attribution: str) -> None:
    text = f"owlman move 17 alice secret d3-c4\n\n{attribution}\n\n> owlman board 17\n> games\n"
    assert cmds("Re: owlman board 17", text) == ["owlman move 17 alice secret d3-c4"]
    # an attribution with nothing after it (the quote was cut) ends the commands as well
    assert cmds("", f"help\n{attribution}\n") == ["help"]


def test_wrapped_attribution_is_dropped_whole() -> None:
    text = (
        "owlman move 17 alice secret d3-c4\n\n"
        "On Mon, 1 Jan 2024 at 10:00, pbmserv board server <\n"
        "pbmserv@localhost> wrote:\n\n> owlman board 17\n"
    )
    assert cmds("", text) == ["owlman move 17 alice secret d3-c4"]


def test_wrote_line_not_introducing_a_quote_is_an_ordinary_line() -> None:
    text = "help\nchameleon chat 3 alice pw this is what I wrote:\ngames\n"
    assert cmds("", text) == ["help", "chameleon chat 3 alice pw this is what I wrote:", "games"]


@pytest.mark.parametrize(
    "separator",
    [
        "-----Original Message-----",
        "----- Original Message -----",
        "________________________________",
        "---------- Forwarded message ---------",
        "-----BEGIN PGP SIGNATURE-----",
        "----------",
        "Begin forwarded message:",
        "Sent from my iPhone",
        "Get Outlook for Android",
    ],
)
def test_outlook_and_forward_separators_end_commands(separator: str) -> None:
    text = f"help\ngames\n\n{separator}\nFrom: pbmserv\nowlman board 17\n"
    assert cmds("RE: owlman board 17", text) == ["help", "games"]


def test_outlook_header_block_ends_commands() -> None:
    text = "help\n\nFrom: pbmserv <pbmserv@localhost>\nSent: Monday\nTo: Alice\nSubject: x\n\ngames"
    assert cmds("", text) == ["help"]
    german = "help\nVon: pbmserv\nGesendet: Montag\nAn: Alice\ngames"
    assert cmds("", german) == ["help"]


def test_pgp_signed_body() -> None:
    text = (
        "-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\n"
        "owlman move 17 alice secret d3-c4\n- --not a separator\nhelp\n"
        "-----BEGIN PGP SIGNATURE-----\n\niQEzBAEBCAAdFiEE\n-----END PGP SIGNATURE-----\n"
    )
    # The dash-escaped line is no separator: the command after it counts.
    assert cmds("", text) == ["owlman move 17 alice secret d3-c4", "help"]


def test_max_lines() -> None:
    text = "\n".join(f"status user{n}" for n in range(50))
    assert cmds("", text) == [f"status user{n}" for n in range(30)]
    assert cmds("", text, max_lines=3) == ["status user0", "status user1", "status user2"]
    assert cmds("help", text, max_lines=0) == []


def test_non_command_subject_gives_way_to_commands_in_body() -> None:
    # The greeting is no command: with commands in the body it is left out.
    assert cmds("hello", "Hi server,\nhelp\ngames\n") == ["help", "games"]


def test_non_command_subject_without_body_commands_is_returned() -> None:
    assert cmds("hello there", "just saying hi\n") == ["hello there"]
    assert cmds("hello there", "") == ["hello there"]
    # a command inside the quoted part does not count
    assert cmds("hello", "hi\n> help\n") == ["hello"]


def test_everything_empty() -> None:
    assert cmds("", "") == []
    assert cmds("   ", " \n\n ") == []


def test_invisible_characters_do_not_break_commands() -> None:
    assert cmds("", "\ufeffhelp\u200b\n") == ["help"]


# --- whole messages ---------------------------------------------------------------------------


def test_gmail_style_reply_end_to_end() -> None:
    raw = crlf(
        b"""From: Alice <alice@example.org>
To: pbmserv@localhost
Subject: Re: owlman board 17: your move
Message-ID: <reply@mail.example.org>
In-Reply-To: <board17@localhost>
References: <board17@localhost>
Content-Type: multipart/alternative; boundary="000"

--000
Content-Type: text/plain; charset="UTF-8"

owlman move 17 alice secret d3-c4

On Mon, Jan 1, 2024 at 10:00 AM <pbmserv@localhost> wrote:

> owlman board 17: your move
> owlman move 17 alice PASSWORD MOVE
>

--000
Content-Type: text/html; charset="UTF-8"

<div dir="ltr">owlman move 17 alice secret d3-c4</div>
--000--
"""
    )
    mail = parse(raw)
    assert mail.auto_reason is None
    assert mail.references == ("<board17@localhost>",)
    assert command_lines(mail.subject, mail.text, is_command) == [
        "owlman move 17 alice secret d3-c4"
    ]


def test_html_only_reply_stops_at_the_quote() -> None:
    raw = simple(
        b'<div>owlman move 17 alice secret d3-c4</div><div class="gmail_quote">'
        b"<div>On Mon, Jan 1, 2024 pbmserv &lt;pbmserv@localhost&gt; wrote:<br></div>"
        b"<blockquote>owlman move 17 alice PASSWORD MOVE</blockquote></div>",
        b"Content-Type: text/html; charset=utf-8\n",
        subject=b"Re: owlman board 17",
    )
    mail = parse(raw)
    assert command_lines(mail.subject, mail.text, is_command) == [
        "owlman move 17 alice secret d3-c4"
    ]


def test_outlook_html_reply_stops_at_the_rule() -> None:
    raw = simple(
        b"<p>help</p><hr><div><b>From:</b> pbmserv</div><div>games</div>",
        b"Content-Type: text/html\n",
        subject=b"AW: owlman board 17",
    )
    mail = parse(raw)
    assert command_lines(mail.subject, mail.text, is_command) == ["help"]


# --- never raise --------------------------------------------------------------------------------

CORPUS = [ALTERNATIVE, MIXED, BARE, simple(b"help\n"), delivered(BARE, "1")]


def check_invariants(mail: IncomingMail) -> None:
    assert isinstance(mail, IncomingMail)
    assert mail.sender is None or "@" in mail.sender
    assert "\n" not in mail.subject
    assert "\r" not in mail.subject
    assert "\r" not in mail.text
    assert mail.message_id is None or (mail.message_id[0], mail.message_id[-1]) == ("<", ">")
    assert all(ref.startswith("<") for ref in mail.references)
    assert mail.sender is not None or mail.auto_reason is not None


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(raw=st.binary(max_size=4000), envelope=st.none() | st.text(max_size=40))
def test_parse_message_never_raises_on_arbitrary_bytes(raw: bytes, envelope: str | None) -> None:
    check_invariants(parse_message(raw, envelope, own_address=OWN))
    key = dedupe_key(raw)
    assert len(key) <= 250
    assert key == dedupe_key(raw)


MIME_BITS = [
    b"\r\n",
    b"\n\n",
    b"--MIX",
    b"--ALT--",
    b"=?utf-8?b?",
    b"?=",
    b"=?x-unknown?q?=FF",
    b"Content-Type: multipart/mixed; boundary=MIX\r\n",
    b"Content-Type: text/html; charset=utf-9\r\n",
    b"Content-Transfer-Encoding: base64\r\n",
    b"Content-Transfer-Encoding: quoted-printable\r\n",
    b"charset=",
    b"<blockquote>",
    b"<script>",
    b"<!--",
    b"&#x",
    b"=\r\n",
    b"\xff\xfe\x80",
    b":",
    b"<",
    b">",
    b"\x00",
]


@st.composite
def mutated_messages(draw: st.DrawFn) -> bytes:
    raw = bytearray(draw(st.sampled_from(CORPUS)))
    for _ in range(draw(st.integers(1, 8))):
        where = draw(st.integers(0, len(raw)))
        action = draw(st.sampled_from(["insert", "delete", "replace", "truncate", "duplicate"]))
        if action == "insert":
            raw[where:where] = draw(st.sampled_from(MIME_BITS) | st.binary(max_size=8))
        elif action == "delete":
            del raw[where : where + draw(st.integers(1, 40))]
        elif action == "replace" and where < len(raw):
            raw[where] = draw(st.integers(0, 255))
        elif action == "truncate":
            del raw[where:]
        else:
            raw[where:where] = raw[where : where + draw(st.integers(1, 60))]
    return bytes(raw)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(raw=mutated_messages())
def test_parse_message_never_raises_on_mutated_messages(raw: bytes) -> None:
    check_invariants(parse_message(raw, None, own_address=OWN))
    assert len(dedupe_key(raw)) <= 250


@settings(max_examples=300, deadline=None)
@given(
    subject=st.text(max_size=60),
    text=st.text(alphabet=st.sampled_from(list("ab >-_:\n\r\t ")) | st.characters(), max_size=400),
    max_lines=st.integers(0, 40),
)
def test_command_lines_properties(subject: str, text: str, max_lines: int) -> None:
    lines = command_lines(subject, text, is_command, max_lines)
    assert len(lines) <= max_lines
    assert all(line and line == line.strip() for line in lines)
    if lines != [" ".join(subject.split())]:  # body lines: never a quoted one
        assert not any(line.startswith(">") for line in lines)


def test_a_mistyped_command_beside_good_ones_is_kept_for_its_error_reply() -> None:
    from pbmserv.core.dispatch import looks_like_command

    body = "Hi!\nchamelon move 1 alice pw d4x\nstatus alice\nCheers,\nAlice\n"
    assert command_lines("Re: x", body, looks_like_command) == [
        "chamelon move 1 alice pw d4x",
        "status alice",
    ]
    assert not any(looks_like_command(word) for word in ("Hello,", "Thanks", "Regards", "Best"))
