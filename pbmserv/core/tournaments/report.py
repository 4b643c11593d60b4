"""What a tournament looks like to people: plain dicts for the mail templates, `tournament show`
and the operator's shell (JSON-ready: strings, numbers, lists)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import func, select

from pbmserv.core.context import CommandContext
from pbmserv.core.robots.identity import is_robot
from pbmserv.core.tournaments import store
from pbmserv.core.tournaments.state import Progress, progress_of
from pbmserv.db.models import Entry, GameRow, Match, Tournament
from pbmserv.tournaments import Format, PlayerId, Tiebreak

FORMAT_TITLES = {
    Format.KNOCKOUT: "knockout",
    Format.ROUND_ROBIN: "round robin",
    Format.DOUBLE_ROUND_ROBIN: "double round robin",
    Format.SWISS: "Swiss",
    Format.ITALO_SWISS: "Italo-Swiss",
}
TIEBREAK_TITLES = {Tiebreak.BUCHHOLZ: "Buchholz", Tiebreak.SONNEBORN_BERGER: "Sonneborn-Berger"}


def points_text(value: float) -> str:
    """1, 0.5, 2.5: scores as people write them."""
    return f"{value:g}"


def board_winner(row: GameRow) -> int | None:
    """The user who won a finished board, or None for a draw."""
    winners = (row.result or {}).get("winners", [])
    if len(winners) != 1:
        return None
    return next(s.user_id for s in row.seats if s.seat == winners[0])


def game_points(match: Match, boards: Sequence[GameRow]) -> tuple[float, float]:
    """The game points of (first, second) over the match's finished boards."""
    first = second = 0.0
    for row in boards:
        if row.status == "active":
            continue
        winner = board_winner(row)
        first += 1.0 if winner == match.first_id else 0.5 if winner is None else 0.0
        second += 1.0 if winner == match.second_id else 0.5 if winner is None else 0.0
    return first, second


def describe(tournament: Tournament, entrants: int) -> dict[str, Any]:
    """The tournament's settings and state in one record."""
    format_ = store.tournament_format(tournament)
    params = tournament.params
    poly = params.get("polyludic")
    return {
        "id": tournament.id,
        "name": tournament.name,
        "format": format_.value,
        "format_title": FORMAT_TITLES[format_],
        "status": tournament.status,
        "round": tournament.round,
        "rounds": params.get("rounds"),
        "match_games": params["match_games"],
        "repechage": params["repechage"],
        "games": [_game_text(g) for g in tournament.games],
        "labels": store.labels(tournament),
        "polyludic": _polyludic_text(poly) if poly else None,
        "tiebreak": TIEBREAK_TITLES.get(format_.tiebreak),
        "entrants": entrants,
    }


def _polyludic_text(poly: Mapping[str, Any]) -> str:
    """ "PG 5, PS 3, PC 1, LP 1/2" (PG per game when they differ)."""
    values = set(poly["pg"].values())
    pg = (
        f"PG {values.pop()}"
        if len(values) == 1
        else "PG " + ", ".join(f"{label} {pg}" for label, pg in poly["pg"].items())
    )
    return f"{pg}, PS {poly['ps']}, PC {poly['pc']}, LP {poly['lp']}"


def _game_text(game: Mapping[str, Any]) -> str:
    """ "small (chameleon, size=3)", or "chameleon (size=5)" when the label is the name."""
    details = [f"{k}={v}" for k, v in game["options"].items()]
    if game["label"] != game["name"]:
        details.insert(0, game["name"])
    return f"{game['label']} ({', '.join(details)})" if details else game["label"]


def match_row(
    match: Match, boards: Sequence[GameRow], names: Mapping[PlayerId, str]
) -> dict[str, Any]:
    """One match for people: who, which game, which boards, and how it stands."""
    first = names[match.first_id]
    second = names[match.second_id] if match.second_id is not None else None
    return {
        "round": match.round,
        "bracket": match.bracket,
        "first": first,
        "second": second,
        "game": match.game,
        "boards": [row.id for row in boards],
        "status": match.status,
        "result": _result_text(match, boards, names),
    }


def _result_text(match: Match, boards: Sequence[GameRow], names: Mapping[PlayerId, str]) -> str:
    if match.second_id is None:
        return "bye"
    if match.status == "choosing":
        return f"{names[match.first_id]} chooses the game"
    if match.status != "done":
        return "playing"
    if not boards:
        return f"{names[match.winner_id]} won by walkover" if match.winner_id else "walkover"
    first, second = game_points(match, boards)
    score = f"{points_text(first)}-{points_text(second)}"
    if match.winner_id is None:
        return f"drawn {score}"
    return f"{names[match.winner_id]} won {score}"


def standings_rows(progress: Progress, names: Mapping[PlayerId, str]) -> list[dict[str, Any]]:
    """The standings table: rank, player, score, tie-break, and a note (withdrawn, out...)."""
    knockout = progress.knockout() if progress.format is Format.KNOCKOUT else None
    still_in = set(knockout.pending.players) if knockout and not knockout.finished else set()
    rows = []
    for standing in progress.standings():
        player = standing.player
        note = "withdrawn" if player in progress.withdrawn else ""
        if knockout is not None and not note:
            if knockout.champion == player:
                note = "champion"
            elif not knockout.finished:
                note = "still in" if player in still_in else "out"
        rows.append(
            {
                "rank": standing.rank,
                "player": names[player],
                "score": points_text(standing.score),
                "tiebreak": points_text(standing.tiebreak),
                "note": note,
            }
        )
    return rows


def winners(tournament: Tournament, progress: Progress, names: Mapping[PlayerId, str]) -> list[str]:
    """Who won a finished tournament (several when they share first place)."""
    if tournament.status != "finished":
        return []
    if progress.format is Format.KNOCKOUT:
        champion = progress.knockout().champion
        return [names[champion]] if champion is not None else []
    return [names[s.player] for s in progress.standings() if s.rank == 1]


def names_of(entries: Sequence[Entry]) -> dict[PlayerId, str]:
    return {e.user_id: e.user.display_id for e in entries}


def standing_names_of(entries: Sequence[Entry]) -> dict[PlayerId, str]:
    """The names in a standings table: a robot marked as one, as in the ratings."""
    return {
        e.user_id: e.user.display_id + (" (robot)" if is_robot(e.user) else "") for e in entries
    }


def load_progress(
    ctx: CommandContext, tournament: Tournament
) -> tuple[Progress, list[Entry], list[Match]]:
    """The tournament's rows and the pure state rebuilt from them."""
    entries = store.entries(ctx, tournament)
    matches = store.matches(ctx, tournament)
    format_ = store.tournament_format(tournament)
    return progress_of(format_, tournament.params, entries, matches), entries, matches


def show(ctx: CommandContext, tournament: Tournament) -> dict[str, Any]:
    """Everything about a tournament: settings, entrants, rounds, standings, winners."""
    progress, entries, matches = load_progress(ctx, tournament)
    names, marked = names_of(entries), standing_names_of(entries)
    boards = store.match_boards(ctx, [m.id for m in matches])
    rounds: dict[int, list[dict[str, Any]]] = {}
    for match in matches:
        rounds.setdefault(match.round, []).append(match_row(match, boards[match.id], names))
    return {
        **describe(tournament, len(entries)),
        "entries": [
            {"seed": e.seed, "player": marked[e.user_id], "withdrawn": e.withdrawn} for e in entries
        ],
        "rounds_played": [{"round": r, "matches": ms} for r, ms in sorted(rounds.items())],
        "standings": standings_rows(progress, marked) if matches else [],
        "winners": winners(tournament, progress, names),
    }


def tournament_list(ctx: CommandContext, *, drafts: bool) -> list[dict[str, Any]]:
    """One line per tournament (drafts only for the operator)."""
    counts = dict(
        ctx.session.execute(
            select(Entry.tournament_id, func.count()).group_by(Entry.tournament_id)
        ).all()
    )
    query = select(Tournament).order_by(Tournament.id)
    if not drafts:
        query = query.where(Tournament.status != "draft")
    return [
        {
            "id": t.id,
            "name": t.name,
            "format": FORMAT_TITLES[store.tournament_format(t)],
            "status": t.status,
            "round": t.round,
            "entrants": counts.get(t.id, 0),
            "games": ", ".join(store.labels(t)),
        }
        for t in ctx.session.scalars(query)
    ]
