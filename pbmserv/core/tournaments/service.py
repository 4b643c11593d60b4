"""The tournament manager on top of the game service (SPEC section 5).

A tournament creates ordinary boards (each linked to its match). The game service notes each
board's end on the command's context, and whoever runs the command hands it here through
:func:`settle_finished`: when the board's match is complete its result is recorded (and the
poly-ludic tables updated), and when the whole round is over the standings are mailed and the
next round is paired, or the tournament ends.

Everything runs in the caller's transaction. The tournament row is locked before any of its
rows are read, so two boards ending at once in two processes see the round's end only once.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pbmserv.core.context import CommandContext
from pbmserv.core.play import game_service as service
from pbmserv.core.play.board_views import notify_board
from pbmserv.core.results import CommandError
from pbmserv.core.tournaments import report, store
from pbmserv.core.tournaments.mail import mail_pairings, mail_standings
from pbmserv.core.tournaments.state import PlannedRound, pairing_of
from pbmserv.db.models import Entry, GameRow, Match, Tournament, User
from pbmserv.games import find_game
from pbmserv.time_controls import parse_time_control
from pbmserv.tournaments import (
    Format,
    MatchResult,
    Pairing,
    Playability,
    match_games,
    match_result,
)
from pbmserv.tournaments.standings import DRAW, LOSS, WIN

if TYPE_CHECKING:
    pass

log = logging.getLogger("pbmserv.tournament")


# --- starting and pairing -------------------------------------------------------------------


def start(ctx: CommandContext, tournament: Tournament) -> None:
    """Close the entries, fix the number of rounds, and pair round 1."""
    tournament = store.lock_tournament(ctx, tournament.id)
    if tournament.status not in ("draft", "open"):
        raise CommandError(f"tournament {tournament.name} is {tournament.status} already")
    entries = store.entries(ctx, tournament)
    if len(entries) < 2:
        raise CommandError(
            f"tournament {tournament.name} has {len(entries)} entrant(s): it needs two or more"
        )
    tournament.params = {**tournament.params, "rounds": _planned_rounds(tournament, len(entries))}
    rules = store.polyludic(tournament)
    if rules is not None:
        for entry in entries:
            entry.playability = Playability.start(rules).as_mapping()
    tournament.status = "running"
    advance(ctx, tournament)


def _planned_rounds(tournament: Tournament, players: int) -> int | None:
    """The rounds to play: the operator's number for the Swiss systems (by default enough to
    find a winner, log2 of the field), every round of the Berger tables for round robin."""
    format_ = store.tournament_format(tournament)
    # A round robin of an odd field has a round more: everyone sits one out.
    full_cycle = players - 1 + players % 2
    if format_ is Format.KNOCKOUT:
        return None
    if format_ is Format.ROUND_ROBIN:
        return full_cycle
    if format_ is Format.DOUBLE_ROUND_ROBIN:
        return 2 * full_cycle
    rounds = tournament.params.get("rounds") or max(1, (players - 1).bit_length())
    if rounds > full_cycle:
        raise CommandError(
            f"a {format_.value} tournament of {players} players has at most {full_cycle} "
            f"rounds (then everyone has met everyone), not {rounds}"
        )
    return rounds


def pair_next_round(ctx: CommandContext, tournament: Tournament) -> None:
    """The operator pairs the next round by hand (when it did not happen by itself)."""
    tournament = store.lock_tournament(ctx, tournament.id)
    if tournament.status != "running":
        raise CommandError(f"tournament {tournament.name} is {tournament.status}, not running")
    unfinished = [m for m in store.matches(ctx, tournament, tournament.round) if m.status != "done"]
    if unfinished:
        raise CommandError(
            f"round {tournament.round} of {tournament.name} is not over: "
            f"{len(unfinished)} match(es) still to finish"
        )
    advance(ctx, tournament)


def advance(ctx: CommandContext, tournament: Tournament) -> None:
    """The current round is over (or the tournament starts): mail the standings, then pair the
    next round or finish the tournament."""
    progress, entries, matches = report.load_progress(ctx, tournament)
    planned = progress.next_round()
    if planned is None:
        tournament.status = "finished"
    tournament.updated_at = ctx.now()
    if tournament.round > 0:
        finished = [m for m in matches if m.round == tournament.round]
        boards = store.match_boards(ctx, [m.id for m in finished])
        mail_standings(ctx, tournament, progress, entries, finished, boards)
    if planned is not None:
        _create_round(ctx, tournament, planned, entries)


def _advance_safely(ctx: CommandContext, tournament: Tournament) -> None:
    """Advance after a board's end without ever failing the player's command: if pairing goes
    wrong, the round stays complete and unpaired for `admin tournaments pair` to retry."""
    name, notices = tournament.name, len(ctx.notifications)
    savepoint = ctx.session.begin_nested()
    try:
        advance(ctx, tournament)
    except Exception:
        savepoint.rollback()
        del ctx.notifications[notices:]
        log.exception("tournament %s: the next round could not be paired", name)
        return
    savepoint.commit()


def _create_round(
    ctx: CommandContext, tournament: Tournament, planned: PlannedRound, entries: Sequence[Entry]
) -> None:
    tournament.round += 1
    created = [_new_match(ctx, tournament, p.first, p.second, b) for p, b in planned.pairings]
    created += [_new_match(ctx, tournament, player, None, b) for player, b in planned.byes]
    ctx.session.flush()
    withdrawn = {e.user_id for e in entries if e.withdrawn}
    rules = store.polyludic(tournament)
    boards: dict[int, list[GameRow]] = {}
    for match in created:
        if match.second_id is None:
            continue
        if {match.first_id, match.second_id} & withdrawn:
            _record(ctx, tournament, match, _walkover(match, withdrawn), entries)
        elif rules is None:
            match.game = store.labels(tournament)[0]
            match.status = "playing"
            boards[match.id] = create_boards(ctx, tournament, match, planned_games(match))
    mail_pairings(ctx, tournament, entries, created, boards)
    if all(m.status == "done" for m in created):
        # Byes and walkovers only: nothing to play, so the round is over at once.
        advance(ctx, tournament)


def _new_match(
    ctx: CommandContext, tournament: Tournament, first: Any, second: Any, bracket: str
) -> Match:
    now = ctx.now()
    match = Match(
        tournament_id=tournament.id,
        round=tournament.round,
        bracket=bracket,
        first_id=first,
        second_id=second,
        game=None,
        games=tournament.params["match_games"],
        # A bye is done at once; a match waits for its chooser until the boards exist.
        status="done" if second is None else "choosing",
        created_at=now,
        updated_at=now,
    )
    ctx.session.add(match)
    return match


def planned_games(match: Match) -> tuple[Pairing, ...]:
    """The match's games, the first move alternating from the match's first player."""
    return match_games(pairing_of(match), match.games)


def create_boards(
    ctx: CommandContext, tournament: Tournament, match: Match, games: Sequence[Pairing]
) -> list[GameRow]:
    """Create the boards of ``games`` (seat 0 moves first) and mail them like any board."""
    assert match.game is not None, "boards are made once the match's game is known"
    listed = store.listed_game(tournament, match.game)
    game = find_game(listed["name"])
    if game is None:
        raise CommandError(f"the game {listed['name']} is not on this server any more")
    already = len(store.match_boards(ctx, [match.id])[match.id])
    rows = []
    for number, pairing in enumerate(games, start=already + 1):
        players = [ctx.session.get_one(User, p) for p in pairing.players]
        clock = tournament.params.get("clock")
        time_control = parse_time_control(clock) if clock else None
        board = service.create_board(ctx, game, dict(listed["options"]), players, time_control)
        board.row.match_id = match.id
        which = f"game {number} of {match.games}" if number <= match.games else "a deciding game"
        notify_board(
            ctx,
            board,
            f"Tournament {tournament.name}, round {match.round}: {match.game}, {which} of the "
            f"match {players[0].display_id} v {players[1].display_id}.",
        )
        rows.append(board.row)
    return rows


# --- a board's end --------------------------------------------------------------------------


def settle_finished(ctx: CommandContext) -> None:
    """Hand the boards that the command running has ended to their tournaments, in the order
    they ended. Whoever runs commands calls this before the command's work is committed."""
    while ctx.finished_boards:
        board_finished(ctx, ctx.finished_boards.pop(0))


def board_finished(ctx: CommandContext, row: GameRow) -> None:
    """Record a finished board's result in its tournament, if it belongs to one."""
    match_id = row.match_id
    if match_id is None:
        return
    ctx.session.flush()  # the board's end, for the queries below
    match = ctx.session.get(Match, match_id)
    if match is None:
        return
    tournament = store.lock_tournament(ctx, match.tournament_id)
    ctx.session.refresh(match)
    # Done already: a board the operator reopened and that ended again changes nothing.
    if match.status == "playing":
        settle(ctx, tournament, match)


def settle(ctx: CommandContext, tournament: Tournament, match: Match) -> None:
    """Record the match if all its games are over (or play one more, a level knockout), then
    advance if that was the round's last match."""
    boards = store.match_boards(ctx, [match.id])[match.id]
    if any(row.status == "active" for row in boards):
        return
    entries = store.entries(ctx, tournament)
    withdrawn = {e.user_id for e in entries if e.withdrawn}
    if {match.first_id, match.second_id} & withdrawn or not boards:
        result = _walkover(match, withdrawn)
    else:
        result = match_result(
            pairing_of(match),
            [report.board_winner(row) for row in boards],
        )
        if result.points == DRAW and store.tournament_format(tournament) is Format.KNOCKOUT:
            # One more game, first move to the match's second player, until it is decided.
            played = pairing_of(match)
            decider = Pairing(played.second, played.first)
            create_boards(ctx, tournament, match, [decider])
            return
    _record(ctx, tournament, match, result, entries)
    if all(m.status == "done" for m in store.matches(ctx, tournament, tournament.round)):
        _advance_safely(ctx, tournament)


def _walkover(match: Match, withdrawn: set[int]) -> MatchResult:
    """A match a withdrawal decides: the player still in wins it, whatever its games said.
    (With both gone, the first player goes through, so a knockout still has a winner.)"""
    first_gone = match.first_id in withdrawn
    second_gone = match.second_id in withdrawn
    points = LOSS if first_gone and not second_gone else WIN
    played = pairing_of(match)
    return MatchResult(played.first, played.second, points)


def _record(
    ctx: CommandContext,
    tournament: Tournament,
    match: Match,
    result: MatchResult,
    entries: Sequence[Entry],
) -> None:
    match.status = "done"
    match.points = result.points
    match.winner_id = None if result.winner is None else int(result.winner)
    match.updated_at = ctx.now()
    rules = store.polyludic(tournament)
    if rules is None:
        return
    for entry in entries:
        if entry.user_id in (match.first_id, match.second_id) and entry.playability:
            table = Playability.from_mapping(rules, entry.playability).after_match()
            entry.playability = table.as_mapping()
