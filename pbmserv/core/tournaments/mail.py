"""The tournament's own mail: each round's pairings and the standings after each round, to every
player still in it. (The boards' mail comes from the game service, as for any board.)"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pbmserv.core.context import CommandContext
from pbmserv.core.results import Notification
from pbmserv.core.tournaments import report, store
from pbmserv.core.tournaments.state import Progress
from pbmserv.db.models import Entry, GameRow, Match, Tournament
from pbmserv.tournaments import Playability, PlayerId


def _recipients(entries: Sequence[Entry]) -> list[Entry]:
    return [e for e in entries if not e.withdrawn and not e.user.disabled]


def _send(ctx: CommandContext, entry: Entry, kind: str, context: dict[str, Any]) -> None:
    ctx.notify(
        Notification(
            to=entry.user.email,
            channel="notice",
            kind=kind,
            data={**context, "userid": entry.user.display_id},
        )
    )


def _played(
    round_matches: Sequence[Match],
    boards: Mapping[int, Sequence[GameRow]],
    names: Mapping[PlayerId, str],
) -> list[dict[str, Any]]:
    """The round's matches (byes apart) as the templates show them."""
    return [
        report.match_row(m, boards.get(m.id, ()), names)
        for m in round_matches
        if m.second_id is not None
    ]


def mail_pairings(
    ctx: CommandContext,
    tournament: Tournament,
    entries: Sequence[Entry],
    round_matches: Sequence[Match],
    boards: Mapping[int, Sequence[GameRow]],
) -> None:
    """Tell every player who plays whom this round, on which boards, and who must choose."""
    names = report.names_of(entries)
    context = {
        "tournament": report.describe(tournament, len(entries)),
        "matches": _played(round_matches, boards, names),
        "byes": [names[m.first_id] for m in round_matches if m.second_id is None],
    }
    for entry in _recipients(entries):
        match = next((m for m in round_matches if entry.user_id in (m.first_id, m.second_id)), None)
        yours = _your_match(tournament, entry, match, boards, names)
        _send(ctx, entry, "tournament_pairings", {**context, "yours": yours})


def _your_match(
    tournament: Tournament,
    entry: Entry,
    match: Match | None,
    boards: Mapping[int, Sequence[GameRow]],
    names: Mapping[PlayerId, str],
) -> dict[str, Any] | None:
    """The recipient's own part of the round: opponent, first move, the game to choose."""
    if match is None:
        return None
    if match.second_id is None:
        return {"bye": True}
    mine_first = match.first_id == entry.user_id
    opponent = match.second_id if mine_first else match.first_id
    choosing = match.status == "choosing"
    rules = store.polyludic(tournament)
    open_games = (
        list(Playability.from_mapping(rules, entry.playability or {}).playable())
        if choosing and mine_first and rules is not None
        else []
    )
    return {
        "bye": False,
        "opponent": names[opponent],
        "first": mine_first,
        "choose": choosing and mine_first,
        "waiting_for_choice": choosing and not mine_first,
        "open_games": open_games,
        "walkover": match.status == "done" and not boards.get(match.id),
        "boards": [row.id for row in boards.get(match.id, ())],
        "game": match.game,
    }


def mail_standings(
    ctx: CommandContext,
    tournament: Tournament,
    progress: Progress,
    entries: Sequence[Entry],
    round_matches: Sequence[Match],
    boards: Mapping[int, Sequence[GameRow]],
) -> None:
    """The round's results and the standings (with the tie-break), or the final standings."""
    names = report.names_of(entries)
    final = tournament.status == "finished"
    context = {
        "tournament": report.describe(tournament, len(entries)),
        "results": _played(round_matches, boards, names),
        "standings": report.standings_rows(progress, report.standing_names_of(entries)),
        "final": final,
        "winners": report.winners(tournament, progress, names),
        "round": max((m.round for m in round_matches), default=tournament.round),
    }
    for entry in _recipients(entries):
        _send(ctx, entry, "tournament_standings", context)


def mail_entry_notice(
    ctx: CommandContext, tournament: Tournament, entry: Entry, *, entered: bool
) -> None:
    """Tell a player that the operator entered them in the tournament, or withdrew them."""
    if entry.user.disabled:
        return
    context = {"tournament": report.describe(tournament, 0), "entered": entered}
    _send(ctx, entry, "tournament_entry", context)
