"""The picture of a position, as SVG (the game's own drawing for the reader) and as PNG (drawn
from it as the mail's picture is, ``pictures.raster``)."""

from __future__ import annotations

from functools import lru_cache

from starlette.requests import Request
from starlette.responses import Response

from pbmserv.pictures.raster import png_of
from pbmserv.web.boards import Opened
from pbmserv.web.headers import etag_of, tagged

KINDS = ("svg", "png")
MEDIA_TYPES = {"svg": "image/svg+xml", "png": "image/png"}


@lru_cache(maxsize=256)
def _png(svg: str) -> bytes:
    """A drawing's PNG, kept for the next reader (the same drawing, the same PNG)."""
    return png_of(svg)


def picture(request: Request, opened: Opened, ply: int, kind: str) -> Response:
    """The picture of the position after ``ply`` moves, as ``kind`` (svg or png)."""
    view = opened.view(ply)

    def make() -> Response:
        body = view.svg.encode("utf-8") if kind == "svg" else _png(view.svg)
        return Response(body, media_type=MEDIA_TYPES[kind])

    if opened.private:
        return make()
    return tagged(request, etag_of(view.etag, kind, opened.site.version), make)
