"""What every view of the site shares: the settings, the read-only sessions, the kept states,
the templates, and the site's version (part of every ETag: new templates, new tags)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from sqlalchemy.orm import Session, sessionmaker
from starlette.requests import Request
from starlette.responses import HTMLResponse

import pbmserv
from pbmserv.config import Settings
from pbmserv.core.play.positions import PositionView
from pbmserv.resources import templates_dir
from pbmserv.web.kept import Kept
from pbmserv.web.replay import States

#: How many projected views are kept (a few tens of kilobytes each: the picture's SVG).
VIEWS = 512
#: How many finished boards' result texts are kept (a line each), for the feeds.
RESULTS = 4096


def html_environment(root: Path) -> Environment:
    """The pages' templates (``web/...``): every value escaped."""
    return Environment(
        loader=FileSystemLoader(str(root)),
        undefined=StrictUndefined,
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
    )


def text_environment(root: Path) -> Environment:
    """The help texts (``help/...``), rendered as the mail renders them."""
    return Environment(
        loader=FileSystemLoader(str(root)),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
        auto_reload=False,
    )


def site_version(root: Path) -> str:
    """A digest of the server's version and the web templates and static files."""
    digest = hashlib.sha256(pbmserv.__version__.encode())
    for path in sorted((root / "web").rglob("*")):
        if path.is_file():
            digest.update(path.relative_to(root).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


@dataclass
class Site:
    settings: Settings
    sessions: sessionmaker[Session]
    states: States = field(default_factory=States)
    #: Views by (the board's stamp, the seat or None, the ply or None): see web/boards.py.
    views: Kept[Any, PositionView] = field(default_factory=lambda: Kept(VIEWS))
    #: Each board's moves by (board, row version): see web/boards.py.
    moves: Kept[tuple[int, int], tuple[Any, ...]] = field(default_factory=lambda: Kept(VIEWS))
    #: Finished boards' result texts by (board, row version), for the feeds.
    results: Kept[tuple[int, int], str] = field(default_factory=lambda: Kept(RESULTS))
    root: Path = field(default_factory=templates_dir)

    def __post_init__(self) -> None:
        self.html = html_environment(self.root)
        self.text = text_environment(self.root)
        self.version = site_version(self.root)

    def page(
        self,
        template: str,
        context: Mapping[str, Any],
        status_code: int = 200,
        headers: Mapping[str, str] | None = None,
    ) -> HTMLResponse:
        """The page ``web/TEMPLATE.html.j2`` rendered with ``context``."""
        body = self.html.get_template(f"web/{template}.html.j2").render(
            server_address=self.settings.address, **context
        )
        return HTMLResponse(body, status_code=status_code, headers=headers)


def site_of(request: Request) -> Site:
    return cast(Site, request.app.state.site)
