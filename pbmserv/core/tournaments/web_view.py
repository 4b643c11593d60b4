"""A tournament as the web view shows it (``/t/ID``) and the list of them (``/tournaments``):
read only, reckoned as the ``tournament show`` reply and the standings mail reckon it
(:mod:`.report`: the same standings rows, tie-breaks and match results), with each person as a
link to their page, each match's boards as links, and a round robin's crosstable.

Everything is read in a fixed number of queries, however many matches there are: the
tournament, its entries (with their users), its matches (with theirs), and the matches' boards
(with their seats). A board's state is never read (loading it raises): of a board the page
shows its number, whether it runs, and once it is over who won, which is public then; so a
running hidden-information board gives nothing away. A draft is no page (as ``tournament
show`` knows no draft).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, defer

from pbmserv.config import Settings
from pbmserv.core.context import CommandContext
from pbmserv.core.tournaments import report, store
from pbmserv.core.tournaments.state import Progress
from pbmserv.db.models import Entry, GameRow, Match, Tournament
from pbmserv.games import find_game
from pbmserv.tournaments import Format, PlayerId

#: A person as the pages show them: their page's address part, and their name (as the
#: standings mail writes it: a robot marked).
Person = dict[str, str]
ROUND_ROBINS = (Format.ROUND_ROBIN, Format.DOUBLE_ROUND_ROBIN)
#: A crosstable mark's letter and what it means, from the row's player's side.
WON, LOST, DRAWN, PLAYING, CHOOSING = "W", "L", "D", "…", "?"
MEANINGS = {
    WON: "won",
    LOST: "lost",
    DRAWN: "drawn",
    PLAYING: "playing",
    CHOOSING: "the game is being chosen",
}


def _context(session: Session, settings: Settings) -> CommandContext:
    """A context for the store's readers (they only read ``ctx.session``); no sender."""
    return CommandContext(session=session, settings=settings, sender=None)


def tournament_list(session: Session, settings: Settings) -> list[dict[str, Any]]:
    """Every tournament but the drafts, as ``tournament list`` lists them."""
    return report.tournament_list(_context(session, settings), drafts=False)


def tournament_page(session: Session, settings: Settings, number: int) -> dict[str, Any] | None:
    """Everything ``/t/NUMBER`` shows, as plain values (None: no such tournament, or a draft)."""
    tournament = session.get(Tournament, number)
    if tournament is None or tournament.status == "draft":
        return None
    ctx = _context(session, settings)
    progress, entries, matches = report.load_progress(ctx, tournament)
    boards = _boards(session, [m.id for m in matches])
    people = _people(entries)
    format_ = store.tournament_format(tournament)
    standings = _standings(progress, entries, people) if matches else []
    return {
        "t": report.describe(tournament, len(entries)),
        "listed": _listed_games(tournament, matches),
        "entries": [
            {"seed": e.seed, "person": people[e.user_id], "withdrawn": e.withdrawn} for e in entries
        ],
        "standings": standings,
        "winners": _winners(tournament, progress, entries, people),
        "crosstable": (
            _crosstable(progress, matches, boards, people, standings)
            if format_ in ROUND_ROBINS
            else None
        ),
        "rounds": _rounds(matches, boards, entries, people),
    }


def _boards(session: Session, match_ids: Sequence[int]) -> dict[int, list[GameRow]]:
    """The boards of each match, oldest first (as :func:`store.match_boards`), in one query and
    their seats in one more; never their state."""
    boards: dict[int, list[GameRow]] = {match_id: [] for match_id in match_ids}
    if not match_ids:
        return boards
    query = (
        select(GameRow)
        .where(GameRow.match_id.in_(match_ids))
        .options(defer(GameRow.state, raiseload=True))
        .order_by(GameRow.id)
    )
    for row in session.scalars(query):
        if row.match_id is not None:
            boards[row.match_id].append(row)
    return boards


def _people(entries: Sequence[Entry]) -> dict[PlayerId, Person]:
    marked = report.standing_names_of(entries)
    return {e.user_id: {"userid": e.user.userid, "name": marked[e.user_id]} for e in entries}


def _standings(
    progress: Progress, entries: Sequence[Entry], people: Mapping[PlayerId, Person]
) -> list[dict[str, Any]]:
    """The standings mail's rows (rank, score, tie-break, note; the same order), each with
    its player as a person."""
    rows = report.standings_rows(progress, report.standing_names_of(entries))
    return [
        {**row, "person": people[standing.player]}
        for standing, row in zip(progress.standings(), rows, strict=True)
    ]


def _winners(
    tournament: Tournament,
    progress: Progress,
    entries: Sequence[Entry],
    people: Mapping[PlayerId, Person],
) -> list[Person]:
    """Who won, as :func:`report.winners` says (it names them by their user ids)."""
    names = report.names_of(entries)
    by_name = {name: people[player] for player, name in names.items()}
    return [by_name[name] for name in report.winners(tournament, progress, names)]


def _listed_games(tournament: Tournament, matches: Sequence[Match]) -> list[dict[str, Any]]:
    """Each listed game: its label, the game and its rules, its options, and how many matches
    were played in it (a poly-ludic tournament's games side by side)."""
    listed = []
    for game in tournament.games:
        found = find_game(game["name"])
        listed.append(
            {
                "label": game["label"],
                "name": game["name"],
                "title": found.SPEC.title if found is not None else game["name"],
                "options": ", ".join(f"{k}={v}" for k, v in game["options"].items()),
                "matches": sum(1 for m in matches if m.game == game["label"]),
            }
        )
    return listed


def _board_link(row: GameRow, names: Mapping[PlayerId, str]) -> dict[str, Any]:
    """A board as a link: its number, and how it stands (a running board: only that)."""
    if row.status == "active":
        said = "playing"
    else:
        winner = report.board_winner(row)
        said = "drawn" if winner is None else f"{names[winner]} won"
    return {"number": row.id, "href": f"/g/{row.id}", "result": said}


def _rounds(
    matches: Sequence[Match],
    boards: Mapping[int, Sequence[GameRow]],
    entries: Sequence[Entry],
    people: Mapping[PlayerId, Person],
) -> list[dict[str, Any]]:
    """Every round paired so far: its matches (the mail's rows, the players as people and the
    boards as links) and its byes."""
    names = report.names_of(entries)
    rounds: dict[int, dict[str, Any]] = {}
    for match in matches:
        shown = rounds.setdefault(match.round, {"round": match.round, "matches": [], "byes": []})
        if match.second_id is None:
            shown["byes"].append({"person": people[match.first_id], "bracket": match.bracket})
            continue
        row = report.match_row(match, boards[match.id], names)
        shown["matches"].append(
            {
                **row,
                "first": people[match.first_id],
                "second": people[match.second_id],
                "boards": [_board_link(b, names) for b in boards[match.id]],
            }
        )
    return [rounds[number] for number in sorted(rounds)]


def _crosstable(
    progress: Progress,
    matches: Sequence[Match],
    boards: Mapping[int, Sequence[GameRow]],
    people: Mapping[PlayerId, Person],
    standings: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """Players in the standings' order (seed order before any result) down and across; each
    cell the matches between the two, from the row's player's side, each with its boards."""
    player_of = {person["userid"]: player for player, person in people.items()}
    order = [player_of[s["person"]["userid"]] for s in standings] or list(progress.seeds)
    index = {player: i for i, player in enumerate(order)}
    cells: list[list[list[dict[str, Any]]]] = [[[] for _ in order] for _ in order]
    names = {player: person["name"] for player, person in people.items()}
    for match in matches:
        if match.second_id is None or match.first_id not in index or match.second_id not in index:
            continue
        first, second = index[match.first_id], index[match.second_id]
        played = boards[match.id]
        cells[first][second].append(_mark(match, played, match.first_id, names))
        cells[second][first].append(_mark(match, played, match.second_id, names))
    by_user = {s["person"]["userid"]: s for s in standings}
    rows = []
    for i, player in enumerate(order):
        standing = by_user.get(people[player]["userid"])
        rows.append(
            {
                "number": i + 1,
                "person": people[player],
                "withdrawn": player in progress.withdrawn,
                "score": standing["score"] if standing else "0",
                "tiebreak": standing["tiebreak"] if standing else "0",
                "cells": [{"self": i == j, "marks": cells[i][j]} for j in range(len(order))],
            }
        )
    return {"columns": [{"number": r["number"], "person": r["person"]} for r in rows], "rows": rows}


def _mark(
    match: Match, played: Sequence[GameRow], player: PlayerId, names: Mapping[PlayerId, str]
) -> dict[str, Any]:
    """One match in a crosstable cell, from ``player``'s side: its letter, what it means, and
    its boards (each with its own letter when the match has several)."""
    opponent = match.second_id if player == match.first_id else match.first_id
    assert opponent is not None
    letter = _match_letter(match, player)
    links = [
        {"href": f"/g/{row.id}", "number": row.id, "letter": _board_letter(row, player)}
        for row in played
    ]
    what = MEANINGS[letter]
    label = f"{names[player]} v {names[opponent]}, round {match.round}: {what}"
    if not played and match.status == "done":
        label += " (walkover)"
    return {"letter": letter, "label": label, "boards": links}


def _match_letter(match: Match, player: PlayerId) -> str:
    if match.status == "choosing":
        return CHOOSING
    if match.status != "done":
        return PLAYING
    if match.points is not None:
        points = match.points if player == match.first_id else 1.0 - match.points
        return WON if points == 1.0 else LOST if points == 0.0 else DRAWN
    if match.winner_id is None:
        return DRAWN
    return WON if match.winner_id == player else LOST


def _board_letter(row: GameRow, player: PlayerId) -> str:
    if row.status == "active":
        return PLAYING
    winner = report.board_winner(row)
    return DRAWN if winner is None else WON if winner == player else LOST
