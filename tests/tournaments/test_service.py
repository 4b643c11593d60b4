"""The tournament manager on a real database: players mail commands, the operator works at the
shell's core, boards end by resignation or ruling, and the rounds follow one another.

Each mail command and each operator action is its own transaction, as in the server.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import Engine, select, text

from pbmserv.config import Settings
from pbmserv.core import admin as ops
from pbmserv.core.context import CommandContext
from pbmserv.core.dispatch import dispatch_line
from pbmserv.core.maintenance import run_maintenance
from pbmserv.core.results import CommandError, Section
from pbmserv.core.timing.clock_sweep import sweep_clocks
from pbmserv.core.tournaments import players as tournament_players
from pbmserv.core.tournaments import service, store
from pbmserv.core.tournaments.setup import (
    PolyludicParams,
    create_tournament,
    enter,
    open_tournament,
)
from pbmserv.db.engine import make_engine, session_factory, transaction
from pbmserv.db.models import Entry, GameRow, Match, MoveRow, Tournament, User
from pbmserv.db.times import utcnow
from pbmserv.outbound.compose import render_notice, render_section
from pbmserv.outbound.wording import notice_subject
from pbmserv.tournaments import (
    MatchResult,
    Pairing,
    RoundPairing,
    compute_standings,
    swiss_pairings,
)

pytestmark = pytest.mark.db

SERVER = "pbmserv@example.org"


def password(userid: str) -> str:
    return f"pw-{userid}"


def address(userid: str) -> str:
    return f"{userid}@example.org"


class Desk:
    """Players mailing commands and an operator at the shell, on one database. Every mail
    the server would send is rendered (so every template is checked) and kept."""

    def __init__(self, engine: Engine) -> None:
        self.factory = session_factory(engine)
        self.mail: list[tuple[str, str, str]] = []  # (to, subject, body)

    def _keep(self, ctx: CommandContext) -> None:
        for note in ctx.notifications:
            self.mail.append((note.to, notice_subject(note), render_notice(note, SERVER)))

    def send(self, line: str, userid: str) -> Section:
        """One command mailed by ``userid``; its reply text is set on the section."""
        with transaction(self.factory) as session:
            ctx = CommandContext(session, Settings(confirm_addresses=False), address(userid))
            section = dispatch_line(ctx, line)
            section.text = render_section(section, SERVER)
            self._keep(ctx)
        return section

    def operate(self, action: Callable[[CommandContext], Any]) -> Any:
        """One operator action in its own transaction."""
        with transaction(self.factory) as session:
            ctx = CommandContext(session, Settings(confirm_addresses=False), None)
            result = action(ctx)
            self._keep(ctx)
        return result

    def new_mail(self) -> list[tuple[str, str, str]]:
        fresh, self.mail = self.mail, []
        return fresh

    def signup(self, *userids: str) -> None:
        for userid in userids:
            assert self.send(f"signup {userid} {password(userid)}", userid).ok

    def create(self, name: str, format_: str, games: Iterable[str], **kwargs: Any) -> None:
        """The operator creates a tournament and opens it for entries."""
        self.operate(
            lambda ctx: open_tournament(
                ctx, create_tournament(ctx, name, format_, list(games), **kwargs)
            )
        )

    def join(self, name: str, *userids: str) -> None:
        for userid in userids:
            section = self.send(f"tournament join {name} {userid} {password(userid)}", userid)
            assert section.ok, section.text

    def begin(
        self, name: str, format_: str, games: list[str], players: list[str], **kwargs: Any
    ) -> None:
        """Players sign up and join by mail; the operator creates, opens and starts."""
        self.signup(*players)
        self.create(name, format_, games, **kwargs)
        self.join(name, *players)
        self.start(name)

    def start(self, name: str) -> None:
        self.operate(lambda ctx: service.start(ctx, store.find_tournament(ctx, name)))

    def withdraw(self, name: str, userid: str) -> str:
        """The operator withdraws a player."""
        return self.operate(
            lambda ctx: tournament_players.withdraw(
                ctx, store.find_tournament(ctx, name), ctx.require_user(userid)
            )
        )

    def query(self, statement: Any) -> list[Any]:
        with self.factory() as session:
            return list(session.execute(statement).all())

    def user_ids(self) -> dict[int, str]:
        return dict(self.query(select(User.id, User.userid)))

    def round_matches(self, round_number: int) -> list[tuple[str, str | None, str]]:
        """(first, second or None for a bye, status) of each match of a round."""
        names = self.user_ids()
        rows = self.query(
            select(Match.first_id, Match.second_id, Match.status)
            .where(Match.round == round_number)
            .order_by(Match.id)
        )
        return [(names[f], names.get(s) if s else None, status) for f, s, status in rows]

    def active_boards(self) -> list[tuple[int, str, str]]:
        """(board, seat 0's user, seat 1's user) of every unfinished tournament board."""
        rows = self.query(
            select(GameRow).where(GameRow.status == "active", GameRow.match_id.is_not(None))
        )
        boards = []
        for (row,) in rows:
            seats = {s.seat: s.user.userid for s in row.seats}
            boards.append((row.id, seats[0], seats[1]))
        return sorted(boards)

    def resign(self, board: int, userid: str) -> None:
        line = f"chameleon resign {board} {userid} {password(userid)}"
        assert self.send(line, userid).ok

    def play_round(self, winner: Callable[[str, str], str]) -> None:
        """End every open board: ``winner(first, second)`` says who wins; the other resigns."""
        for board, first, second in self.active_boards():
            loser = second if winner(first, second) == first else first
            self.resign(board, loser)

    def status(self, name: str) -> tuple[str, int]:
        """The tournament's status and current round."""
        [(status, round_number)] = self.query(
            select(Tournament.status, Tournament.round).where(Tournament.name == name)
        )
        return status, round_number


@pytest.fixture
def desk(engine: Engine) -> Desk:
    return Desk(engine)


def seed_order(players: list[str]) -> Callable[[str, str], str]:
    """The better seed (earlier in ``players``) wins."""
    return lambda a, b: a if players.index(a) < players.index(b) else b


# --- knockout ---------------------------------------------------------------------------------


def test_knockout_of_five_gives_byes_to_the_top_seeds_and_crowns_the_best(desk: Desk) -> None:
    players = ["ann", "bob", "cat", "dan", "eve"]
    desk.begin("cup", "knockout", ["chameleon:size=3"], players)
    # 8 places: 1 v 8, 4 v 5, 2 v 7, 3 v 6; the missing seeds 6-8 are byes for seeds 1-3.
    assert desk.round_matches(1) == [
        ("dan", "eve", "playing"),
        ("ann", None, "done"),
        ("bob", None, "done"),
        ("cat", None, "done"),
    ]
    pairings = [m for m in desk.new_mail() if "pairings" in m[1]]
    assert sorted(to for to, _, _ in pairings) == sorted(address(p) for p in players)
    ann_mail = next(body for to, _, body in pairings if to == address("ann"))
    assert "You have a bye this round: you go through to the next round." in ann_mail
    assert "dan v eve (main): chameleon, board 1 - playing" in ann_mail

    desk.play_round(lambda first, second: second)  # eve beats dan: the lower seed goes on
    # Round 2 in bracket order: ann v eve (the winner of 4 v 5), bob v cat; eve moved
    # second in round 1, so she moves first now.
    assert desk.round_matches(2) == [("eve", "ann", "playing"), ("bob", "cat", "playing")]
    standings = next(body for to, subject, body in desk.new_mail() if "after round 1" in subject)
    assert "dan v eve (main): chameleon, board 1 - eve won 0-1" in standings
    desk.play_round(seed_order(players))
    assert desk.round_matches(3) == [("ann", "bob", "playing")]
    desk.play_round(seed_order(players))
    assert desk.status("cup") == ("finished", 3)
    final = [m for m in desk.new_mail() if m[1] == "tournament cup: final standings"]
    assert len(final) == 5
    assert "The tournament is over. Winner: ann." in final[0][2]
    assert "champion" in final[0][2]


def test_knockout_with_repechage_ends_in_a_final_of_the_two_winners(desk: Desk) -> None:
    players = ["ann", "bob", "cat", "dan"]
    desk.begin("rep", "knockout", ["chameleon:size=3"], players, repechage=True)
    assert desk.round_matches(1) == [("ann", "dan", "playing"), ("bob", "cat", "playing")]
    desk.play_round(seed_order(players))
    # The main final, and the consolation between the first round's losers.
    assert desk.round_matches(2) == [("ann", "bob", "playing"), ("cat", "dan", "playing")]
    desk.play_round(lambda first, second: "dan" if "dan" in (first, second) else "ann")
    assert desk.round_matches(3) == [("dan", "ann", "playing")]
    with desk.factory() as session:
        assert session.scalar(select(Match.bracket).where(Match.round == 3)) == "final"
    desk.play_round(lambda first, second: "dan")  # the repechage winner takes it all
    assert desk.status("rep") == ("finished", 3)
    final = [body for _, subject, body in desk.new_mail() if "final standings" in subject]
    assert "Winner: dan." in final[0]


def test_a_level_knockout_match_is_decided_by_one_more_game(desk: Desk) -> None:
    desk.begin("duel", "knockout", ["chameleon:size=3"], ["ann", "bob"], match_games=2)
    # Two games, the first move alternating; one win each.
    assert [(a, b) for _, a, b in desk.active_boards()] == [("ann", "bob"), ("bob", "ann")]
    desk.play_round(lambda first, second: first)
    # Level at 1-1: one more game, bob (second in the first game) moving first.
    [(decider, first, second)] = desk.active_boards()
    assert (first, second) == ("bob", "ann")
    assert desk.status("duel") == ("running", 1)
    # A drawn decider (an operator's ruling) leaves it level: yet another game.
    desk.operate(lambda ctx: ops.adjudicate(ctx, str(decider), None))
    [(_, first, second)] = desk.active_boards()
    assert (first, second) == ("bob", "ann")
    desk.play_round(lambda first, second: "ann")
    assert desk.status("duel") == ("finished", 1)
    final = next(body for _, subject, body in desk.new_mail() if "final standings" in subject)
    assert "ann v bob (main): chameleon, boards 1, 2, 3, 4 - ann won 2.5-1.5" in final


# --- round robin and Swiss --------------------------------------------------------------------


def test_round_robin_of_four_to_the_end(desk: Desk) -> None:
    players = ["ann", "bob", "cat", "dan"]
    desk.begin("league", "roundrobin", ["chameleon:size=3"], players)
    met: list[frozenset[str]] = []
    firsts = dict.fromkeys(players, 0)
    for round_number in (1, 2, 3):
        matches = desk.round_matches(round_number)
        assert len(matches) == 2 and all(m[2] == "playing" for m in matches)
        for first, second, _ in matches:
            met.append(frozenset((first, second)))
            firsts[first] += 1
        desk.play_round(seed_order(players))
    assert sorted(map(sorted, met)) == sorted(
        [a, b] for i, a in enumerate(players) for b in players[i + 1 :]
    )
    assert max(firsts.values()) - min(firsts.values()) <= 1
    assert desk.status("league") == ("finished", 3)
    final = next(body for _, subject, body in desk.new_mail() if "final standings" in subject)
    assert "Sonneborn-Berger" in final
    # ann 3 (beat bob 2, cat 1, dan 0: SB 3), bob 2 (SB 1), cat 1 (SB 0), dan 0.
    rows = [line.split() for line in final.splitlines() if line.startswith("  ")][-4:]
    assert rows == [["1", "ann", "3", "3"], ["2", "bob", "2", "1"], ["3", "cat", "1", "0"],
                    ["4", "dan", "0", "0"]]  # fmt: skip


def test_a_robot_the_operator_entered_plays_and_is_marked_in_the_standings(desk: Desk) -> None:
    desk.signup("ann", "bob")
    desk.create("bots", "roundrobin", ["chameleon:size=3"])
    desk.join("bots", "ann", "bob")
    desk.operate(
        lambda ctx: enter(ctx, store.find_tournament(ctx, "bots"), ctx.require_user("robot2"))
    )
    desk.start("bots")
    for _round in (1, 2, 3):  # the people resign to the robot; ann beats bob
        desk.play_round(lambda a, b: "robot2" if "robot2" in (a, b) else "ann")
    assert desk.status("bots") == ("finished", 3)
    final = next(body for _, subject, body in desk.new_mail() if "final standings" in subject)
    rows = [line.split() for line in final.splitlines() if line.startswith("  ")][-3:]
    assert [row[:2] for row in rows] == [["1", "robot2"], ["2", "ann"], ["3", "bob"]]
    assert rows[0][2] == "(robot)" and "(robot)" not in rows[1] + rows[2]
    shown = desk.send("tournament show bots", "ann").text
    assert "robot2 (robot)" in shown
    assert not any(to.endswith("@robots.invalid") for to, _, _ in desk.mail)  # none mailed


def test_double_round_robin_of_three_meets_twice_with_the_first_move_reversed(desk: Desk) -> None:
    players = ["ann", "bob", "cat"]
    desk.begin("twice", "double-roundrobin", ["chameleon:size=3"], players)
    games: list[tuple[str, str]] = []
    byes: list[str] = []
    for round_number in range(1, 7):  # 3 rounds a cycle (each with a bye), two cycles
        for first, second, _ in desk.round_matches(round_number):
            if second is None:
                byes.append(first)
            else:
                games.append((first, second))
        desk.play_round(seed_order(players))
    assert desk.status("twice") == ("finished", 6)
    assert sorted(games) == sorted(games[:3] + [(b, a) for a, b in games[:3]])
    assert sorted(byes) == ["ann", "ann", "bob", "bob", "cat", "cat"]


def test_swiss_of_five_gives_one_bye_a_round_never_twice(desk: Desk) -> None:
    players = ["ann", "bob", "cat", "dan", "eve"]
    desk.begin("open5", "swiss", ["chameleon:size=3"], players)
    byes = []
    for round_number in (1, 2, 3):  # log2 of 5, rounded up: three rounds by default
        matches = desk.round_matches(round_number)
        [bye] = [first for first, second, _ in matches if second is None]
        byes.append(bye)
        desk.play_round(seed_order(players))
    assert byes[0] == "eve"  # the lowest ranked
    assert len(set(byes)) == 3
    assert desk.status("open5") == ("finished", 3)
    final = next(body for _, subject, body in desk.new_mail() if "final standings" in subject)
    assert "Buchholz" in final and "Winner: ann." in final


def test_italo_swiss_pairs_neighbours(desk: Desk) -> None:
    players = ["ann", "bob", "cat", "dan"]
    desk.begin("italo4", "italo", ["chameleon:size=3"], players, rounds=2)
    assert [m[:2] for m in desk.round_matches(1)] == [("ann", "bob"), ("cat", "dan")]


# --- withdrawals ------------------------------------------------------------------------------


def test_withdrawal_forfeits_the_active_board_and_walks_over_later_rounds(desk: Desk) -> None:
    players = ["ann", "bob", "cat", "dan"]
    desk.begin("league", "roundrobin", ["chameleon:size=3"], players)
    [(cat_board, *_)] = [b for b in desk.active_boards() if "cat" in b[1:]]
    desk.new_mail()
    reply = desk.send(f"tournament withdraw league cat {password('cat')}", "cat")
    assert reply.ok and "cat withdrew from league; 1 board(s) forfeited" in reply.text
    assert f"tournament withdraw league cat {'*' * 8}" == reply.command  # password masked
    with desk.factory() as session:
        row = session.get(GameRow, cat_board)
        assert row.status == "finished"
        assert "forfeited: cat withdrew from tournament league" in row.result["reason"]
        assert session.scalar(select(MoveRow.kind).where(MoveRow.game_id == cat_board)) == "forfeit"
    # One subject for the board's thread; each mail's first line tells what happened.
    board_mail = [m for m in desk.new_mail() if m[2].startswith(f"chameleon board {cat_board}:")]
    assert {subject for _, subject, _ in board_mail} == {f"chameleon board {cat_board}"}
    states = sorted(body.split("\n")[0].split(": ")[1] for _, _, body in board_mail)
    assert states == ["you lost", "you won"]
    desk.play_round(seed_order(players))
    # Later rounds: cat's opponents win without a board.
    for round_number in (2, 3):
        walkover = [m for m in desk.round_matches(round_number) if "cat" in m[:2]]
        assert [m[2] for m in walkover] == ["done"]
        desk.play_round(seed_order(players))
    assert desk.status("league") == ("finished", 3)
    with desk.factory() as session:
        cat = session.scalar(select(User.id).where(User.userid == "cat"))
        won = session.scalars(select(Match.winner_id).where(Match.second_id.is_not(None))).all()
    assert cat not in won
    again = desk.send(f"tournament withdraw league cat {password('cat')}", "cat")
    assert not again.ok and "cat is not playing in league" in again.text


def test_a_tournament_gets_the_configured_clock_or_its_own(desk: Desk) -> None:
    desk.begin("cup", "knockout", ["chameleon:size=3"], ["ann", "bob"])
    desk.begin("slowcup", "knockout", ["chameleon:size=3"], ["cat", "dan"], clock="slow")
    controls = desk.query(select(GameRow.time_control).order_by(GameRow.id))
    assert controls == [("10d+36h/10d",), ("21d+3d/30d",)]
    with pytest.raises(CommandError, match="--clock: "):
        desk.create("bad", "knockout", ["chameleon:size=3"], clock="soon")


def test_a_loss_on_time_ends_its_match_and_the_round(desk: Desk) -> None:
    desk.begin("cup", "knockout", ["chameleon:size=3"], ["ann", "bob"], clock="fast")
    [(board, first, _)] = desk.active_boards()
    desk.new_mail()
    # The first player never moves: 3 days, then 20 vacation days, and the board is lost.
    later = utcnow() + timedelta(days=24)

    def sweep(ctx: CommandContext) -> Any:
        ctx.clock = lambda: later
        return sweep_clocks(ctx)

    assert desk.operate(sweep).lost_on_time == [board]
    assert desk.status("cup") == ("finished", 1)
    [(result,)] = desk.query(select(GameRow.result).where(GameRow.id == board))
    assert result["termination"] == "time" and result["reason"].startswith(first)
    assert any("final standings" in subject for _, subject, _ in desk.new_mail())


def test_a_board_forfeited_by_maintenance_ends_its_match_and_the_round(desk: Desk) -> None:
    # A tournament without clocks has the idle rule.
    desk.begin("cup", "knockout", ["chameleon:size=3"], ["ann", "bob"], clock="none")
    [(board, first, _)] = desk.active_boards()
    desk.new_mail()
    # Past every idle limit: the mover is reminded, and forfeits once the notice has passed.
    later = utcnow() + timedelta(days=60)

    def maintain(ctx: CommandContext) -> Any:
        ctx.clock = lambda: later
        return run_maintenance(ctx)

    assert desk.operate(maintain).reminded == [board]
    desk.new_mail()
    later += timedelta(days=3)
    assert desk.operate(maintain).forfeited == [board]
    assert desk.status("cup") == ("finished", 1)
    subjects = [subject for _, subject, _ in desk.new_mail()]
    # The board's own mail first, then what its end did to the tournament.
    last_board_mail = max(i for i, s in enumerate(subjects) if s.startswith("chameleon board"))
    standings = min(i for i, s in enumerate(subjects) if "final standings" in s)
    assert last_board_mail < standings, subjects


def test_a_swiss_withdrawal_leaves_the_player_out_of_the_next_pairing(desk: Desk) -> None:
    players = ["ann", "bob", "cat", "dan"]
    desk.begin("sw", "swiss", ["chameleon:size=3"], players, rounds=3)
    assert desk.withdraw("sw", "dan") == "dan withdrew from sw; 1 board(s) forfeited"
    desk.play_round(seed_order(players))
    round_two = desk.round_matches(2)
    assert "dan" not in {p for m in round_two for p in m[:2]}
    assert [m[1] for m in round_two].count(None) == 1  # three players left: one bye


# --- poly-ludic -------------------------------------------------------------------------------


def test_polyludic_choice_refuses_a_game_with_negative_pg(desk: Desk) -> None:
    players = ["ann", "bob", "cat", "dan"]
    desk.begin(
        "poly",
        "swiss",
        ["small=chameleon:size=3", "large=chameleon:size=4"],
        players,
        rounds=3,
        polyludic=PolyludicParams(pg=["small=2"], ps=3, pc=1, lp="1/2"),
    )
    assert desk.round_matches(1) == [("ann", "cat", "choosing"), ("bob", "dan", "choosing")]
    pairing_mail = {to: body for to, subject, body in desk.new_mail() if "pairings" in subject}
    assert "tournament choose poly ann PASSWORD GAME" in pairing_mail[address("ann")]
    assert "games open to you: small, large" in pairing_mail[address("ann")]
    assert "You play ann, who has the first move" in pairing_mail[address("cat")]

    not_yours = desk.send(f"tournament choose poly cat {password('cat')} small", "cat")
    assert not not_yours.ok and "ann has the first move in your match" in not_yours.text
    chosen = desk.send(f"tournament choose poly ann {password('ann')} SMALL", "ann")
    assert chosen.ok and "You chose small for your match against cat" in chosen.text
    assert desk.send(f"tournament choose poly bob {password('bob')} small", "bob").ok
    assert len(desk.active_boards()) == 2
    # Both players of each match lose PS: small 2 -> -1. With two games PP is 1/2, not above
    # LP 1/2, so no compensation: small stays closed to everyone.
    table = desk.send(f"tournament table poly cat {password('cat')}", "cat")
    assert "small                      -1  closed" in table.text
    assert "large                       5  open" in table.text
    desk.play_round(lambda first, second: first)
    [(chooser, _, _), *_] = desk.round_matches(2)
    refused = desk.send(f"tournament choose poly {chooser} {password(chooser)} small", chooser)
    assert not refused.ok
    assert "you cannot choose small: its PG is -1; you may choose large" in refused.text
    with desk.factory() as session:
        assert session.scalar(select(Match.game).where(Match.round == 2).limit(1)) is None
    assert desk.send(f"tournament choose poly {chooser} {password(chooser)} large", chooser).ok


def test_polyludic_parameters_are_checked_at_creation(desk: Desk) -> None:
    games = ["small=chameleon:size=3", "large=chameleon:size=4"]
    with pytest.raises(CommandError, match=r"PS \(2\) must be greater than PC \(2\)"):
        desk.create("bad", "swiss", games, polyludic=PolyludicParams(ps=2, pc=2))
    with pytest.raises(CommandError, match=r"are for poly-ludic tournaments"):
        desk.create("bad", "swiss", games[:1], polyludic=PolyludicParams(ps=4))
    with pytest.raises(CommandError, match=r"the label \"chameleon\" is given to two games"):
        desk.create("bad", "swiss", ["chameleon", "chameleon"])
    with pytest.raises(CommandError, match=r"-size=2: the value must be between 3 and 26"):
        desk.create("bad", "swiss", ["chameleon:size=2"])
    with pytest.raises(CommandError, match=r"--repechage is for knockout"):
        desk.create("bad", "swiss", games[:1], repechage=True)
    with desk.factory() as session:
        assert session.scalar(select(Tournament.id)) is None


# --- entries and commands ---------------------------------------------------------------------


def test_entries_are_checked_and_tournaments_listed_and_shown(desk: Desk) -> None:
    desk.signup("ann", "bob", "cat")
    desk.operate(lambda ctx: create_tournament(ctx, "later", "knockout", ["chameleon"]))
    closed = desk.send(f"tournament join later ann {password('ann')}", "ann")
    assert not closed.ok and "not open for entries yet" in closed.text
    assert "There are no tournaments yet" in desk.send("tournament list", "ann").text  # drafts
    desk.create("cup", "knockout", ["chameleon:size=5"], match_games=3)
    desk.join("cup", "ann", "bob")
    twice = desk.send(f"tournament join cup ann {password('ann')}", "ann")
    assert not twice.ok and "ann is already entered in cup" in twice.text
    wrong = desk.send("tournament join cup ann nope", "ann")
    assert not wrong.ok and "the user id or password is wrong" in wrong.text
    missing = desk.send("tournament join nowhere ann x", "ann")
    assert not missing.ok and 'there is no tournament "nowhere"' in missing.text
    short = desk.send("tournament choose cup ann", "ann")
    assert not short.ok
    assert "tournament choose TOURNAMENT USERID PASSWORD GAME" in short.text
    unknown = desk.send("tournament dance", "ann")
    assert not unknown.ok and "tournament table TOURNAMENT USERID PASSWORD" in unknown.text
    listing = desk.send("tournament list", "bob").text
    assert "2. cup: knockout, open, 2 entrants; games: chameleon" in listing
    desk.start("cup")
    late = desk.send(f"tournament join cup cat {password('cat')}", "cat")
    assert not late.ok and "has started: entries are closed" in late.text
    shown = desk.send("tournament show 2", "cat").text
    assert "Tournament cup: knockout, matches of 3 games" in shown
    assert "ann v bob (main): chameleon, boards 1, 2, 3 - playing" in shown
    assert "not poly-ludic" in desk.send(f"tournament table cup ann {password('ann')}", "ann").text


def test_help_tournament_explains_commands_formats_and_polyludic_rules(desk: Desk) -> None:
    text = desk.send("help tournament", "ann").text
    for words in ("tournament choose TOURNAMENT USERID PASSWORD GAME", "Buchholz", "PS is always"):
        assert words in text


# --- concurrency ---------------------------------------------------------------------------


def test_two_boards_ending_at_once_pair_the_next_round_exactly_once(
    desk: Desk, engine: Engine
) -> None:
    players = ["ann", "bob", "cat", "dan"]
    desk.begin("sw", "swiss", ["chameleon:size=3"], players, rounds=2)
    (board_a, _, loser_a), (board_b, _, loser_b) = desk.active_boards()
    other: list[bool] = []
    with transaction(desk.factory) as session:
        # The first board ends in a transaction still open when the second one ends.
        ctx = CommandContext(session, Settings(confirm_addresses=False), address(loser_a))
        assert dispatch_line(ctx, f"chameleon resign {board_a} {loser_a} {password(loser_a)}").ok
        line = f"chameleon resign {board_b} {loser_b} {password(loser_b)}"
        thread = threading.Thread(target=lambda: other.append(desk.send(line, loser_b).ok))
        thread.start()
        wait_for_a_blocked_transaction(engine)
    thread.join()
    assert other == [True]
    # Whichever way the two met, exactly one of them saw the round end and paired round 2.
    assert [status for _, _, status in desk.round_matches(2)] == ["playing", "playing"]
    assert desk.status("sw") == ("running", 2)


def wait_for_a_blocked_transaction(engine: Engine) -> None:
    """On PostgreSQL, until another transaction waits for a lock (the tournament row); SQLite
    serialises whole transactions (BEGIN IMMEDIATE), so there the other one just waits."""
    if engine.dialect.name != "postgresql":
        return
    with engine.connect() as conn:
        for _ in range(2000):
            if conn.scalar(text("SELECT count(*) FROM pg_locks WHERE NOT granted")):
                return
            conn.rollback()
            time.sleep(0.01)
    raise AssertionError("the other transaction never waited for a lock")


# --- restart ----------------------------------------------------------------------------------


def test_a_restart_mid_round_pairs_the_next_round_from_the_database(
    desk: Desk, db_url: str
) -> None:
    players = ["ann", "bob", "cat", "dan", "eve", "fay"]
    desk.begin("sw6", "swiss", ["chameleon:size=3"], players, rounds=4)
    desk.play_round(lambda first, second: second)
    boards = desk.active_boards()
    for board, first, _ in boards[:2]:  # round 2 half played
        desk.resign(board, first)

    # A new process: a new engine and new sessions, nothing carried over in memory.
    engine = make_engine(db_url)
    try:
        fresh = Desk(engine)
        for board, first, _ in boards[2:]:
            fresh.resign(board, first)
        ids = fresh.user_ids()
        with fresh.factory() as session:
            rows = session.scalars(select(Match).order_by(Match.round, Match.id)).all()
            seeds = session.scalars(select(Entry.user_id).order_by(Entry.seed)).all()
    finally:
        engine.dispose()
    # The pure core, fed the results of rounds 1 and 2, pairs round 3 as the server did.
    history = [
        RoundPairing(tuple(Pairing(m.first_id, m.second_id) for m in rows if m.round == r))
        for r in (1, 2)
    ]
    results = [MatchResult(m.first_id, m.second_id, m.points) for m in rows if m.round <= 2]
    assert all(m.status == "done" for m in rows if m.round <= 2)
    standings = compute_standings(seeds, results, tiebreak="buchholz")
    expected = swiss_pairings(standings, history, rounds=4)
    paired = [(ids[m.first_id], ids[m.second_id]) for m in rows if m.round == 3]
    assert paired == [(ids[p.first], ids[p.second]) for p in expected.pairings]
    assert len(paired) == 3


def test_polyludic_choice_takes_the_games_name_where_one_label_has_it(desk: Desk) -> None:
    desk.begin(
        "mixed",
        "swiss",
        ["small=chameleon:size=3", "bf=buffalo"],
        ["ann", "bob", "cat", "dan"],
        rounds=2,
        polyludic=PolyludicParams(pg=[], ps=3, pc=1, lp="1/2"),
    )
    wrong = desk.send(f"tournament choose mixed ann {password('ann')} owlman", "ann")
    assert not wrong.ok
    assert "the games are small (chameleon), bf (buffalo)" in wrong.text
    assert "The right syntax is:" not in wrong.text
    chosen = desk.send(f"tournament choose mixed ann {password('ann')} Buffalo", "ann")
    assert chosen.ok and "You chose bf for your match" in chosen.text
