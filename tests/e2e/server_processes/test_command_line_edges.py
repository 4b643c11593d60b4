"""The command line as an operator and an MTA's pipe use it: real subprocesses, a real
database, the kit's config file with its env file of secrets."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select

from pbmserv.db.models import InboxMessage
from tests.e2e.processes import PBMSERV, environment, run_pbmserv
from tests.support import make_mail

pytestmark = pytest.mark.db


def write_config(tmp_path: Path, db_url: str, **extra: str) -> Path:
    """A config file as the kit installs it; its secrets in an env file beside it."""
    env_file = tmp_path / "pbmserv.env"
    env_file.write_text(
        "# secrets, kept out of the TOML\n"
        f"PBMSERV_DB={db_url}\n"
        "PBMSERV_RELAY_PASSWORD='s3cret-relay'\n"
        "PBMSERV_CONFIRM_ADDRESSES=false\n"
    )
    lines = [f'env_file = "{env_file}"', f'spool = "{tmp_path / "spool"}"']
    lines += [f'{name} = "{value}"' for name, value in extra.items()]
    config = tmp_path / "pbmserv.toml"
    config.write_text("\n".join(lines) + "\n")
    return config


def bare_environment(tmp_path: Path) -> dict[str, str]:
    """What an MTA's pipe or a sudo'd shell has: no PBMSERV_* variables at all."""
    env = environment("unused", tmp_path / "spool")
    return {name: value for name, value in env.items() if not name.startswith("PBMSERV_")}


def test_the_env_file_reaches_the_pipe_the_admin_shell_and_deliver(
    tmp_path: Path, db_url: str
) -> None:
    """The kit's advice (secrets in pbmserv.env) deferred every piped message: the env file
    reached only the systemd unit. Now the config file names it for every entry point."""
    config = write_config(tmp_path, db_url)
    env = bare_environment(tmp_path)
    assert run_pbmserv(["db", "upgrade", "--config", str(config)], env).returncode == 0
    mail = make_mail("alice@example.org", "signup alice secret1").as_bytes()
    piped = run_pbmserv(["mail", "--config", str(config), "-f", "alice@example.org"], env, mail)
    assert piped.returncode == 0, piped.stderr
    engine = create_engine(db_url)
    with engine.connect() as conn:
        assert conn.scalar(select(InboxMessage.status)) == "done"
    engine.dispose()
    shown = run_pbmserv(["config", "show", "--config", str(config), "--json"], env)
    assert b'"relay_password": "********"' in shown.stdout
    assert b"s3cret-relay" not in shown.stdout
    deliver = run_pbmserv(["deliver", "--config", str(config)], env)
    assert deliver.returncode == 0, deliver.stderr
    listed = run_pbmserv(["admin", "users", "list", "--config", str(config)], env)
    assert b"alice" in listed.stdout


def test_the_processs_own_environment_wins_over_the_env_file(tmp_path: Path) -> None:
    config = write_config(tmp_path, "sqlite:///from-the-file.db")
    env = {**bare_environment(tmp_path), "PBMSERV_DB": "sqlite:///from-the-environment.db"}
    shown = run_pbmserv(["config", "show", "--config", str(config), "--json"], env)
    assert b"from-the-environment.db" in shown.stdout


def test_a_missing_env_file_keeps_piped_mail_queued(tmp_path: Path, db_url: str) -> None:
    config = write_config(tmp_path, db_url)
    (tmp_path / "pbmserv.env").unlink()
    mail = make_mail("alice@example.org", "help").as_bytes()
    piped = run_pbmserv(
        ["mail", "--config", str(config), "-f", "alice@example.org"],
        bare_environment(tmp_path),
        mail,
    )
    assert piped.returncode == 75  # EX_TEMPFAIL: Postfix keeps the message
    assert b"cannot read the env_file" in piped.stderr


def test_the_pipes_standard_error_is_one_plain_line_even_with_json_logs(
    tmp_path: Path, db_url: str
) -> None:
    """Postfix keeps a pipe's output, cut short, in its log line: JSON left only {"time"...}."""
    config = write_config(tmp_path, db_url, log_format="json")
    env = bare_environment(tmp_path)
    run_pbmserv(["db", "upgrade", "--config", str(config)], env)
    mail = make_mail("alice@example.org", "signup alice secret1").as_bytes()
    piped = run_pbmserv(["mail", "--config", str(config), "-f", "alice@example.org"], env, mail)
    assert piped.returncode == 0
    lines = piped.stderr.decode().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("pbmserv: stored; 1 processed; mail: 1 sent"), lines[0]
    again = run_pbmserv(["mail", "--config", str(config), "-f", "alice@example.org"], env, mail)
    assert again.stderr.decode().splitlines() == [
        "pbmserv: a copy of a message already stored; not stored again"
    ]


def test_the_pipe_keeps_the_envelope_recipient(tmp_path: Path, db_url: str) -> None:
    config = write_config(tmp_path, db_url)
    env = bare_environment(tmp_path)
    run_pbmserv(["db", "upgrade", "--config", str(config)], env)
    mail = make_mail("alice@example.org", "help", to="friends@lists.example.org").as_bytes()
    args = ["mail", "--config", str(config), "--no-process", "-f", "alice@example.org"]
    piped = run_pbmserv([*args, "--", "pbmserv+b1-s0-abcdefghijklmnop@localhost"], env, mail)
    assert piped.returncode == 0, piped.stderr
    engine = create_engine(db_url)
    with engine.connect() as conn:
        assert conn.scalar(select(InboxMessage.envelope_to)) == (
            "pbmserv+b1-s0-abcdefghijklmnop@localhost"
        )
    engine.dispose()


def test_admin_takes_its_config_before_the_action_too(tmp_path: Path, db_url: str) -> None:
    config = write_config(tmp_path, db_url)
    env = bare_environment(tmp_path)
    run_pbmserv(["db", "upgrade", "--config", str(config)], env)
    before = run_pbmserv(["admin", "--config", str(config), "outbox", "list"], env)
    assert before.returncode == 0, before.stderr
    after = run_pbmserv(["admin", "outbox", "list", "--config", str(config)], env)
    assert after.returncode == 0 and after.stdout == before.stdout


def test_output_into_a_reader_that_left_is_no_error(tmp_path: Path) -> None:
    """`pbmserv config show | head` ended in a BrokenPipeError traceback."""
    process = subprocess.Popen(
        [*PBMSERV, "config", "show", "--db", "sqlite:///x.db"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=bare_environment(tmp_path),
        cwd=tmp_path,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # as `head` does once it has its lines
    error = process.stderr.read()
    assert process.wait(timeout=60) == 0
    assert error == b""


@pytest.mark.parametrize(
    ("url", "password", "said"),
    [
        ("imaps://imap.example.net/INBOX", "pw", "name the user"),
        ("imaps://games@example.net@imap.example.net/INBOX", "", "imap_password"),
    ],
)
def test_a_mailbox_that_cannot_be_read_stops_serve_with_one_line(
    tmp_path: Path, db_url: str, url: str, password: str, said: str
) -> None:
    """Exit 78, which the unit does not restart in a loop, and no traceback."""
    config = write_config(tmp_path, db_url)
    env = {**bare_environment(tmp_path), "PBMSERV_IMAP_PASSWORD": password}
    run_pbmserv(["db", "upgrade", "--config", str(config)], env)
    served = run_pbmserv(["serve", "--config", str(config), "--imap", url], env)
    assert served.returncode == 78, served.stderr
    lines = served.stderr.decode().splitlines()
    assert len(lines) == 1 and said in lines[0] and "Traceback" not in lines[0], lines


def test_a_mailbox_is_read_by_one_worker(tmp_path: Path) -> None:
    config = write_config(tmp_path, "sqlite:///x.db")
    env = {**bare_environment(tmp_path), "PBMSERV_IMAP_PASSWORD": "pw"}
    args = ["--imap", "imaps://games@example.net@imap.example.net/INBOX", "--workers", "2"]
    served = run_pbmserv(["serve", "--config", str(config), *args], env)
    assert served.returncode == 78 and b"one worker" in served.stderr
