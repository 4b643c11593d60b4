"""bench/robots.py, the robots' strength table, plays real games and keeps what it played: a
run with the same code reuses the recorded games, and a run with other code plays them again."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bench_scripts import load_bench


def test_the_bench_records_each_game_and_reuses_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = load_bench("robots")
    record = tmp_path / "games.jsonl"
    args = ["--only", "chameleon", "--pairs", "L1:random", "--games", "2", "--record", str(record)]
    assert bench.main(args) == 0
    first = capsys.readouterr().out
    assert "0 of 2 games" in first and "chameleon   L1:random" in first
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert [(e["pair"], e["index"]) for e in lines] == [("L1:random", 0), ("L1:random", 1)]
    assert all(e["result"] in ("win", "draw", "loss") for e in lines)

    assert bench.main([*args[:-4], "--games", "3", "--record", str(record)]) == 0
    again = capsys.readouterr().out
    assert "2 of 3 games" in again  # two reused, one played
    assert len(record.read_text().splitlines()) == 3

    stale = [{**e, "version": "other code"} for e in lines]
    record.write_text("".join(json.dumps(e) + "\n" for e in stale))
    assert bench.main(args) == 0
    assert "0 of 2 games" in capsys.readouterr().out  # made by other code: played again


def test_an_unknown_player_stops_the_bench_before_any_game(tmp_path: Path) -> None:
    bench = load_bench("robots")
    with pytest.raises(SystemExit, match="no player 'L9'"):
        bench.main(["--only", "chameleon", "--pairs", "L9:L1", "--record", str(tmp_path / "r")])
    assert not (tmp_path / "r").exists()


def test_the_record_outlives_new_wording_but_not_new_code(tmp_path: Path) -> None:
    code_of = load_bench("robots")._code_of
    module = tmp_path / "module.py"
    module.write_text('"""Doc."""\n\ndef f(x):\n    """Twice x."""\n    return 2 * x\n')
    before = code_of(module)
    module.write_text('"""Other words."""\n\n\ndef f(x):  # why\n    return 2 * x  # what\n')
    assert code_of(module) == before
    module.write_text('"""Doc."""\n\ndef f(x):\n    """Twice x."""\n    return 3 * x\n')
    assert code_of(module) != before


def test_a_games_record_follows_its_policys_own_modules() -> None:
    """Extinction's tactics live beside its policy: a change there plays other games, so it
    must change the record's version (it once did not); another game's modules must not."""
    from pbmserv.games import find_game

    bench = load_bench("robots")
    extinction, owlman = find_game("extinction"), find_game("owlman")
    names = {path.name for path in bench.deciding_files(extinction)}
    assert {"extinction.py", "extinction_tactics.py", "tactics.py", "mcts.py"} <= names
    assert "extinction_tactics.py" not in {path.name for path in bench.deciding_files(owlman)}


def test_the_carry_over_keeps_older_games_only_when_their_replays_match(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = load_bench("robots")
    record = tmp_path / "games.jsonl"
    args = ["--only", "chameleon", "--pairs", "L1:random", "--games", "2", "--record", str(record)]
    assert bench.main(args) == 0
    played = [json.loads(line) for line in record.read_text().splitlines()]
    older = [{**e, "version": "older code"} for e in played]
    record.write_text("".join(json.dumps(e) + "\n" for e in older))
    capsys.readouterr()

    carry = ["--only", "chameleon", "--record", str(record), "--carry-over"]
    assert bench.main(carry) == 0
    out = capsys.readouterr().out
    assert "replaying 1 recorded games" in out and ": same" in out  # one a pair, the shortest
    assert "carried 2 games from older code" in out
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert lines[:2] == older  # the old lines stay
    assert [e["version"] for e in lines[2:]] == [played[0]["version"]] * 2
    assert [{**e, "version": "older code"} for e in lines[2:]] == older
    assert bench.main(carry) == 0  # today's code has its games now: nothing more
    assert "already: nothing to carry" in capsys.readouterr().out
    assert len(record.read_text().splitlines()) == 4

    flipped = {"win": "loss", "loss": "win", "draw": "win"}
    wrong = [{**e, "result": flipped[e["result"]]} for e in older]
    record.write_text("".join(json.dumps(e) + "\n" for e in wrong))
    assert bench.main(carry) == 1
    out = capsys.readouterr().out
    assert "DIFFERENT" in out and "REFUSED" in out
    assert len(record.read_text().splitlines()) == 2  # nothing carried


def test_the_carry_over_needs_a_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench = load_bench("robots")
    assert bench.main(["--only", "owlman", "--carry-over"]) == 1
    assert "needs --record" in capsys.readouterr().out
    assert bench.main(["--record", str(tmp_path / "none.jsonl"), "--carry-over"]) == 1


def test_engine_players_are_named_by_skill_and_limit() -> None:
    fsf = load_bench("fairy_stockfish")
    assert fsf.engine_setting("fsf20d1") == fsf.EngineSetting(20, depth=1)
    assert fsf.engine_setting("fsf-20d1") == fsf.EngineSetting(-20, depth=1)
    assert fsf.engine_setting("fsf0n200") == fsf.EngineSetting(0, nodes=200)
    assert fsf.engine_setting("L3") is None and fsf.engine_setting("greedy") is None
    with pytest.raises(SystemExit, match="Skill Level is -20..20"):
        fsf.engine_setting("fsf21d1")


def test_a_records_version_names_the_engine_and_the_older_commit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An older commit's level against the engine is kept under both names: a newer engine or
    another commit plays other games."""
    bench = load_bench("robots")
    monkeypatch.setattr(bench, "engine_identity", lambda: "Fairy-Stockfish 11.1")
    assert bench.pair_version("v", "L1:fsf-20d1") == "v+Fairy-Stockfish 11.1"
    assert bench.pair_version("v", "L3:L3@020b28e") == "v+L3@020b28e"
    assert bench.pair_version("v", "L1@020b28e:fsf-20d1") == "v+Fairy-Stockfish 11.1+L1@020b28e"
    assert bench.pair_version("v", "L2:L1") == "v"


def test_the_share_comes_with_its_confidence_interval() -> None:
    interval = load_bench("robots").interval
    low, high = interval(20, 0, 20)  # 40 games, half won: about 50% +- 15.5%
    assert low == pytest.approx(0.345, abs=0.002) and high == pytest.approx(0.655, abs=0.002)
    assert interval(40, 0, 0) == (1.0, 1.0)  # no spread in the points: no margin
    low, high = interval(10, 20, 10)  # draws are half points and narrow the interval
    assert 0.38 < low < 0.5 < high < 0.62


def test_the_engine_plays_extinction_against_a_robot_and_only_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = load_bench("robots")
    if bench.engine_path() is None:
        pytest.skip("fairy-stockfish is not installed (.ci/run installs it)")
    record = tmp_path / "games.jsonl"
    # Two processes, forked after this one has asked the engine its name: each needs its own.
    args = ["--only", "extinction", "--pairs", "L1:fsf-20d1", "--games", "2", "--jobs", "2"]
    assert bench.main([*args, "--record", str(record)]) == 0
    out = capsys.readouterr().out
    assert "engine: Fairy-Stockfish" in out and "extinction  L1:fsf-20d1" in out
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert [e["index"] for e in lines] == [0, 1]  # colours alternated: seat 0, then seat 1
    assert all("+Fairy-Stockfish" in e["version"] for e in lines)  # the engine is in the key
    assert all(e["cpu"]["fsf-20d1"][1] > 0 and e["cpu"]["L1"][1] > 0 for e in lines)

    # Another game's row never asks the engine (it plays only Extinction).
    assert bench.pairs_of("chameleon", ["L2:L1", "L1:fsf-20d1"]) == ["L2:L1"]
    with pytest.raises(SystemExit, match="plays only extinction"):
        bench.player("fsf0d1")(bench.find_game("chameleon"), None, 0, None)


def test_an_older_commits_robot_plays_through_its_own_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``L1@REV`` thinks in a worker process (bench/robot_worker.py) that REV's venv runs;
    here the worker runs this tree's Python, the protocol and the bookkeeping being what is
    checked: moves that read back, the worker's CPU counted, the commit in the record's key."""
    bench = load_bench("robots")
    started: list[str] = []

    def own_worker(rev: str) -> subprocess.Popen[str]:
        worker = bench._OLDER_WORKERS.get(rev)  # one process here: keyed by the commit alone
        if worker is None:
            started.append(rev)
            script = Path(bench.__file__).with_name("robot_worker.py")
            worker = subprocess.Popen(
                [sys.executable, str(script)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            bench._OLDER_WORKERS[rev] = worker
        return worker

    monkeypatch.setattr(bench, "_older_worker", own_worker)
    monkeypatch.setattr(bench, "_OLDER_WORKERS", {})
    record = tmp_path / "games.jsonl"
    args = ["--only", "chameleon", "--pairs", "L1:L1@abc1234", "--games", "2"]
    assert bench.main([*args, "--record", str(record)]) == 0
    out = capsys.readouterr().out
    assert "chameleon   L1:L1@abc1234" in out and " 70%" in out  # the goal against an older L3
    assert started == ["abc1234"]  # one worker, reused from game to game
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert all(e["version"].endswith("+L1@abc1234") for e in lines)
    assert all(e["cpu"]["L1@abc1234"][0] > 0 and e["cpu"]["L1@abc1234"][1] > 0 for e in lines)

    # Its games carry over to today's code as ours do: replayed against the same worker.
    older = [{**e, "version": "older code+L1@abc1234"} for e in lines]
    record.write_text("".join(json.dumps(e) + "\n" for e in older))
    capsys.readouterr()
    assert bench.main(["--only", "chameleon", "--record", str(record), "--carry-over"]) == 0
    out = capsys.readouterr().out
    assert "L1:L1@abc1234" in out and ": same" in out and "carried 2 games" in out
    carried = [json.loads(line) for line in record.read_text().splitlines()][2:]
    assert [e["version"] for e in carried] == [lines[0]["version"]] * 2
    for worker in bench._OLDER_WORKERS.values():
        worker.kill()
