"""No two sentences glued together in any mail (issue 47, item 3): under ``trim_blocks`` a block
tag ending a line of text eats that line's newline, so whatever follows ran on
(``next is move 1Clocks (3d+1d/3d)``, ``mailed to both players.Clock: ...``).

Every text template is rendered with stand-in values whose truth and presence vary from one
rendering to the next, so that each ``{% if %}`` is taken and left out in turn, in many
combinations; and real commands on boards with and without a clock are rendered as mailed."""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest
from jinja2 import Environment, nodes, pass_environment
from jinja2.filters import do_wordwrap
from jinja2.meta import find_undeclared_variables

from pbmserv.core.commands.helptext import help_topics
from pbmserv.outbound.compose import environment, render_notice
from pbmserv.resources import templates_dir
from tests.core.client import Client

#: A word or a sentence's end, then at once a capitalised word: ``1Clocks``, ``players.Clock``.
GLUED = re.compile(r"[a-z0-9.)][A-Z][a-z]")
#: How many renderings of each template, each with its own choice of what is true.
RENDERINGS = 48


def glued(text: str) -> list[str]:
    """Each place where a sentence runs into the next, with some text around it; chess moves
    after an ellipsis (``23...Rxb4``) and names like McDonald's are no such place."""
    found = []
    for match in GLUED.finditer(text):
        start = match.start()
        if text[max(start - 2, 0) : start + 1] == "..." or text[start - 1 : start + 1] == "Mc":
            continue
        found.append(text[max(start - 30, 0) : match.end() + 10].replace("\n", "\\n"))
    return found


class Stand:
    """A value of any shape a template asks for: it prints as a word, and whether it is true,
    present (``is defined``) or equal to something depends on its path and the rendering."""

    def __init__(self, path: str, rendering: int, optional: frozenset[str]) -> None:
        self._path, self._rendering, self._optional = path, rendering, optional

    def _choose(self, salt: str = "") -> bool:
        # Rendering 0 has everything true, rendering 1 everything false; the rest mix.
        if self._rendering < 2:
            return self._rendering == 0
        key = f"{self._rendering}|{self._path}|{salt}".encode()
        return zlib.crc32(key) % 2 == 1

    def _child(self, name: str) -> Stand:
        return Stand(f"{self._path}.{name}", self._rendering, self._optional)

    def __str__(self) -> str:
        return "word"

    def __bool__(self) -> bool:
        return self._choose()

    def __iter__(self) -> Iterator[Stand]:
        return iter([self._child(f"[{i}]") for i in range(2)])

    def __len__(self) -> int:
        return 2

    def __getattr__(self, name: str) -> Stand:
        if name.startswith("__"):
            raise AttributeError(name)
        child = self._child(name)
        if name in self._optional and not child._choose("defined"):
            raise AttributeError(name)  # the template sees it undefined
        return child

    def __getitem__(self, key: object) -> Stand:
        return self._child(f"[{key!r}]")

    def __call__(self, *args: object, **kwargs: object) -> Stand:
        return self._child("()")

    def __eq__(self, other: object) -> bool:
        return self._choose(f"=={other!r}")

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = object.__hash__

    def __lt__(self, other: object) -> bool:
        return self._choose(f"<{other!r}")

    def __gt__(self, other: object) -> bool:
        return self._choose(f">{other!r}")

    __le__, __ge__ = __lt__, __gt__

    def __int__(self) -> int:
        return 2 if self._choose("int") else 1

    __index__ = __int__

    def __float__(self) -> float:
        return float(int(self))

    def __add__(self, other: Any) -> Any:
        return int(self) + other

    __radd__ = __add__

    def __sub__(self, other: Any) -> Any:
        return int(self) - other

    def __mul__(self, other: Any) -> Any:
        return int(self) * other

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Any:
        return int(self) / other


@cache
def stand_in_environment() -> Environment:
    """The mail's environment (trim_blocks and all), its wordwrap taking a stand-in's text."""
    env = environment().overlay()

    @pass_environment
    def wordwrap(env: Environment, value: object, *args: Any, **kwargs: Any) -> str:
        return do_wordwrap(env, str(value), *args, **kwargs)

    env.filters["wordwrap"] = wordwrap
    return env


def text_templates() -> list[str]:
    root = templates_dir()
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.txt.j2"))


def _parsed(name: str) -> nodes.Template:
    env = stand_in_environment()
    assert env.loader is not None
    return env.parse(env.loader.get_source(env, name)[0])


def _with_includes(name: str) -> list[nodes.Template]:
    """The template's tree and those of the templates it includes, at any depth."""
    trees, wanted, seen = [], [name], set()
    while wanted:
        current = wanted.pop()
        if current in seen:
            continue
        seen.add(current)
        tree = _parsed(current)
        trees.append(tree)
        for include in tree.find_all(nodes.Include):
            if isinstance(include.template, nodes.Const):
                wanted.append(include.template.value)
    return trees


def _names(name: str) -> tuple[set[str], frozenset[str]]:
    """The variables a template (with its includes) takes, and the names it asks ``is
    defined`` of (those may be left out)."""
    variables: set[str] = set()
    optional: set[str] = set()
    for tree in _with_includes(name):
        variables |= find_undeclared_variables(tree)
        for test in tree.find_all(nodes.Test):
            if test.name == "defined" and isinstance(test.node, nodes.Name):
                optional.add(test.node.name)
            elif test.name == "defined" and isinstance(test.node, nodes.Getattr):
                optional.add(test.node.attr)
    return variables, frozenset(optional)


def render_with_stand_ins(name: str, rendering: int) -> str:
    variables, optional = _names(name)
    context = {}
    for variable in variables:
        value = Stand(variable, rendering, optional)
        if variable not in optional or value._choose("defined"):
            context[variable] = value
    return stand_in_environment().get_template(name).render(**context)


def test_the_stand_ins_reach_every_template() -> None:
    names = text_templates()
    assert "mail/board_body.txt.j2" in names and "help/clocks.txt.j2" in names
    assert len(names) > 60


@pytest.mark.parametrize("name", text_templates())
def test_no_template_glues_two_sentences(name: str) -> None:
    found: dict[str, int] = {}
    for rendering in range(RENDERINGS):
        for place in glued(render_with_stand_ins(name, rendering)):
            found.setdefault(place, rendering)
    assert not found, f"{name}: sentences run together at {sorted(found)}"


def test_the_check_finds_what_the_issue_saw() -> None:
    assert glued("Moves played: 0; next is move 1Clocks (3d+1d/3d): you have 3 days")
    assert glued("The board has been mailed to both players.Clock: 3 days")
    assert not glued("Last move: 23...Rxb4. White resigned.\nMcDonald's")


# --- real commands, mailed ----------------------------------------------------------------


def _texts(players: Client, line: str, sender: str = "alice@example.org") -> list[str]:
    """The answer to ``line`` and every notice it sent, as mailed."""
    section = players.run(line, sender=sender)
    notices = [render_notice(n, "pbmserv@x") for n in players.notifications]
    return [section.text, *notices]


@pytest.mark.db
@pytest.mark.parametrize("clock", ["-clock=fast ", ""])
def test_mail_of_boards_with_and_without_a_clock_reads_line_by_line(
    players: Client, clock: str
) -> None:
    alice, bob = "alice secret1", "Bob hunter22"
    texts = _texts(players, f"extinction challenge {clock}alice bob")
    answer = texts[0]
    texts += _texts(players, f"extinction move 1 {alice} e4")
    texts += _texts(players, "extinction board 1")
    texts += _texts(players, "status bob")
    texts += _texts(players, f"vacation {bob} start", sender="bob@example.org")
    texts += _texts(players, f"vacation {bob} stop", sender="bob@example.org")
    texts += _texts(players, f"extinction propose 1 {alice} draw")
    texts += _texts(players, f"extinction resign 1 {bob}", sender="bob@example.org")
    texts += _texts(players, "extinction board 1")
    for topic in help_topics():
        texts += _texts(players, f"help {topic}")
    places = [place for text in texts for place in glued(text)]
    assert not places, places
    mailed = "\n".join(texts)
    if clock:
        assert "; next is move 1\nClocks (3d+1d/3d): you have 3 days" in mailed
        assert "mailed to both players.\nClock: 3 days to start" in answer
        # One truth with "help clocks": vacation days are spent first.
        assert "spends vacation days first, then loses on time" in " ".join(answer.split())
    else:
        assert "Clock" not in answer
