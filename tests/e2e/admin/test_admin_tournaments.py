"""`pbmserv admin tournaments ...`, each action run as a real subprocess on a real database.

Players are signed up and play in-process (as the server would run their mail); the mail the
shell queues is delivered to the spool folder by `pbmserv deliver`, where these tests read it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine, select

from pbmserv.config import Settings
from pbmserv.core.context import CommandContext
from pbmserv.core.dispatch import dispatch_line
from pbmserv.core.tournaments import service as tournament_service
from pbmserv.db.engine import session_factory, transaction
from pbmserv.db.models import Entry, GameRow, Match, Tournament
from tests.e2e.admin.test_admin import Shell

pytestmark = pytest.mark.db

PLAYERS = ("ann", "bob", "cat", "dan")


def mail(engine: Engine, line: str, userid: str) -> bool:
    """A player's command, processed as the server processes one mail."""
    with transaction(session_factory(engine)) as session:
        ctx = CommandContext(session, Settings(confirm_addresses=False), f"{userid}@example.org")
        return dispatch_line(ctx, line).ok


def active_boards(engine: Engine) -> list[tuple[int, str]]:
    """(board, the user of seat 1) of each unfinished board."""
    with session_factory(engine)() as session:
        rows = session.scalars(select(GameRow).where(GameRow.status == "active")).all()
        return sorted((row.id, row.seats[1].user.userid) for row in rows)


def second_players_resign(engine: Engine) -> None:
    for board, userid in active_boards(engine):
        assert mail(engine, f"chameleon resign {board} {userid} pw-{userid}", userid)


@pytest.fixture
def shell(db_url: str, engine: Engine, tmp_path: Path) -> Shell:
    for userid in PLAYERS:
        assert mail(engine, f"signup {userid} pw-{userid}", userid)
    return Shell(db_url, tmp_path)


def test_create_checks_its_parameters(shell: Shell, engine: Engine) -> None:
    created = shell.json(
        "tournaments", "create", "spring", "--format", "swiss", "--rounds", "3",
        "--game", "small=chameleon:size=3", "--game", "large=chameleon:size=4",
        "--pg", "4", "--pg", "large=6", "--ps", "3", "--pc", "1", "--lp", "0.25",
    )  # fmt: skip
    assert created["games"] == ["small", "large"]
    assert created["params"]["polyludic"] == {
        "pg": {"small": 4, "large": 6},
        "ps": 3,
        "pc": 1,
        "lp": "1/4",
    }
    failures = {
        ("--ps", "2", "--pc", "2"): "PS (2) must be greater than PC (2)",
        ("--pc", "0"): "PC (0) must be at least 1",
        ("--lp", "1"): "LP (1) must be at least 0 and less than 1",
        ("--pg", "huge=3"): '"huge" is not a label of the listed games',
    }
    for extra, problem in failures.items():
        poly = ["--game", "small=chameleon:size=3", "--game", "large=chameleon:size=4"]
        args = ["tournaments", "create", "other", "--format", "swiss", *poly, *extra]
        assert problem in shell.run(*args, ok=False)
    assert "unknown tournament format 'cup'" in shell.run(
        "tournaments", "create", "x", "--format", "cup", "--game", "chameleon", ok=False
    )
    assert '"go" in "go" is not a game' in shell.run(
        "tournaments", "create", "x", "--format", "knockout", "--game", "go", ok=False
    )
    assert "already a tournament called" in shell.run(
        "tournaments", "create", "SPRING", "--format", "knockout", "--game", "chameleon", ok=False
    )
    assert "--rounds is for swiss and italo" in shell.run(
        "tournaments", "create", "x", "--format", "knockout", "--game", "chameleon",
        "--rounds", "2", ok=False,
    )  # fmt: skip
    with engine.connect() as conn:
        assert conn.scalars(select(Tournament.name)).all() == ["spring"]


def test_open_add_start_show_list_withdraw(shell: Shell, engine: Engine) -> None:
    shell.run("tournaments", "create", "cup", "--format", "roundrobin", "--game", "chameleon")
    assert shell.json("tournaments", "list")[0]["status"] == "draft"
    added = shell.run("tournaments", "add", "cup", "ann")
    assert added.strip() == "ann is entered in cup as seed 1"
    [notice] = shell.new_mail()
    assert (
        notice["To"] == "ann@example.org" and notice["Subject"] == "tournament cup: you are entered"
    )
    assert shell.run("tournaments", "open", "1").strip() == "tournament cup is open for entries"
    assert "is open, not a draft" in shell.run("tournaments", "open", "cup", ok=False)
    for userid in PLAYERS[1:]:
        assert mail(engine, f"tournament join cup {userid} pw-{userid}", userid)
    assert "no user" in shell.run("tournaments", "add", "cup", "zed", ok=False)
    assert "already entered" in shell.run("tournaments", "add", "cup", "bob", ok=False)
    assert "there is no tournament" in shell.run("tournaments", "start", "nope", ok=False)

    started = shell.json("tournaments", "start", "cup")
    assert started["round"] == 1
    assert [(m["first"], m["second"]) for m in started["matches"]] == [
        ("ann", "dan"),
        ("bob", "cat"),
    ]
    subjects = sorted((m["To"], m["Subject"]) for m in shell.new_mail())
    pairings = [to for to, subject in subjects if subject == "tournament cup round 1: pairings"]
    assert pairings == [f"{p}@example.org" for p in PLAYERS]
    assert sum(subject.startswith("chameleon board") for _, subject in subjects) == 4
    assert "running already" in shell.run("tournaments", "start", "cup", ok=False)
    assert "round 1 of cup is not over: 2 match(es)" in shell.run(
        "tournaments", "pair", "cup", ok=False
    )
    assert "closed" in shell.run("tournaments", "add", "cup", "ann", ok=False)

    text = shell.run("tournaments", "show", "cup")
    assert text.startswith("Tournament cup: round robin, 3 rounds\nGame: chameleon (size=11)")
    assert "  ann v dan: chameleon, board 1 - playing" in text
    assert "Sonneborn-Berger" in text

    # bob withdraws: his board is forfeited, which ends round 1 once ann's is over too.
    withdrawn = shell.run("tournaments", "withdraw", "cup", "bob")
    assert withdrawn.strip() == "bob withdrew from cup; 1 board(s) forfeited"
    mailed = shell.new_mail()
    sent = {(m["To"], m["Subject"]) for m in mailed}
    assert ("bob@example.org", "tournament cup: you are withdrawn") in sent
    firsts = {(m["To"], m.get_body(("plain",)).get_content().split("\n")[0]) for m in mailed}
    assert ("cat@example.org", "chameleon board 2: you won") in firsts
    second_players_resign(engine)
    shown = shell.json("tournaments", "show", "cup")
    assert shown["round"] == 2
    assert [e["withdrawn"] for e in shown["entries"]] == [False, True, False, False]
    round_two = shown["rounds_played"][1]["matches"]
    assert any(m["result"].endswith("won by walkover") for m in round_two)
    assert shown["standings"][0]["player"] in ("ann", "cat")
    assert shell.json("tournaments", "list")[0]["round"] == 2
    assert "not playing in cup" in shell.run("tournaments", "withdraw", "cup", "bob", ok=False)


def test_pair_pairs_a_round_the_automatic_pairing_could_not(
    shell: Shell, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    shell.run(
        "tournaments", "create", "sw", "--format", "swiss", "--rounds", "2",
        "--game", "chameleon:size=3",
    )  # fmt: skip
    for userid in PLAYERS:
        shell.run("tournaments", "add", "sw", userid)
    shell.run("tournaments", "start", "sw")

    def broken(*_args: object) -> None:
        raise RuntimeError("pairing failed")

    # The last board's end must not fail for the player: the round stays complete, unpaired.
    monkeypatch.setattr(tournament_service, "advance", broken)
    second_players_resign(engine)
    monkeypatch.undo()
    with engine.connect() as conn:
        assert conn.scalar(select(Tournament.round)) == 1
        assert set(conn.scalars(select(Match.status))) == {"done"}
    paired = shell.json("tournaments", "pair", "sw")
    assert paired["round"] == 2
    assert len(paired["matches"]) == 2
    subjects = {m["Subject"] for m in shell.new_mail()}
    assert {"tournament sw: standings after round 1", "tournament sw round 2: pairings"} <= subjects
    second_players_resign(engine)
    with engine.connect() as conn:
        assert conn.scalar(select(Tournament.status)) == "finished"
        assert conn.scalar(select(Entry.id).where(Entry.withdrawn.is_(True))) is None
    assert "is finished, not running" in shell.run("tournaments", "pair", "sw", ok=False)
    assert "Winner" in shell.run("tournaments", "show", "sw")
