"""How long decoding takes on hostile mail, next to the standard library's html.parser.

Run ``python bench/security/decode_hostile.py``. For each hostile HTML pattern it prints the time
our decoder needs for a 20,000-fold repetition and the time ``html.parser`` needs for the same text,
then the time of a message nested 1,500 multipart levels deep. Nothing is asserted.
"""

from __future__ import annotations

import sys
import time
from html.parser import HTMLParser
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pbmserv.inbound.reading.decode import parse_message  # noqa: E402

REPEAT = 20_000
PATTERNS = (b"<a ", b"<a b='", b"<!--", b"</", b"<![", b"<script>")


def timed(action) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def _stdlib_parse(text: str) -> None:
    parser = HTMLParser()
    try:
        parser.feed(text)
        parser.close()  # the end of input is where html.parser rescans what it buffered
    except AssertionError:  # it gives up on some markup: what matters is how long it took
        pass


def main() -> None:
    for pattern in PATTERNS:
        html = pattern * REPEAT
        raw = b"From: a@example.org\r\nContent-Type: text/html\r\n\r\n" + html
        ours = timed(lambda raw=raw: parse_message(raw))
        stdlib = timed(lambda html=html: _stdlib_parse(html.decode()))
        print(
            f"hostile html {pattern.decode()!r} x{REPEAT}: decode {ours * 1000:.1f} ms, "
            f"html.parser {stdlib * 1000:.1f} ms, ratio {stdlib / max(ours, 1e-9):.0f}x"
        )
    head, tail = b"", b""
    for level in range(1500):
        head += b"Content-Type: multipart/mixed; boundary=b%d\n\n--b%d\n" % (level, level)
        tail = b"\n--b%d--\n" % level + tail
    nested = b"From: a@example.org\n" + head + b"Content-Type: text/plain\n\nhelp\n" + tail
    print(
        f"multipart nested 1500 deep: decode {timed(lambda: parse_message(nested)) * 1000:.1f} ms"
    )


if __name__ == "__main__":
    main()
