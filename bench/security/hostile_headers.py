"""How long the inbox takes over hostile headers, next to the standard library's parser.

Run ``python bench/security/hostile_headers.py``. For each hostile header shape it prints the time
of ``parse_message`` (what the processor runs), of ``dedupe_key`` and ``header_from_address`` (what
the listener runs before it answers 250), the limit the message was found over, and for the shapes
of issue 15 the time the stdlib needs to parse the message and read what we read (Content-Type
parameters, From addresses). Nothing is asserted.
"""

from __future__ import annotations

import email
import sys
import time
from collections.abc import Callable
from email.policy import compat32
from email.utils import getaddresses
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pbmserv.inbound.reading.decode import dedupe_key, header_from_address, parse_message  # noqa: E402

TOP = b"From: alice@example.org\r\nMessage-ID: <h@example.org>\r\nSubject: help\r\n"


def folded_content_type() -> bytes:
    params = b"".join(b";\r\n p%d=v%d" % (i, i) for i in range(590_000 // 14))
    return TOP + b"Content-Type: text/plain" + params + b"\r\n\r\nhelp\r\n"


def crowded_from() -> bytes:
    people = b",\r\n ".join(b'"User %d" <u%d@example.org>' % (i, i) for i in range(14_000))
    return b"From: " + people + b"\r\nMessage-ID: <c@example.org>\r\n\r\nhelp\r\n"


def many_fields() -> bytes:
    return TOP + b"".join(b"X-F%d: x\r\n" % i for i in range(50_000)) + b"\r\nhelp\r\n"


def unclosed_quote() -> bytes:
    return TOP + b'Content-Type: text/plain; a="' + b";x" * 100_000 + b"\r\n\r\nhelp\r\n"


def stdlib_content_type(raw: bytes) -> None:
    email.message_from_bytes(raw, policy=compat32).get_params()


def stdlib_from(raw: bytes) -> None:
    getaddresses(email.message_from_bytes(raw, policy=compat32).get_all("from", []))


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def main() -> None:
    shapes = [
        ("Content-Type folded over 590 KB", folded_content_type(), stdlib_content_type),
        ("From with 14,000 addresses", crowded_from(), stdlib_from),
        ("50,000 header fields", many_fields(), None),
        ("unclosed quote among 100,000 ';'", unclosed_quote(), None),  # stdlib: about a minute
    ]
    for name, raw, stdlib in shapes:
        mail = parse_message(raw, "alice@example.org")
        line = (
            f"{name} ({len(raw) // 1024} KB): parse_message "
            f"{timed(lambda raw=raw: parse_message(raw)) * 1000:.1f} ms, dedupe_key "
            f"{timed(lambda raw=raw: dedupe_key(raw)) * 1000:.1f} ms, header_from_address "
            f"{timed(lambda raw=raw: header_from_address(raw)) * 1000:.1f} ms"
        )
        if stdlib is not None:
            line += f", stdlib {timed(lambda raw=raw, f=stdlib: f(raw)) * 1000:.0f} ms"
        print(f"{line}\n    {mail.auto_reason}")


if __name__ == "__main__":
    main()
