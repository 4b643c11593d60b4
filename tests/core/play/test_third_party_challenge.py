"""Issue 48, item 3: a challenge needs no password, so anyone may start a board between other
people; such a board runs no clock of a player who did not start it, spends none of their
vacation, counts for no rating and takes none of their robot slots until they accept it or
move on it (core.play.consent). The attack scripted: a third party's 1-hour boards between an
accomplice and a victim, run past their time by the clock sweep and the idle rule."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, update

from pbmserv.config import Settings
from pbmserv.core.context import CommandContext
from pbmserv.core.dispatch import dispatch_line
from pbmserv.core.maintenance import run_maintenance
from pbmserv.core.timing.clock_sweep import sweep_clocks
from pbmserv.db.engine import transaction
from pbmserv.db.models import GameRow, Rating, RatingChange, Seat, User
from pbmserv.outbound.compose import render_notice
from tests.core.client import Client

pytestmark = pytest.mark.db

ALICE, BOB = "alice secret1", "Bob hunter22"
BOB_AT, CAROL_AT = "bob@example.org", "carol@example.org"
T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def at(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


def maintain(players: Client, when: datetime) -> None:
    """What ``pbmserv admin maintain --now WHEN`` does to boards: the clock sweep, then the
    idle rule."""
    with transaction(players.factory) as session:
        ctx = CommandContext(session, players.settings, None, clock=lambda: when)
        sweep_clocks(ctx)
        run_maintenance(ctx)
        players.notifications = list(ctx.notifications)


def lost_by(players: Client, userid: str) -> tuple[int, int]:
    """Vacation days the user spent, and rated boards they lost."""
    with players.session() as session:
        user = session.scalars(select(User).where(User.userid == userid)).one()
        losses = session.scalars(
            select(RatingChange).where(RatingChange.user_id == user.id, RatingChange.score == 0)
        ).all()
        return user.vacation_days_used, len(losses)


def clock_runs(players: Client, board: int, seat: int) -> bool:
    query = select(Seat.clock_since).where(Seat.game_id == board, Seat.seat == seat)
    return players.query(query)[0][0] is not None


def test_a_third_partys_clocked_boards_cost_the_player_who_never_accepted_nothing(
    players: Client,
) -> None:
    # carol starts five 1-hour boards between alice (her accomplice) and bob; alice moves on
    # each at once (her move accepts it), so that each waits for bob with a 1-hour clock.
    for board in range(1, 6):
        made = players.run("extinction challenge -clock=1h alice bob", sender=CAROL_AT, at=at(0))
        assert made.ok and "Not accepted yet by alice and Bob" in made.text
        assert players.run(f"extinction move {board} {ALICE} e4", at=at(0.1)).ok
        assert not clock_runs(players, board, 1)
    # Forty days pass, with the sweep and the idle rule every six hours.
    for step in range(1, 40 * 4 + 1):
        maintain(players, at(6 * step))
    assert lost_by(players, "bob") == (0, 0)
    assert players.query(select(RatingChange.game_id)) == []
    assert players.query(select(Rating.user_id).where(Rating.games > 0)) == []
    with players.session() as session:
        bob = session.scalars(select(User).where(User.userid == "bob")).one()
        assert bob.away_since is None
        rows = session.scalars(select(GameRow).order_by(GameRow.id)).all()
        # Cancelled by the idle rule after its notice: nobody won, nobody lost.
        assert {row.status for row in rows} == {"finished"}
        for row in rows:
            assert row.result is not None and row.result["winners"] == []
            assert "Bob (Black) did not accept the board in 28 days" in row.result["reason"]


def test_an_unclocked_board_is_cancelled_not_forfeited(players: Client) -> None:
    assert players.run("chameleon challenge -size=5 alice bob", sender=CAROL_AT, at=at(0)).ok
    assert players.run(f"chameleon move 1 {ALICE} c3x", at=at(1)).ok
    maintain(players, at(24 * 8))
    (reminder,) = [n for n in players.notifications if n.to == BOB_AT]
    assert "the board is cancelled: nobody" in render_notice(reminder, "pbmserv@x")
    maintain(players, at(24 * 31))
    assert lost_by(players, "bob") == (0, 0) and lost_by(players, "alice") == (0, 0)
    [(result,)] = players.query(select(GameRow.result))
    assert result["declined"] and "did not accept" in result["reason"]


def test_the_first_mail_names_who_started_it_and_how_to_decline(players: Client) -> None:
    assert players.run("extinction challenge -clock=fast alice bob", sender=CAROL_AT).ok
    mails = {n.to: render_notice(n, "pbmserv@x") for n in players.notifications}
    assert set(mails) == {"alice@example.org", BOB_AT}
    for userid, text in (("alice", mails["alice@example.org"]), ("Bob", mails[BOB_AT])):
        assert "A challenge from the address of carol started it." in text
        assert f"extinction decline 1 {userid} PASSWORD" in text
        assert f"extinction accept 1 {userid} PASSWORD" in text
        assert "your clock does not\nrun" in text


def test_accepting_runs_the_clock_and_rates_the_board(players: Client) -> None:
    assert players.run("extinction challenge -clock=fast alice bob", sender=CAROL_AT).ok
    assert players.run(f"extinction move 1 {ALICE} e4").ok
    assert not clock_runs(players, 1, 1)
    accepted = players.run(f"extinction accept 1 {BOB}", sender=BOB_AT)
    assert accepted.ok and "You accepted extinction board 1" in accepted.text
    assert clock_runs(players, 1, 1)
    assert any("Bob (Black) accepted the board." in n.data["event"] for n in players.notifications)
    again = players.run(f"extinction accept 1 {BOB}", sender=BOB_AT)
    assert not again.ok  # accepted once; now "accept" answers proposals, and none stands
    assert players.run(f"extinction resign 1 {BOB}", sender=BOB_AT).ok
    assert lost_by(players, "bob") == (0, 1)


def test_a_move_accepts_and_the_challengers_own_seat_is_accepted_at_once(
    players: Client,
) -> None:
    assert players.run("extinction challenge -clock=fast alice bob").ok  # from alice
    assert clock_runs(players, 1, 0)  # hers runs: she started it
    assert players.run(f"extinction move 1 {ALICE} e4").ok
    assert not clock_runs(players, 1, 1)
    assert players.run(f"extinction move 1 {BOB} e5", sender=BOB_AT).ok
    assert clock_runs(players, 1, 0)
    assert players.run(f"extinction resign 1 {ALICE}").ok
    assert lost_by(players, "alice") == (0, 1)


def test_a_board_ended_before_everyone_accepted_is_not_rated(players: Client) -> None:
    assert players.run("extinction challenge alice bob").ok
    resigned = players.run(f"extinction resign 1 {ALICE}")
    assert resigned.ok and "not rated: Bob never accepted it" in resigned.text
    assert players.query(select(RatingChange.game_id)) == []


def test_a_third_party_cannot_fill_a_players_robot_slots(players: Client) -> None:
    players.settings = Settings(confirm_addresses=False, robot_games_per_user=2)
    for _ in range(3):
        refused = players.run("extinction challenge alice robot1", sender=CAROL_AT)
        assert not refused.ok and "only alice may challenge a robot for alice" in refused.text
    assert players.query(select(GameRow.id)) == []
    # alice's own robot challenges go through, up to her limit.
    assert players.run("extinction challenge alice robot1").ok
    assert players.run("chameleon challenge robot2 alice").ok
    third = players.run("owlman challenge alice robot1")
    assert "already has 2 boards against robots" in third.text


def test_a_disabled_users_commands_get_only_an_answer_saying_so(players: Client) -> None:
    with transaction(players.factory) as session:
        session.execute(update(User).where(User.userid == "carol").values(disabled=True))
    for line in ("extinction challenge alice bob", "help", "games", "status alice"):
        refused = players.run(line, sender=CAROL_AT)
        assert not refused.ok and 'the user "carol" is disabled' in refused.text, line
    assert players.query(select(GameRow.id)) == []
    assert players.notifications == []


def test_where_the_server_checks_authentication_a_forged_from_accepts_nothing(
    players: Client,
) -> None:
    players.settings = Settings(confirm_addresses=False, trusted_authserv_ids="mx.example")

    def challenge(authenticated: bool, names: str = "bob alice") -> str:
        with transaction(players.factory) as session:
            ctx = CommandContext(session, players.settings, BOB_AT, clock=lambda: at(0))
            ctx.sender_authenticated = authenticated
            section = dispatch_line(ctx, f"extinction challenge -clock=fast {names}")
            return section.kind

    # A From anyone could have written: bob accepted nothing, and no robot plays him on it.
    assert challenge(authenticated=False) == "challenged"
    assert not clock_runs(players, 1, 0)
    assert challenge(authenticated=False, names="bob robot1") == "error"
    assert challenge(authenticated=True) == "challenged"
    assert clock_runs(players, 2, 0)
    assert challenge(authenticated=True, names="bob robot1") == "challenged"
