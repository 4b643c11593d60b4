"""What players do in a running tournament besides playing their boards: choose the game of
a poly-ludic match, look at their own PG table, and withdraw.

Like the rest of the tournament service, each runs in the caller's transaction and locks the
tournament row before it reads the tournament's other rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import select

from pbmserv.core.context import CommandContext
from pbmserv.core.play import game_service
from pbmserv.core.play.board_views import notify_board
from pbmserv.core.play.boards import Board, board_of
from pbmserv.core.results import CommandError
from pbmserv.core.tournaments import store
from pbmserv.core.tournaments.service import (
    create_boards,
    planned_games,
    settle,
    settle_finished,
)
from pbmserv.core.tournaments.state import pairing_of
from pbmserv.db.models import GameRow, Match, Seat, Tournament, User
from pbmserv.games.base import Outcome, Termination
from pbmserv.tournaments import Playability, PolyludicError, choose_game

# --- poly-ludic choices ---------------------------------------------------------------------


@dataclass(frozen=True)
class Choice:
    """A game chosen for a match, and the boards created for it."""

    game: str
    opponent: str
    boards: list[int]
    table: Playability


def choose(ctx: CommandContext, tournament: Tournament, user: User, game: str) -> Choice:
    """The player with the first move chooses the game of their match in this round."""
    tournament = store.lock_tournament(ctx, tournament.id)
    rules = store.polyludic(tournament)
    if rules is None:
        only = store.labels(tournament)[0]
        raise CommandError(f"tournament {tournament.name} plays {only} only: there is no choice")
    if tournament.status != "running":
        raise CommandError(f"tournament {tournament.name} is {tournament.status}, not running")
    current = [m for m in store.matches(ctx, tournament, tournament.round) if m.second_id]
    match = next((m for m in current if m.first_id == user.id and m.status == "choosing"), None)
    if match is None:
        raise _no_choice(tournament, current, user)
    game = _label_for(tournament, game)
    entries = {e.user_id: e for e in store.entries(ctx, tournament)}
    played = pairing_of(match)
    chooser, opponent = entries[int(played.first)], entries[int(played.second)]
    try:
        label, mine, theirs = choose_game(
            Playability.from_mapping(rules, chooser.playability or {}),
            Playability.from_mapping(rules, opponent.playability or {}),
            game,
        )
    except PolyludicError as error:
        raise CommandError(
            str(error),
            hint=f'Your table: "tournament table {tournament.name} {user.display_id} PASSWORD".',
        ) from None
    chooser.playability, opponent.playability = mine.as_mapping(), theirs.as_mapping()
    match.game, match.status, match.updated_at = label, "playing", ctx.now()
    rows = create_boards(ctx, tournament, match, planned_games(match))
    return Choice(label, opponent.user.display_id, [row.id for row in rows], mine)


def _label_for(tournament: Tournament, word: str) -> str:
    """The label of the listed game ``word`` names: its label, or its game's name when one
    label alone has that game."""
    wanted = word.strip().lower()
    listed = tournament.games
    for entry in listed:
        if entry["label"].lower() == wanted:
            return str(entry["label"])
    named = [entry for entry in listed if entry["name"].lower() == wanted]
    if len(named) == 1:
        return str(named[0]["label"])
    both = ", ".join(f"{entry['label']} ({entry['name']})" for entry in listed)
    if named:
        raise CommandError(f"several games of this tournament are {wanted}: name one of {both}")
    raise CommandError(
        f'"{word[:20]}" is not a game of this tournament: the games are {both}',
        syntax_was_right=True,
    )


def _no_choice(tournament: Tournament, current: Sequence[Match], user: User) -> CommandError:
    theirs = next((m for m in current if m.second_id == user.id), None)
    mine = next((m for m in current if m.first_id == user.id), None)
    if theirs is not None and theirs.status == "choosing":
        return CommandError(
            f"{theirs.first.display_id} has the first move in your match and chooses the game"
        )
    chosen = mine or theirs
    if chosen is not None:
        return CommandError(
            f"the game of your match in round {tournament.round} is chosen already: {chosen.game}"
        )
    return CommandError(
        f"{user.display_id} has no match to choose a game for in round {tournament.round} "
        f"of {tournament.name}"
    )


def playability_table(ctx: CommandContext, tournament: Tournament, user: User) -> Playability:
    """The player's own PG table (before the start: the initial one)."""
    rules = store.polyludic(tournament)
    if rules is None:
        raise CommandError(f"tournament {tournament.name} is not poly-ludic: it has no PG table")
    entry = store.entry_of(ctx, tournament, user)
    if entry is None:
        raise CommandError(f"{user.display_id} is not entered in {tournament.name}")
    if entry.playability is None:
        return Playability.start(rules)
    return Playability.from_mapping(rules, entry.playability)


# --- withdrawals ----------------------------------------------------------------------------


def withdraw(ctx: CommandContext, tournament: Tournament, user: User) -> str:
    """Take ``user`` out: before the start the entry goes; after it, their unfinished boards in
    the tournament are lost by forfeit and they are not paired again. Returns what happened."""
    entry = store.entry_of(ctx, tournament, user)
    if entry is None or entry.withdrawn:
        raise CommandError(f"{user.display_id} is not playing in {tournament.name}")
    if tournament.status in ("draft", "open"):
        ctx.session.delete(entry)
        return f"{user.display_id} left {tournament.name} before its start"
    if tournament.status == "finished":
        raise CommandError(f"tournament {tournament.name} is over")
    # Boards first, then the tournament: the order in which a board's end takes its locks.
    boards = _locked_active_boards(ctx, tournament, user)
    tournament = store.lock_tournament(ctx, tournament.id)
    entry.withdrawn = True
    # A match still waiting for its game to be chosen has no board: it ends here. (Taken now:
    # the last forfeit below may end the round and pair the next one.)
    waiting = [
        m
        for m in store.matches(ctx, tournament, tournament.round)
        if m.status == "choosing" and user.id in (m.first_id, m.second_id)
    ]
    reason = f"forfeited: {user.display_id} withdrew from tournament {tournament.name}"
    for board in boards:
        winners = frozenset(s.seat for s in board.row.seats if s.user_id != user.id)
        game_service.conclude(
            ctx, board, Outcome(winners=winners, reason=reason, termination=Termination.FORFEIT)
        )
        board.row.updated_at = ctx.now()
        game_service.record_event(ctx, board, "forfeit", reason)
        notify_board(ctx, board, f"The board was {reason}.")
        settle_finished(ctx)
    for match in waiting:
        settle(ctx, tournament, match)
    forfeited = f"; {len(boards)} board(s) forfeited" if boards else ""
    return f"{user.display_id} withdrew from {tournament.name}{forfeited}"


def _locked_active_boards(ctx: CommandContext, tournament: Tournament, user: User) -> list[Board]:
    query = (
        select(GameRow)
        .join(Match, Match.id == GameRow.match_id)
        .where(
            Match.tournament_id == tournament.id,
            GameRow.status == "active",
            GameRow.seats.any(Seat.user_id == user.id),
        )
        .order_by(GameRow.id)
        .with_for_update(of=GameRow)
        .execution_options(populate_existing=True)
    )
    boards = []
    for row in ctx.session.scalars(query):
        board = board_of(row)
        if board is not None:
            boards.append(board)
    return boards
