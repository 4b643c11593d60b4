"""A board's record for download: JSON (every game), plain text (every game) and PGN (the games
whose ``SPEC.record_formats`` name it: Extinction). ``docs/RECORDS.md`` describes them.

Every record is made from the projection (:mod:`pbmserv.core.play.positions`): the moves as
the reader may see them (``moves_seen``), the players, the status and the viewer of the
latest position (``project``). So a record of a running game with hidden information holds
only what its reader's own board mail shows, and once the board is over, everything. A PGN
record is public: it is made only for a game whose moves everyone may see (or a board that is
over), from the public moves.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pbmserv.core.play import numbering
from pbmserv.core.play.boards import Board
from pbmserv.core.play.game_service import (
    board_outcome,
    record_headers,
    starting_state,
)
from pbmserv.core.play.positions import MoveRecord, PositionView, moves_seen, project
from pbmserv.db.times import as_utc

#: The name and version of the JSON record's schema (docs/RECORDS.md); a change that could
#: break a reader bumps the version.
SCHEMA = "pbmserv-record"
SCHEMA_VERSION = 1

PGN = "pgn"


def json_record(board: Board, moves: Sequence[MoveRecord], seat: int | None) -> dict[str, Any]:
    """The board's record as ``seat`` (None: the public) may see it, as JSON data."""
    view = project(board, moves, seat)
    return {
        "schema": SCHEMA,
        "version": SCHEMA_VERSION,
        "game": view.game,
        "title": view.title,
        "board": view.board,
        "options": dict(board.row.options or {}),
        "created": as_utc(board.row.created_at).isoformat(timespec="seconds"),
        "time_control": view.time_control,
        "viewer": view.viewer,
        "players": [{"seat": p.seat, "role": p.role, "userid": p.userid} for p in view.players],
        "plies": view.plies,
        "moves": [
            {
                "ply": m.ply,
                "label": m.label,
                "text": m.text,
                "seat": m.seat,
                "player": m.player,
                "chance": m.chance,
            }
            for m in view.moves
        ],
        "status": "finished" if view.finished else "active",
        "to_move": list(view.to_move),
        "result": _result(board, view),
    }


def _result(board: Board, view: PositionView) -> dict[str, Any] | None:
    outcome = board_outcome(board) if view.finished else None
    if outcome is None:
        return None
    return {
        "winners": sorted(outcome.winners),
        "reason": outcome.reason,
        "termination": outcome.termination.value,
        "scores": (
            {str(s): points for s, points in sorted(outcome.scores.items())}
            if outcome.scores
            else None
        ),
        "text": view.result,
    }


def text_record(board: Board, moves: Sequence[MoveRecord], seat: int | None) -> str:
    """The board's record as ``seat`` (None: the public) may see it, as plain text: a few
    lines about the board, the moves numbered as ``history`` numbers them, and the result."""
    view = project(board, moves, seat)
    players = " vs ".join(f"{p.userid} ({p.role})" for p in view.players)
    lines = [
        f"{view.title} ({view.game}), board {view.board}",
        f"Players: {players}",
    ]
    if board.row.options:
        shown = " ".join(f"-{name}={value}" for name, value in sorted(board.row.options.items()))
        lines.append(f"Options: {shown}")
    lines.append(f"Started: {as_utc(board.row.created_at).strftime('%Y-%m-%d')}")
    if view.time_control:
        lines.append(f"Time control: {view.time_control}")
    played = numbering.played_so_far(board.game.SPEC, view.plies)
    lines += [f"Seen by: {_seen_by(view, seat)}", f"Moves played: {played}", ""]
    lines += [f"  {m.label:>5} {m.text}  ({m.player})" for m in view.moves] or ["  No moves yet."]
    lines.append("")
    if view.finished:
        lines.append(f"Result: {view.result}.")
    elif view.status:
        lines.append(f"Status: {view.status}.")
    return "\n".join(lines) + "\n"


def _seen_by(view: PositionView, seat: int | None) -> str:
    if view.viewer == "everyone":
        return "everyone (the board is over: nothing is hidden)"
    if view.viewer == "public":
        return "the public"
    player = next((p.userid for p in view.players if p.seat == seat), "")
    return f"{player}, {view.viewer}"


def pgn_record(board: Board, moves: Sequence[MoveRecord]) -> str | None:
    """The board as PGN (python-chess's reader and pyffish read it), or None for a game that
    has no PGN record, and for a running board of a game with hidden information (a PGN
    record is public)."""
    game = board.game
    if PGN not in game.SPEC.record_formats:
        return None
    if game.SPEC.hidden_information and not board.finished:
        return None
    return game.export(
        PGN,
        starting_state(board),
        [m.text for m in moves_seen(board, moves, None)],
        board_outcome(board),
        record_headers(board),
    )
