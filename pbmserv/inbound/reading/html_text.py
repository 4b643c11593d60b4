"""HTML reduced to its visible text, in linear time, for reading commands out of HTML mail:
quoted ``<blockquote>`` lines get a ``> `` prefix and ``<hr>`` a rule, so that a reply's own
lines can be told from what it quotes."""

from __future__ import annotations

import html
import re


class _HtmlText:
    """Reduces HTML to its visible text, as lines.

    A small scanner of its own rather than ``html.parser``: that one takes quadratic time on
    markup like ``<a <a <a ...`` (minutes for a 100 kB body), which anyone could mail us.
    Every step below moves forward through the markup, so the time is linear.
    """

    _HIDDEN = frozenset({"head", "title", "template"})
    _HEAD_CONTENT = frozenset({"title", "meta", "link", "base", "template", "html", "head"})
    _RAW = frozenset({"script", "style"})  # their content is not markup: skip to the end tag
    _BLOCKS = frozenset(
        {
            *("address", "article", "aside", "blockquote", "caption", "center", "dd", "div"),
            *("dl", "dt", "fieldset", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5"),
            *("h6", "header", "li", "main", "nav", "ol", "p", "pre", "section", "table"),
            *("tbody", "tfoot", "thead", "tr", "ul"),
        }
    )
    # Outlook puts a rule above the quoted message; as text it becomes Outlook's separator.
    RULE = "_" * 32
    _TAG = re.compile(r"(/?)([A-Za-z][A-Za-z0-9:-]*)")

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._current: list[str] = []
        self._hidden: list[str] = []
        self._quote = 0
        self._pre = 0

    def feed(self, markup: str) -> None:
        pos, size = 0, len(markup)
        next_gt = -1  # the first ">" at or after the current "<", found once per stretch
        while pos < size:
            lt = markup.find("<", pos)
            if lt < 0:
                self._data(markup[pos:])
                return
            self._data(markup[pos:lt])
            if markup.startswith("<!--", lt):
                end = markup.find("-->", lt + 4)
                if end < 0:
                    return  # an unclosed comment runs to the end
                pos = end + 3
                continue
            after = markup[lt + 1 : lt + 2]
            if not (after.isascii() and (after.isalpha() or after in "/!?")):
                self._data("<")  # "a < b", "<3": a plain "<", as browsers show it
                pos = lt + 1
                continue
            if next_gt < lt:
                next_gt = markup.find(">", lt)
                if next_gt < 0:
                    return  # a tag cut off at the end: browsers show nothing of it
            pos = next_gt + 1
            tag = self._TAG.match(markup, lt + 1, next_gt)
            if tag is None:
                continue  # <!DOCTYPE>, <?xml?>, "< " ...: nothing to show
            name = tag.group(2).lower()
            if tag.group(1):
                self._end(name)
            elif name in self._RAW:
                if markup[next_gt - 1] == "/":
                    continue  # <script/> has no content
                close = re.compile(rf"</{name}\b", re.IGNORECASE).search(markup, pos)
                if close is None:
                    return
                pos = close.start()
            else:
                self._start(name)

    def _start(self, tag: str) -> None:
        if "head" in self._hidden and tag not in self._HEAD_CONTENT:
            self._hidden.clear()  # body content closes an unclosed <head>, as in browsers
        if tag in self._HIDDEN:
            self._hidden.append(tag)
        elif tag == "br":
            self._line_break()
        elif tag == "hr":
            self._flush()
            self.lines.append(self.RULE)
        elif tag in ("td", "th"):
            self._current.append(" ")
        elif tag in self._BLOCKS:
            self._flush()
            self._quote += tag == "blockquote"
            self._pre += tag == "pre"

    def _end(self, tag: str) -> None:
        if tag in self._hidden:
            while self._hidden and self._hidden.pop() != tag:
                pass
        elif tag in self._BLOCKS:
            self._flush()
            if tag == "blockquote":
                self._quote = max(0, self._quote - 1)
            elif tag == "pre":
                self._pre = max(0, self._pre - 1)
            elif tag == "p":
                self.lines.append("")

    def _data(self, data: str) -> None:
        if self._hidden or not data:
            return
        data = html.unescape(data)
        if not self._pre:
            self._current.append(data)
            return
        first, *rest = data.split("\n")
        self._current.append(first)
        for piece in rest:
            self._line_break()
            self._current.append(piece)

    def _line_break(self) -> None:
        if not self._flush():
            self.lines.append("> " * self._quote)

    def _flush(self) -> bool:
        text = "".join(self._current)
        self._current = []
        text = text.rstrip() if self._pre else " ".join(text.split())
        if not text.strip():
            return False
        self.lines.append("> " * self._quote + text)
        return True

    def text(self) -> str:
        self._flush()
        joined = "\n".join(line.rstrip() for line in self.lines)
        return re.sub(r"\n{3,}", "\n\n", joined).strip("\n")


def html_to_text(markup: str) -> str:
    """The visible text of ``markup``, as lines joined by ``\n``."""
    parser = _HtmlText()
    parser.feed(markup)
    return parser.text()
