"""Command lines: split into words, with the rest of the line kept for free text."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass


def printable(text: str) -> str:
    """``text`` with control and format characters made spaces (databases refuse NUL)."""
    if text.isascii() and text.isprintable():  # the usual line: no character to look at
        return text
    return "".join(" " if unicodedata.category(c) in ("Cc", "Cf", "Cs") else c for c in text)


@dataclass(frozen=True)
class CommandLine:
    raw: str
    words: tuple[str, ...]

    @classmethod
    def parse(cls, text: str) -> CommandLine:
        raw = " ".join(printable(text).split())
        return cls(raw=raw, words=tuple(raw.split(" ")) if raw else ())

    def rest(self, start: int) -> str:
        """The words from index ``start`` on, joined by single spaces."""
        return " ".join(self.words[start:])

    def masked(self, secret_words: tuple[int, ...], shown: int | None = None) -> str:
        """The line with its secret words (passwords) hidden, for quoting back in mail; words
        from index ``shown`` on (more than the command takes) are hidden too."""
        words = [
            "*" * 8 if i in secret_words or (shown is not None and i >= shown) else w
            for i, w in enumerate(self.words)
        ]
        return " ".join(words)


def article(word: str) -> str:
    """ "an" before a vowel sound as spelled ("an owlman game"), else "a"."""
    return "an" if word[:1].lower() in "aeiou" else "a"
