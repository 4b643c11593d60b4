"""A game's rules: its help text (``templates/help/GAME.txt.j2``, as ``help GAME`` mails it)
as a page. The text is laid out by its own shape: a line alone at the margin is a heading, a
paragraph of prose (whole lines at the text's indent) flows, and everything else (commands,
examples, lists, diagrams) keeps its lines as written."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from pbmserv.core.commands.helptext import help_command
from pbmserv.core.context import CommandContext
from pbmserv.core.parser import CommandLine
from pbmserv.games import find_game
from pbmserv.web.database import reading
from pbmserv.web.headers import etag_of, tagged
from pbmserv.web.site import Site, site_of

#: The indent of a help text's body, and the shortest first line of a flowing paragraph.
INDENT = "   "
PROSE = 55


@dataclass(frozen=True)
class Block:
    kind: str  # "title", "heading", "paragraph" or "text"
    text: str


def rules(request: Request) -> Response:
    site = site_of(request)
    name = request.path_params["game"]
    game = find_game(name) if name.isascii() and name.isalnum() else None
    if game is None or name != game.SPEC.name:
        raise HTTPException(404, "There is no such game here.")
    etag = etag_of(f"rules-{game.SPEC.name}", "html", site.version)
    return tagged(request, etag, lambda: _page(site, game.SPEC.name, game.SPEC.title))


def _page(site: Site, name: str, title: str) -> Response:
    blocks = blocks_of(help_text(site, name))
    if blocks and blocks[0].kind == "title":
        blocks = blocks[1:]
    return site.page("rules", {"name": name, "title": title, "blocks": blocks})


def help_text(site: Site, name: str) -> str:
    """The game's help as the ``help GAME`` command gives it (core's data, the same template)."""
    with reading(site.sessions) as session:
        ctx = CommandContext(session=session, settings=site.settings, sender=None)
        section = help_command(ctx, CommandLine.parse(f"help {name}"), None)
    page = section.data.get("page") or "_game"
    template = site.text.get_template(f"help/{page}.txt.j2")
    return template.render({"server_address": site.settings.address, **section.data})


def blocks_of(text: str) -> list[Block]:
    """The help text as headings, flowing paragraphs and blocks kept as written."""
    blocks = []
    for chunk in text.strip("\n").split("\n\n"):
        lines = chunk.strip("\n").split("\n")
        if not any(line.strip() for line in lines):
            continue
        if len(lines) == 2 and set(lines[1]) <= set("=-") and lines[1]:
            blocks.append(Block("title", lines[0].strip()))
        elif len(lines) == 1 and not lines[0].startswith(" "):
            blocks.append(Block("heading", lines[0].strip()))
        elif _is_prose(lines):
            blocks.append(Block("paragraph", " ".join(line.strip() for line in lines)))
        else:
            blocks.append(Block("text", _dedented(lines)))
    return blocks


def _is_prose(lines: list[str]) -> bool:
    at_indent = all(line.removeprefix(INDENT)[:1].strip() for line in lines)
    flush = all(line.startswith(INDENT) for line in lines)
    if not (flush and at_indent):
        return False
    if len(lines) == 1:  # a sentence alone ("Choosing a side (second player):")
        line = lines[0].strip()
        return line[:1].isupper() and line.endswith((".", ":")) and " " in line
    return len(lines[0]) >= PROSE


def _dedented(lines: list[str]) -> str:
    cut = INDENT if all(line.startswith(INDENT) or not line for line in lines) else ""
    return "\n".join(line.removeprefix(cut).rstrip() for line in lines)
