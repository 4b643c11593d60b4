"""A board's records for download (``core/play/records.py``, described in docs/RECORDS.md):
JSON and plain text for every game, PGN for the games that have it; each holds only what its
reader may see."""

from __future__ import annotations

import json

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from pbmserv.core.play.records import json_record, pgn_record, text_record
from pbmserv.web.boards import Opened
from pbmserv.web.headers import etag_of, tagged

KINDS = ("json", "txt", "pgn")
MEDIA_TYPES = {
    "json": "application/json",
    "txt": "text/plain; charset=utf-8",
    "pgn": "application/x-chess-pgn; charset=utf-8",
}


def record(request: Request, opened: Opened, kind: str) -> Response:
    """The board's record as ``kind`` (json, txt or pgn; 404 for a PGN the game has not)."""
    board, moves, seat = opened.board, opened.moves, opened.seat
    pgn = pgn_record(board, moves) if kind == "pgn" else None
    if kind == "pgn" and pgn is None:
        raise HTTPException(404, f"There is no PGN record of this {board.game.SPEC.title} game.")

    def make() -> Response:
        if kind == "json":
            data = json_record(board, moves, seat)
            body = json.dumps(data, ensure_ascii=False, indent=1) + "\n"
        else:
            body = text_record(board, moves, seat) if kind == "txt" else pgn or ""
        filename = f"board-{board.number}.{kind}"
        headers = {"Content-Disposition": f'inline; filename="{filename}"'}
        return Response(body.encode("utf-8"), media_type=MEDIA_TYPES[kind], headers=headers)

    if opened.private:
        return make()
    return tagged(request, etag_of(opened.view().etag, kind, opened.site.version), make)
