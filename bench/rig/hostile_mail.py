"""A seeded corpus of hostile (and some good) messages for bench/security/fuzz_mail.py.

``build_case(seed, index)`` gives the same message for the same seed and index, whatever the
order in which the client threads ask for them. Each kind of message is one small function.

Passwords that the corpus writes where a command expects a password look like ``Pw01234Zq``
(see ``PASSWORD_TOKEN``): any of them found in relayed mail or in the server's log is a leak.
"""

from __future__ import annotations

import base64
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from bench.rig import SERVER_ADDRESS, Outgoing

PASSWORD_TOKEN: Final = r"Pw\d{5}Zq"
CRLF: Final = b"\r\n"
DATE: Final = "Thu, 01 Jan 2026 00:00:00 +0000"
# What an attacker wants to appear as a header of the server's answer.
INJECTED: Final = (
    "a\r\nX-Injected: yes",
    "a\r\nBcc: evil@x.test",
    "a\nTo: victim@x.test",
    "a\r\n\r\nforged body",
    "\r\nX-Injected: yes",
    "a\rX-Injected: cr",
)


@dataclass(frozen=True)
class Case:
    """One message of the corpus: what to send and what to expect of it."""

    index: int
    kind: str
    outgoing: Outgoing
    #: The Message-ID of a good message, whose reply must reach the relay.
    good_id: str | None = None
    #: The address a good message comes from (its reply must go there).
    good_sender: str | None = None


# --- small pieces -----------------------------------------------------------------------


def to_bytes(value: str | bytes) -> bytes:
    return value if isinstance(value, bytes) else value.encode("utf-8", "surrogatepass")


def assemble(
    headers: Sequence[tuple[str | bytes, str | bytes]], body: str | bytes, eol: bytes = CRLF
) -> bytes:
    """Header lines as given (no checks, no folding), a blank line, the body."""
    lines = [to_bytes(name) + b": " + to_bytes(value) for name, value in headers]
    return eol.join(lines) + eol + eol + to_bytes(body)


def q_word(text: str | bytes, charset: str = "utf-8") -> str:
    """An RFC 2047 Q encoded-word that encodes every byte but letters and digits."""
    data = to_bytes(text)
    chars = "".join(
        chr(b) if chr(b).isascii() and chr(b).isalnum() else "_" if b == 32 else f"={b:02X}"
        for b in data
    )
    return f"=?{charset}?q?{chars}?="


def b_word(text: str | bytes, charset: str = "utf-8") -> str:
    return f"=?{charset}?b?{base64.b64encode(to_bytes(text)).decode()}?="


def encoded(rng: random.Random, text: str) -> str:
    return q_word(text) if rng.random() < 0.5 else b_word(text)


def token(index: int) -> str:
    return f"Pw{index % 100000:05d}Zq"


def message_id(seed: int, index: int, kind: str = "fuzz") -> str:
    return f"<{kind}-{index}.{seed}@bench.test>"


_ODD_CHARS = (
    "\x00\x01\x07\x08\x0b\x0c\x1b\x7f\x85\xa0\xad\u200b\u200e\u202e\u2028\u2029\ufeff\ufffd"
    "\u3000\uff20\U0001f600\u0301é中ъ"
)


def odd_text(rng: random.Random, length: int) -> str:
    """Text of ASCII, control and format characters, odd spaces and other scripts."""
    pool = "abcdefghij ABC 0123 @.:<>\"'=?_-\t\r\n" + _ODD_CHARS
    return "".join(rng.choice(pool) for _ in range(length))


def basic(
    sender: str, subject: str | bytes, mid: str, extra: Sequence[tuple[str, str | bytes]] = ()
) -> list[tuple[str | bytes, str | bytes]]:
    return [
        ("From", sender),
        ("To", SERVER_ADDRESS),
        ("Subject", subject),
        ("Date", DATE),
        ("Message-ID", mid),
        *extra,
    ]


def plain(charset: str = "utf-8") -> list[tuple[str, str | bytes]]:
    return [
        ("MIME-Version", "1.0"),
        ("Content-Type", f"text/plain; charset={charset}"),
    ]


# --- good messages ----------------------------------------------------------------------


def good(rng: random.Random, seed: int, i: int) -> Case:
    sender = f"good{i}@good.test"
    mid = message_id(seed, i, "good")
    choice = rng.randrange(7)
    if choice == 0:
        raw = assemble(basic(sender, "help", mid), "")
    elif choice == 1:
        raw = assemble(basic(sender, "help chameleon", mid), "")
    elif choice == 2:
        raw = assemble(basic(sender, "games", mid), "")
    elif choice == 3:
        subject = f"signup g{i} {token(i)} Good Player"
        raw = assemble(basic(sender, subject, mid), "")
    elif choice == 4:
        raw = assemble(basic(sender, "", mid, plain()), "help\r\n\r\n-- \r\nGood\r\n")
    elif choice == 5:
        raw = _alternative(sender, "Re: hello", mid, "help commands", "<p>help commands</p>")
    else:
        body = f"signup g{i} {token(i)}=20\r\n".encode()
        headers = basic(sender, "", mid, [("Content-Transfer-Encoding", "quoted-printable")])
        raw = assemble(headers, body)
    return Case(i, "good", Outgoing(sender, raw), good_id=mid, good_sender=sender)


def _alternative(sender: str, subject: str, mid: str, text: str, html: str) -> bytes:
    body = (
        f"--b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n{text}\r\n"
        f"--b1\r\nContent-Type: text/html; charset=utf-8\r\n\r\n{html}\r\n--b1--\r\n"
    )
    extra = [("MIME-Version", "1.0"), ("Content-Type", 'multipart/alternative; boundary="b1"')]
    return assemble(basic(sender, subject, mid, extra), body)


# --- hostile headers --------------------------------------------------------------------


def from_crlf(rng: random.Random, seed: int, i: int) -> Case:
    """From headers whose encoded-words decode to CR/LF (in local part, domain or name)."""
    payload = rng.choice(INJECTED)
    forms = (
        "=?utf-8?q??=@x.test",
        "=?utf-8?b?YQ0KWC1FdmlsOiAx?=@ex.test",
        f"{encoded(rng, payload)}@ex.test",
        f"x{i}@{q_word(payload)}",
        f"{encoded(rng, 'Eve' + payload)} <eve{i}@x.test>",
        f"<{encoded(rng, payload)}@x.test>",
        f"Eve <{encoded(rng, payload)}@x.test>",
        f"{b_word(payload, 'utf-16')}@x.test",
        f"{q_word(payload, 'iso-8859-1')}@x.test",
        f"{q_word(q_word(payload))}@x.test",
    )
    sender = rng.choice(forms)
    raw = assemble(basic(sender, rng.choice(("help", "games", "")), message_id(seed, i)), "help")
    return Case(i, "from-crlf", Outgoing(f"f{i}@hostile.test", raw))


def subject_crlf(rng: random.Random, seed: int, i: int) -> Case:
    """Subjects that decode to CR/LF, once or after a second decoding."""
    payload = rng.choice(INJECTED)
    forms = (
        "=?utf-8?q?hello=0D=0ABcc:_evil@x.test=0D=0AX-Injected:_yes?=",
        encoded(rng, "hello" + payload),
        q_word(q_word("hello" + payload)),
        q_word(b_word("hello" + payload)),
        "Re: " + q_word(q_word(payload)),
        q_word("=?unicode-escape?q?x\\r\\nX-Injected:=20yes?="),
        encoded(rng, "help" + payload),
        "help " + q_word(payload),
        q_word(f"signup s{i} {token(i)}" + payload),
    )
    headers = basic(f"s{i}@hostile.test", rng.choice(forms), message_id(seed, i))
    return Case(i, "subject-crlf", Outgoing(f"s{i}@hostile.test", assemble(headers, "help")))


def msgid_hostile(rng: random.Random, seed: int, i: int) -> Case:
    """Message-ID, In-Reply-To and References that the answer's threading headers copy."""
    payload = rng.choice(INJECTED)
    word = encoded(rng, payload)
    forms = (
        ("Message-ID", f"<{word}>"),
        ("Message-ID", f"<{q_word(payload)}@x.test>"),
        ("Message-ID", word),
        ("Message-ID", f"<a{i}\x00b@x.test>"),
        ("Message-ID", f"<{'m' * rng.randrange(200, 5000)}{i}@x.test>"),
        ("Message-ID", f"<a{i}é\u2028ü@x.test>"),
        ("In-Reply-To", f"<{word}>"),
        ("In-Reply-To", f"<a@x> {word}"),
        ("References", " ".join(f"<r{k}@x.test>" for k in range(3000))),
        ("References", f"<r@x> <{word}> <s@x>"),
        ("In-Reply-To", "<" * 500 + ">" * 500),
    )
    name, value = rng.choice(forms)
    mid = value if name == "Message-ID" else message_id(seed, i)
    headers = basic(f"m{i}@hostile.test", "help", mid)
    if name != "Message-ID":
        headers.append((name, value))
    return Case(i, "msgid-hostile", Outgoing(f"m{i}@hostile.test", assemble(headers, "")))


def bare_line_ends(rng: random.Random, seed: int, i: int) -> Case:
    """Bare CR or LF inside headers, headers without a colon, no blank line, mbox lines."""
    sender = f"l{i}@hostile.test"
    mid = message_id(seed, i)
    forms = (
        f"From: {sender}\r\nSubject: help\rBcc: evil@x.test\r\nMessage-ID: {mid}\r\n\r\nhelp",
        f"From: {sender}\nSubject: help\nX-Injected: yes\nMessage-ID: {mid}\n\nhelp\n",
        f"From: {sender}\r\nSubject: help\n\rTo: victim@x.test\r\nMessage-ID: {mid}\r\n\r\n",
        f"From {sender} Thu Jan  1 00:00:00 2026\r\nFrom: {sender}\r\nSubject: games\r\n\r\n",
        f"From: {sender}\r\nnot a header line\r\nSubject: help\r\nMessage-ID: {mid}\r\n\r\n",
        f" continuation first\r\nFrom: {sender}\r\nSubject: help\r\nMessage-ID: {mid}\r\n",
        f"From: {sender}\r\nSubject: help\r\nMessage-ID: {mid}",
        f"From:{sender}\r\nSubject:\r\n help\r\n \r\nMessage-ID:{mid}\r\n\r\n",
        f"From: {sender}\r\nSubject: help\r\nMessage-ID: {mid}\r\n\r\n.\r\n..\r\n.help\r\n",
    )
    return Case(i, "bare-line-ends", Outgoing(sender, to_bytes(rng.choice(forms))))


def control_chars(rng: random.Random, seed: int, i: int) -> Case:
    """NUL and other control or format characters in every header and in the body."""
    sender = f"c{i}@hostile.test"
    where = rng.randrange(4)
    junk = odd_text(rng, rng.randrange(1, 60))
    from_value = f"{junk} <{sender}>" if where == 0 else sender
    subject = f"help {junk}" if where == 1 else "help"
    body = f"{junk}\r\nhelp\x00\r\ngames{junk}\r\n" if where == 2 else "help"
    extra = [(f"X-{junk[:10]}", junk)] if where == 3 else []
    raw = assemble(basic(from_value, subject, message_id(seed, i), extra), body)
    return Case(i, "control-chars", Outgoing(sender, raw))


def huge_headers(rng: random.Random, seed: int, i: int) -> Case:
    """Long folded headers, thousands of headers, a line over SMTP's 1000 characters."""
    sender = f"h{i}@hostile.test"
    mid = message_id(seed, i)
    size = rng.choice((2_000, 20_000, 100_000, 400_000))
    choice = rng.randrange(5)
    if choice == 0:
        folded = "help" + "\r\n x" * (size // 4)
        raw = assemble(basic(sender, folded, mid), "")
    elif choice == 1:
        extra = [(f"X-Junk-{k}", "v" * 20) for k in range(size // 30)]
        raw = assemble(basic(sender, "help", mid, extra), "")
    elif choice == 2:
        raw = assemble(basic(sender, "help " + "y" * max(1001, size // 10), mid), "")
    elif choice == 3:
        many = ",\r\n ".join(f"a{k}@x.test" for k in range(size // 12))
        raw = assemble(basic(f"{sender},\r\n {many}", "help", mid), "")
    else:
        refs = "\r\n ".join(f"<r{k}.{i}@x.test>" for k in range(size // 16))
        raw = assemble(basic(sender, "help", mid, [("References", refs)]), "")
    return Case(i, "huge-headers", Outgoing(sender, raw))


# --- hostile bodies ---------------------------------------------------------------------


def deep_multipart(rng: random.Random, seed: int, i: int) -> Case:
    """Nested multiparts (some deeper than any limit), unclosed, empty or reused boundaries."""
    sender = f"d{i}@hostile.test"
    depth = rng.choice((3, 25, 70, 300, 1500))
    style = rng.randrange(4)
    head, tail = b"", b""
    for level in range(depth):
        boundary = b"b" if style == 1 else b"" if style == 2 else b"b%d" % level
        head += b'Content-Type: multipart/mixed; boundary="%s"\r\n\r\n--%s\r\n' % (
            boundary,
            boundary,
        )
        if style != 3:  # style 3 leaves every level unclosed
            tail = b"\r\n--%s--\r\n" % boundary + tail
    body = head + b"Content-Type: text/plain\r\n\r\nhelp\r\n" + tail
    headers = basic(sender, "", message_id(seed, i), [("MIME-Version", "1.0")])
    raw = b"\r\n".join(to_bytes(n) + b": " + to_bytes(v) for n, v in headers) + b"\r\n" + body
    return Case(i, "deep-multipart", Outgoing(sender, raw))


def flat_multipart(rng: random.Random, seed: int, i: int) -> Case:
    """Thousands of sibling parts, message/rfc822 inside, attachments only."""
    sender = f"p{i}@hostile.test"
    count = rng.choice((10, 500, 3000))
    kinds = ("application/octet-stream", "message/rfc822", "text/plain", "image/png")
    parts = []
    for k in range(count):
        ctype = rng.choice(kinds)
        parts.append(
            f"--x\r\nContent-Type: {ctype}\r\nContent-Disposition: attachment\r\n\r\n"
            f"From: inner{k}@x.test\r\nSubject: help\r\n\r\nhelp {k}\r\n"
        )
    body = "".join(parts) + "--x--\r\n"
    extra = [("MIME-Version", "1.0"), ("Content-Type", "multipart/mixed; boundary=x")]
    raw = assemble(basic(sender, "", message_id(seed, i), extra), body)
    return Case(i, "flat-multipart", Outgoing(sender, raw))


def random_bytes(rng: random.Random, seed: int, i: int) -> Case:
    """Bytes of no structure at all, or header-like lines of random bytes."""
    length = rng.choice((0, 1, 50, 1000, 8000))
    data = bytes(rng.getrandbits(8) for _ in range(length))
    if rng.random() < 0.5:
        data = b"From: r%d@hostile.test\r\nSubject: help\r\n" % i + data
    return Case(i, "random-bytes", Outgoing(f"r{i}@hostile.test", data))


_BAD_CHARSETS = (
    "utf-9",
    "x-unknown",
    "unicode-escape",
    "raw-unicode-escape",
    "base64",
    "zlib",
    "rot13",
    "utf-7",
    "idna",
    "punycode",
    "utf-8\x00",
    '"',
    "utf-8'en'",
    "utf-16",
    "utf-32",
    "hz",
    "undefined",
    "x" * 500,
    "",
)


def bad_charset(rng: random.Random, seed: int, i: int) -> Case:
    """Declared charsets that are unknown, not text codecs, or wrong for the bytes."""
    sender = f"ch{i}@hostile.test"
    charset = rng.choice(_BAD_CHARSETS)
    body = rng.choice((b"help\r\n", "h\u00e9lp \u4e2d\r\n".encode(), b"\xff\xfe\x00h\x00e"))
    subject = f"=?{charset}?q?help?=" if rng.random() < 0.5 else "help"
    headers = basic(sender, subject, message_id(seed, i), plain(charset))
    return Case(i, "bad-charset", Outgoing(sender, assemble(headers, body)))


def bad_transfer_encoding(rng: random.Random, seed: int, i: int) -> Case:
    """Broken base64 and quoted-printable, unknown encodings, 8-bit bytes under 7bit."""
    sender = f"te{i}@hostile.test"
    cte, body = rng.choice(
        (
            ("base64", b"aGVscA=junk==\r\n!!!\r\n"),
            ("base64", base64.b64encode(b"help\r\n") * 2000),
            ("base64", b"A"),
            ("quoted-printable", b"he=\r\nlp=ZZ=\r\n=0D=0AX-Injected: yes=00\r\n"),
            ("x-uuencode", b"begin 644 x\r\n#:&5L<```\r\nend\r\n"),
            ("7bit", b"help\xff\xfe\x00\r\n"),
            ("binary", bytes(range(256))),
            ("base64; foo", b"aGVscA==\r\n"),
        )
    )
    headers = basic(sender, "", message_id(seed, i), [("Content-Transfer-Encoding", cte)])
    return Case(i, "bad-transfer-encoding", Outgoing(sender, assemble(headers, body)))


def unicode_address(rng: random.Random, seed: int, i: int) -> Case:
    """From addresses in other scripts, with odd spaces, bidi controls, a full-width @."""
    local = odd_text(rng, rng.randrange(1, 20)).replace("\r", "").replace("\n", "")
    domain = rng.choice(("例え.テスト", "xn--80ak6aa92e.com", "ex\u202eample.test", "x.test"))
    at = rng.choice(("@", "\uff20", "@@"))
    sender = f"{local}{at}{domain}"
    raw = assemble(basic(sender, rng.choice(("help", "games")), message_id(seed, i)), "")
    return Case(i, "unicode-address", Outgoing(f"u{i}@hostile.test", raw))


def html_hostile(rng: random.Random, seed: int, i: int) -> Case:
    """HTML that is slow for naive parsers, or whose entities decode to control characters."""
    sender = f"w{i}@hostile.test"
    html = rng.choice(
        (
            "<a " * 20000,
            "<!--" * 20000,
            "<blockquote>" * 20000 + "help",
            "help&#13;&#10;Bcc: evil@x.test&#0;",
            "<script>" + "x" * 50000,
            "<p>help</p>" * 5000,
        )
    )
    extra = [("MIME-Version", "1.0"), ("Content-Type", "text/html; charset=utf-8")]
    raw = assemble(basic(sender, "", message_id(seed, i), extra), html)
    return Case(i, "html-hostile", Outgoing(sender, raw))


def command_injection(rng: random.Random, seed: int, i: int) -> Case:
    """Commands carrying CR/LF, NUL, encoded-words or other commands inside their words."""
    sender = f"ci{i}@hostile.test"
    payload = rng.choice(INJECTED)
    pw = token(i)
    lines = (
        f"signup ci{i} {pw} Eve{q_word(payload)}",
        f"signup ci{i} {pw} {payload}",
        f"signup ci{i}\x00 {pw}",
        f"signup\tci{i}\t{pw}\u00a0Eve",
        f"status {q_word(payload)}",
        f"help {b_word(payload)}",
        "games\u2028Bcc: evil@x.test",
        f"password ci{i} {pw} {pw}{payload}",
        f"email ci{i} {pw} <{b_word(payload)}@ex.test>",
        f"chameleon challenge -size=5 {q_word(payload)} bob",
        f"chameleon move 1 ci{i} {pw} a1x{payload}",
        f"tournament join {q_word(payload)} ci{i} {pw}",
        "help \x1b[31m\x1b]0;title\x07",
    )
    chosen = [rng.choice(lines) for _ in range(rng.randrange(1, 4))]
    if rng.random() < 0.5:
        raw = assemble(basic(sender, "", message_id(seed, i)), "\r\n".join(chosen))
    else:
        raw = assemble(basic(sender, q_word(chosen[0]), message_id(seed, i)), "")
    return Case(i, "command-injection", Outgoing(sender, raw))


def hostile_account(rng: random.Random, seed: int, i: int) -> Case:
    """An account whose address (changed with ``email``) is an encoded-word with CR/LF in it,
    then a board whose mail goes to that address."""
    sender = f"acc{i}@hostile.test"
    pw = token(i)
    address = rng.choice(
        (
            "=?utf-8?b?YQ0KWC1FdmlsOiAx?=@ex.test",
            "=?utf-8?q??=@x.test",
            f"{q_word('a' + rng.choice(INJECTED))}@ex.test",
            f"{b_word('a' + rng.choice(INJECTED))}@ex.test",
        )
    )
    body = "\r\n".join(
        (
            f"signup acc{i} {pw}",
            f"signup acc{i}b {pw}",
            f"email acc{i} {pw} {address}",
            f"chameleon challenge -size=5 acc{i} acc{i}b",
        )
    )
    raw = assemble(basic(sender, "", message_id(seed, i)), body)
    return Case(i, "hostile-account", Outgoing(sender, raw))


def auto_mail(rng: random.Random, seed: int, i: int) -> Case:
    """Bounces, auto-replies and loops: to be ignored, never answered."""
    sender = f"au{i}@hostile.test"
    envelope = sender
    extra: list[tuple[str, str | bytes]] = []
    choice = rng.randrange(7)
    if choice == 0:
        envelope = ""
    elif choice == 1:
        extra = [("Auto-Submitted", "auto-replied")]
    elif choice == 2:
        extra = [("Precedence", "bulk")]
    elif choice == 3:
        extra = [("X-Loop", SERVER_ADDRESS)]
    elif choice == 4:
        sender = "MAILER-DAEMON@x.test"
    elif choice == 5:
        sender = SERVER_ADDRESS
    else:
        extra = [("Content-Type", "multipart/report; report-type=delivery-status; boundary=z")]
    raw = assemble(basic(sender, "help", message_id(seed, i), extra), "help")
    return Case(i, "auto-mail", Outgoing(envelope, raw))


def odd_envelope(rng: random.Random, seed: int, i: int) -> Case:
    """Odd but ASCII envelopes and recipients."""
    envelope, rcpt = rng.choice(
        (
            (f"e{i}@hostile.test", f"other{i}@elsewhere.test"),
            (f"e{i}@HOSTILE.test", SERVER_ADDRESS.upper()),
            ("postmaster", SERVER_ADDRESS),
            (f'"quoted local {i}"@hostile.test', SERVER_ADDRESS),
            (f"e{i}@[127.0.0.1]", SERVER_ADDRESS),
            (f"e{i}@hostile.test", "<>"),
        )
    )
    raw = assemble(basic(f"e{i}@hostile.test", "help", message_id(seed, i)), "")
    return Case(i, "odd-envelope", Outgoing(envelope, raw, rcpt=rcpt))


def oversize(rng: random.Random, seed: int, i: int) -> Case:
    """Larger than the server's 1 MiB limit: to be refused with 552."""
    sender = f"big{i}@hostile.test"
    body = ("help " + "z" * 70 + "\r\n") * rng.randrange(14_500, 20_000)
    raw = assemble(basic(sender, "help", message_id(seed, i)), body)
    return Case(i, "oversize", Outgoing(sender, raw))


# (builder, weight): good mail is about one message in twelve, huge ones are rare.
BUILDERS: Final[tuple[tuple[Callable[[random.Random, int, int], Case], int], ...]] = (
    (good, 8),
    (from_crlf, 8),
    (subject_crlf, 8),
    (msgid_hostile, 8),
    (bare_line_ends, 6),
    (control_chars, 8),
    (huge_headers, 2),
    (deep_multipart, 4),
    (flat_multipart, 2),
    (random_bytes, 8),
    (bad_charset, 6),
    (bad_transfer_encoding, 6),
    (unicode_address, 6),
    (html_hostile, 2),
    (command_injection, 10),
    (hostile_account, 3),
    (auto_mail, 4),
    (odd_envelope, 3),
)
_OVERSIZE_RATE: Final = 0.0025


KINDS: Final = tuple(builder.__name__.replace("_", "-") for builder, _weight in BUILDERS)


def build_case(seed: int, index: int, skip: frozenset[str] = frozenset()) -> Case:
    """Message ``index`` of the corpus for ``seed`` (the same every time).

    ``skip``: kinds (names of ``KINDS``, or "oversize") left out of the corpus, for instance
    to get past a message kind that is known to stop the server.
    """
    rng = random.Random(f"{seed}:{index}")
    if rng.random() < _OVERSIZE_RATE and "oversize" not in skip:
        return oversize(rng, seed, index)
    kept = [(b, w) for b, w in BUILDERS if b.__name__.replace("_", "-") not in skip]
    builders, weights = zip(*kept, strict=True)
    builder = rng.choices(builders, weights)[0]
    return builder(rng, seed, index)
