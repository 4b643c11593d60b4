"""Header and body bytes to text: RFC 2047 encoded-words, forgiving base64, and the charsets
mail declares (with the labels mailers use that Python does not know, or knows too narrowly).

Everything here is total: undecodable input is kept as written or has its bad bytes replaced.
"""

from __future__ import annotations

import binascii
import codecs
import contextlib
import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# Invisible characters that some clients scatter in text and that would break a command word.
INVISIBLE = re.compile("[\u200b\u2060\ufeff]")
_ENCODED_WORD = re.compile(r"=\?([^?\s]+)\?([bBqQ])\?([^?\s]*)\?=")


def one_line(text: str) -> str:
    """``text`` on one line for display: control and invisible characters gone, whitespace
    collapsed."""
    return " ".join(INVISIBLE.sub("", _CONTROL.sub(" ", text)).split())


def decode_words(text: str) -> str:
    """Decode RFC 2047 encoded-words anywhere in ``text``; undecodable ones stay as written.

    Adjacent encoded-words in one charset are joined as bytes before decoding, since some
    mailers split a multi-byte character across two words; the whitespace between adjacent
    encoded-words is dropped, as RFC 2047 says.
    """
    out: list[str] = []
    run_charset: str | None = None
    run = bytearray()
    pos = 0

    def flush() -> None:
        nonlocal run_charset
        if run_charset is not None:
            out.append(decode_bytes(bytes(run), run_charset))
            run.clear()
            run_charset = None

    for match in _ENCODED_WORD.finditer(text):
        between = text[pos : match.start()]
        if run_charset is None or between.strip():
            flush()
            out.append(between)
        pos = match.end()
        charset = match.group(1).split("*", 1)[0].lower()  # drop an RFC 2231 language tag
        data = _word_bytes(match.group(2).lower(), match.group(3))
        if data is None:
            flush()
            out.append(match.group(0))
            continue
        if charset != run_charset:
            flush()
            run_charset = charset
        run += data
    flush()
    out.append(text[pos:])
    return "".join(out)


def _word_bytes(encoding: str, encoded: str) -> bytes | None:
    try:
        data = encoded.encode("ascii")
    except UnicodeError:
        return None
    if encoding == "q":
        return binascii.a2b_qp(data, header=True)
    return b64decode(data)


def b64decode(data: bytes) -> bytes:
    """Decode base64 as forgivingly as mail readers do: junk characters are skipped, missing
    padding is supplied, and blocks that were padded and then concatenated still decode."""
    out = []
    for chunk in re.split(rb"=+", re.sub(rb"[^A-Za-z0-9+/=]", b"", data)):
        if len(chunk) % 4 == 1:  # one stray character carries no whole byte
            chunk = chunk[:-1]
        if chunk:
            with contextlib.suppress(binascii.Error):
                out.append(binascii.a2b_base64(chunk + b"=" * (-len(chunk) % 4)))
    return b"".join(out)


# --- charsets ----------------------------------------------------------------------------

# Labels mail uses that Python does not know, or knows as a narrower charset than the one
# mailers actually send under that label (as the WHATWG encoding standard maps them).
_CHARSET_ALIASES = {
    "iso-8859-1": "cp1252",
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "iso_8859-1": "cp1252",
    "windows-874": "cp874",
    "x-mac-roman": "mac-roman",
    "macintosh": "mac-roman",
    "shift_jis": "cp932",
    "shift-jis": "cp932",
    "sjis": "cp932",
    "x-sjis": "cp932",
    "ms_kanji": "cp932",
    "windows-31j": "cp932",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "euc-cn": "gb18030",
    "ks_c_5601-1987": "cp949",
    "euc-kr": "cp949",
    "big5": "cp950",
    "iso-8859-8-i": "iso-8859-8",
    "iso-8859-6-i": "iso-8859-6",
}
# Codecs Python knows that are not charsets a message may declare.
_NOT_CHARSETS = frozenset(
    {"idna", "punycode", "raw-unicode-escape", "unicode-escape", "undefined", "mbcs", "oem"}
)
_ASCII = "ascii"


def _codec(charset: str | None) -> str | None:
    """The Python codec for a declared charset, or None when unknown, bogus or not declared."""
    if not charset:
        return None
    label = charset.strip().strip("\"'").lower()
    label = _CHARSET_ALIASES.get(label, label)
    try:
        info = codecs.lookup(label)
    except (LookupError, ValueError, TypeError):  # "utf-9", "x-unknown", a NUL in the name
        return None
    if not getattr(info, "_is_text_encoding", True) or info.name in _NOT_CHARSETS:
        return None  # base64, zlib, unicode-escape ...: named like codecs, not text
    return info.name


def decode_bytes(data: bytes, charset: str | None) -> str:
    """Decode ``data`` in its declared charset; never raises.

    A missing, unknown or ASCII charset is tried as UTF-8 (the usual truth behind 8-bit bytes
    that claim nothing), then as cp1252. A real charset that does not fit has its bad bytes
    replaced.
    """
    codec = _codec(charset)
    if codec is not None:
        try:
            return data.decode(codec)
        except Exception:  # UnicodeError, and whatever an exotic codec raises
            pass
    if codec is None or codec == _ASCII:
        try:
            return data.decode("utf-8")
        except UnicodeError:
            return data.decode("cp1252", "replace")
    try:
        return data.decode(codec, "replace")
    except Exception:
        return data.decode("latin-1")
