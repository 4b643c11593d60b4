"""The tournaments: ``/tournaments`` (every one but the drafts) and ``/t/ID`` (one: its format,
rounds and state, the standings with their tie-break, a round robin's crosstable, every round's
pairings with their boards), read through :mod:`pbmserv.core.tournaments.web_view`.

Both are public and tagged: the ETag is a digest of what the page shows (so it changes with any
result, pairing or entry, and with the site's version), and a client that has it gets a 304
without the page being rendered.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from pbmserv.core.tournaments import web_view
from pbmserv.web.boards import number_in
from pbmserv.web.database import reading
from pbmserv.web.headers import etag_of, tagged
from pbmserv.web.site import site_of


def tournament(request: Request) -> Response:
    """``/t/ID``: one tournament (404 for a number that is none, or a draft's)."""
    number = number_in(request.path_params["tournament"])
    if number is None:
        raise HTTPException(404)
    site = site_of(request)
    with reading(site.sessions) as session:
        shown = web_view.tournament_page(session, site.settings, number)
    if shown is None:
        raise HTTPException(404, "There is no such tournament here.")
    etag = etag_of(digest(shown), "tournament", site.version)
    return tagged(request, etag, lambda: site.page("tournament", shown))


def tournaments(request: Request) -> Response:
    """``/tournaments``: every tournament but the drafts, as ``tournament list`` lists them."""
    site = site_of(request)
    with reading(site.sessions) as session:
        shown = {"tournaments": web_view.tournament_list(session, site.settings)}
    etag = etag_of(digest(shown), "tournaments", site.version)
    return tagged(request, etag, lambda: site.page("tournaments", shown))


def digest(context: Mapping[str, Any]) -> str:
    """A tag of a page's values (plain dicts, lists, strings and numbers: their repr is
    stable)."""
    return hashlib.sha256(repr(context).encode()).hexdigest()[:20]
