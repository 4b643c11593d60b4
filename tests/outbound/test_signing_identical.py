"""The signer writes, byte for byte, the DKIM-Signature header dkimpy alone writes (dkimpy
canonicalises, OpenSSL signs: RSA PKCS#1 v1.5 and Ed25519 are deterministic), on composed mail
of every shape: board mail with its picture drawn for every game, a digest and a broadcast with
their list headers, answers, odd line ends and headers, any text; and from many threads at
once. Each signature checks with dkimpy's verifier against the published record."""

from __future__ import annotations

import random
import re
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import dkim
import pytest
from dkim.canonicalization import Relaxed
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbmserv.config import Settings
from pbmserv.core.results import BulkMail
from pbmserv.games import all_games
from pbmserv.outbound.compose import build_message
from pbmserv.outbound.picture_parts import finish_pictures
from pbmserv.outbound.signing import DkimSigner, new_ed25519_key, new_key
from pbmserv.outbound.signing.keys import private_key
from pbmserv.outbound.signing.signature import (
    _Message,
    lean_signatures,
    relaxed_body,
    signature_headers,
)
from tests.outbound.signing_checks import (
    DOMAIN,
    dkimpy_header,
    split_signatures,
    timestamp,
    verified,
)

SETTINGS = Settings(confirm_addresses=False, address=f"pbmserv@{DOMAIN}")
NOW = datetime(2030, 1, 1, 12, 30, tzinfo=UTC)
RSA_KEY, ED25519_KEY = new_key(), new_ed25519_key()
KEYS = {"pbmserv": RSA_KEY, "pbmserv-ed25519": ED25519_KEY}
SIGNER = DkimSigner("pbmserv", DOMAIN, RSA_KEY, "pbmserv-ed25519", ED25519_KEY)
BODY = "alice (Vert) played c3x.\n\nCafé: it is your move, Jürgen.\n"


def composed(**facts: object) -> bytes:
    message = {
        "to": "bob@example.org",
        "subject": "chameleon board 1: your move",
        "body": BODY,
        "now": NOW,
        "auto_submitted": "auto-generated",
        **facts,
    }
    return build_message(settings=SETTINGS, **message).raw  # type: ignore[arg-type]


def board_mails() -> dict[str, bytes]:
    """A board mail with its picture, drawn as delivery draws it, for every game."""
    mails = {}
    for game in all_games():
        svg = game.svg(game.new_game({}, random.Random(1)), 0)
        subject = f"{game.SPEC.name} board 1: your move"
        mails[f"board mail, {game.SPEC.name}"] = finish_pictures(
            composed(subject=subject, picture=svg, reply_to=f"pbmserv+b1-s0-t@{DOMAIN}")
        )
    return mails


def other_mails() -> dict[str, bytes]:
    game = next(g for g in all_games() if g.SPEC.name == "chameleon")
    boards = [game.svg(game.new_game({"size": n}, random.Random(n)), 0) for n in (3, 5, 7)]
    long_thread = [f"<b1.{n}.{'x' * 30}@{DOMAIN}>" for n in range(12)]
    digest = BulkMail("digest", "unsubscribe digest bob abcdefghijklmnop")
    broadcast = BulkMail("broadcasts", "unsubscribe broadcasts bob abcdefghijklmnop")
    plain = composed(subject="Re: signup bob ********", auto_submitted="auto-replied")
    return {
        "digest with pictures": finish_pictures(
            composed(subject="pbmserv: your move on 3 boards", pictures=boards, bulk=digest)
        ),
        "broadcast": composed(subject="pbmserv: Downtime — Sonntag", bulk=broadcast),
        "answer in a long thread": composed(
            subject="Re: " + "a long subject " * 12,
            in_reply_to=long_thread[-1],
            references=long_thread,
            auto_submitted="auto-replied",
        ),
        "answer": plain,
        "CRLF line ends": plain.replace(b"\n", b"\r\n"),
        "CR line ends": plain.replace(b"\n", b"\r"),
        "mixed line ends": plain.replace(b"\n\n", b"\r\n\n"),
        "trailing blanks and empty lines": plain + b"   \n\t\n\n\n",
        "no line end at the end": plain.rstrip(b"\n"),
        "empty body": plain.split(b"\n\n")[0] + b"\n\n",
        "folded headers, tabs, spaces": b"From: pbmserv <pbmserv@games.example.org>\n"
        b"To:   bob@example.org ,\n\t carol@example.org\nSubject:\tboard  1 \n"
        b"X-Other: not signed\nList-Unsubscribe-Post: List-Unsubscribe=One-Click\n"
        b"Precedence: bulk\nList-Unsubscribe: <mailto:x@example.org>\n\nbody  \t\nline\n",
        "headers twice": b"From: pbmserv@games.example.org\nReceived: by a\nReceived: by b\n"
        b"Subject: one\nSubject: two\nTo: bob@example.org\n\nhello\n",
    }


MAILS = {**board_mails(), **other_mails()}


def assert_as_dkimpy_writes(raw: bytes, signed: bytes) -> None:
    assert verified(signed, KEYS) == [True, True]
    [rsa, ed25519], message = split_signatures(signed)
    assert message == raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n").replace(b"\n", b"\r\n")
    when = timestamp(rsa)
    assert rsa == dkimpy_header(message, "pbmserv", RSA_KEY, when)
    assert ed25519 == dkimpy_header(message, "pbmserv-ed25519", ED25519_KEY, when)


@pytest.mark.parametrize("kind", sorted(MAILS))
def test_each_signature_is_the_one_dkimpy_writes(kind: str) -> None:
    assert_as_dkimpy_writes(MAILS[kind], SIGNER.sign(MAILS[kind]))


def test_rsa_alone_signs_once() -> None:
    signed = DkimSigner("pbmserv", DOMAIN, RSA_KEY).sign(MAILS["answer"])
    [rsa], message = split_signatures(signed)
    assert verified(signed, KEYS) == [True]
    assert rsa == dkimpy_header(message, "pbmserv", RSA_KEY, timestamp(rsa))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    subject=st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=120),
    body=st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=400),
)
def test_any_text_is_signed_as_dkimpy_signs_it(subject: str, body: str) -> None:
    raw = composed(subject=subject.replace("\r", " ").replace("\n", " "), body=body)
    assert_as_dkimpy_writes(raw, SIGNER.sign(raw))


#: Pieces of mail where dkimpy's reading and canonicalisation have their edges: whitespace
#: runs, line ends of every kind, empty lines, a folded header, a header line that is none.
_PIECES = [
    b"a",
    b"From: x@y",
    b"To: z",
    b" ",
    b"  ",
    b"\t",
    b"\r\n",
    b"\r\n\r\n",
    b"\n",
    b"\r",
    b":",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40))
def test_the_body_is_canonicalised_as_dkimpy_does_it(pieces: list[bytes]) -> None:
    body = b"".join(pieces)
    assert relaxed_body(body) == Relaxed.canonicalize_body(body)


def _read(reader: type[dkim.DKIM], message: bytes) -> object:
    try:
        read = reader(message)
    except Exception as error:  # the same refusal (dkimpy's IndexError for a first line folded)
        return type(error)
    return read.headers, read.body


@settings(max_examples=400, deadline=None)
@given(
    st.one_of(
        st.lists(st.sampled_from(_PIECES), max_size=40),
        # CRLF alone: the messages whose header alone is parsed.
        st.lists(st.sampled_from([p for p in _PIECES if p != b"\n"]), max_size=40),
    )
)
def test_a_message_is_read_as_dkimpy_reads_it(pieces: list[bytes]) -> None:
    message = b"".join(pieces)
    assert _read(_Message, message) == _read(dkim.DKIM, message)


def test_many_threads_sign_at_once_each_as_alone() -> None:
    keys = [("pbmserv", private_key(RSA_KEY)), ("pbmserv-ed25519", private_key(ED25519_KEY))]
    messages = [m.replace(b"\n", b"\r\n") for m in MAILS.values() if b"\r" not in m] * 4

    def sign(message: bytes) -> bytes:
        return signature_headers(message, DOMAIN, keys, now=1_900_000_000)

    alone = [sign(m) for m in messages]
    with ThreadPoolExecutor(max_workers=8) as pool:
        together = list(pool.map(sign, messages))
    assert together == alone


def test_a_message_without_from_is_refused_as_dkimpy_refuses_it() -> None:
    raw = b"To: bob@example.org\nSubject: nobody\n\nhello\n"
    with pytest.raises(dkim.ParameterError):
        dkim.DKIM(raw).sign(b"pbmserv", DOMAIN.encode(), RSA_KEY)
    with pytest.raises(dkim.ParameterError):
        SIGNER.sign(raw)


#: Pieces of a header where the lean reading has its edges: names in any case, fields twice,
#: folded lines, runs of spaces and tabs, a field with nothing in it, a line that is no field.
_HEADER_PIECES = [
    b"From: x@y\r\n",
    b"from:\tX  <x@y> \r\n",
    b"To: z@w\r\n",
    b"TO:  a,\r\n\t b\r\n",
    b"Subject: one  two\t\t three \r\n",
    b"Subject:\r\n",
    b" folded on\r\n",
    b"\t\tfolded  too \r\n",
    b"Received: by a\r\n",
    b"List-Unsubscribe: <mailto:u@y>\r\n",
    b"X-Other: \rx\r\n",
    b"no field\r\n",
    b"From x@y Sat\r\n",
]


@settings(max_examples=300, deadline=None)
@given(
    header=st.lists(st.sampled_from(_HEADER_PIECES), max_size=14),
    body=st.lists(st.sampled_from(_PIECES), max_size=12),
)
def test_the_lean_signer_writes_what_the_dkimpy_way_writes(
    header: list[bytes], body: list[bytes]
) -> None:
    message = b"".join(header) + b"\r\n" + b"".join(body)
    keys = [(b"pbmserv", private_key(RSA_KEY)), (b"pbmserv-ed25519", private_key(ED25519_KEY))]
    lean = lean_signatures(message, DOMAIN.encode(), keys, 1_900_000_000)
    try:
        whole = _Message(message).signatures(DOMAIN.encode(), keys, 1_900_000_000)
    except Exception:  # a message dkimpy refuses: the lean signer leaves it to dkimpy
        assert lean is None
        return
    assert lean is None or lean == whole
    crlf_only = message.count(b"\n") == message.count(b"\r\n") == message.count(b"\r")
    if crlf_only:  # as DkimSigner.sign calls it: the same headers without reading line ends
        assert lean_signatures(message, DOMAIN.encode(), keys, 1_900_000_000, True) == lean
    if b"\r\n\r\n" in message and message.count(b"\n") == message.count(b"\r\n"):
        # A header of plain fields (each line a field or a fold of one) is signed lean.
        plain = all(
            line[:1] in (b" ", b"\t") or re.match(rb"[\x21-\x7e]+?:", line)
            for line in message[: message.find(b"\r\n\r\n")].split(b"\r\n")
        )
        if plain and not message.startswith((b" ", b"\t")):
            assert lean is not None
