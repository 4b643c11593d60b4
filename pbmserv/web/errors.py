"""Plain error pages: whatever goes wrong, a short page of the site, never a traceback, and a
500 says nothing of what failed (the log has that)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from http import HTTPStatus

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Scope

from pbmserv.web.headers import headers_for
from pbmserv.web.site import Site

log = logging.getLogger("pbmserv.web")

#: What each error says to the reader (no detail from inside the server).
EXPLANATIONS = {
    400: "This address asks for something the site cannot read.",
    404: "There is no such page here.",
    405: "This site only shows pages: it takes nothing sent to it.",
    500: "Something went wrong on our side. Please try again later.",
}


def error_response(
    site: Site, status: int, detail: str | None = None, headers: Mapping[str, str] | None = None
) -> Response:
    """The error page for ``status``; ``detail`` (plain words for the reader) above the rest."""
    phrase = _phrase(status)
    context = {
        "status": status,
        "phrase": phrase,
        "detail": detail if detail and detail != phrase else None,
        "explanation": EXPLANATIONS.get(status, EXPLANATIONS[400 if status < 500 else 500]),
    }
    return site.page("error", context, status_code=status, headers=headers)


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


class Handlers:
    """The app's exception handlers, over its site."""

    def __init__(self, site: Site) -> None:
        self.site = site

    def page_for(self, scope: Scope, status: int) -> Response:
        return error_response(self.site, status)

    def http_error(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 304:
            return Response(status_code=304, headers=exc.headers)
        return error_response(self.site, exc.status_code, exc.detail, exc.headers)

    def server_error(self, request: Request, exc: Exception) -> Response:
        """Outside the other middleware (Starlette's own order): the headers are set here."""
        log.exception("web view: %s failed", request.method, exc_info=exc)
        response = error_response(self.site, 500)
        response.headers.update(headers_for(request.url.path))
        return response
