"""deploy/OPERATIONS.md's DKIM, DMARC and relay sections, followed word for word, work.

The shell commands of those sections (their ```sh blocks) run as written, in bash, on a scratch
copy of the paths they name; these are the only changes made to them:

- ``/etc/pbmserv`` and ``/etc/postfix`` are folders of a scratch directory;
- ``/opt/pbmserv/.venv/bin/pbmserv`` is this checkout's virtualenv's ``pbmserv``;
- the user and group ``pbmserv`` are a stand-in (``nobody`` and its group) where the host has
  no ``pbmserv`` user: a test does not make system users;
- ``sudo -u pbmserv CMD`` runs CMD as the stand-in with ``runuser`` where it can run this
  virtualenv's Python (not where that lives in root's home, as here): there CMD runs as root,
  and the stand-in reads the key with ``cat`` instead;
- the ports: the listener's 2525 and the relay's 25 are free ports of the test.

The prose is not tested, only what the commands do: a key the server's user may read and
nobody else, DNS records to publish (DMARC ``p=none``, its reports to an address the kit's
Postfix accepts), and, behind a real Postfix configured with the kit's relay files, mail that
arrives DKIM-signed under the published record.
"""

from __future__ import annotations

import email
import email.policy
import grp
import os
import pwd
import re
import shutil
import smtplib
import stat
import subprocess
import tempfile
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import dkim
import pytest
from sqlalchemy import Engine

from pbmserv.config import load_settings
from pbmserv.outbound.signing import public_key_record
from tests.deploy.real_postfix import RealPostfix, free_port, require_postfix
from tests.support import RunningServer, make_mail, settle, smtp_send

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
GUIDE = DEPLOY / "OPERATIONS.md"
VENV_PBMSERV = REPO / ".venv" / "bin" / "pbmserv"
DOMAIN = "games.example.org"
SERVER = f"pbmserv@{DOMAIN}"


# --- reading the guide -----------------------------------------------------------------------


def section(title: str, text: str | None = None) -> str:
    """The text under the heading ``title``, up to the next heading of its level or higher
    (``#`` lines inside code blocks are comments, not headings)."""
    lines = (GUIDE.read_text(encoding="utf-8") if text is None else text).splitlines()
    heading = re.compile(r"^(#+) (.*)$")
    level, body, fenced = 0, [], False
    for line in lines:
        if line.startswith("```"):
            fenced = not fenced
        found = None if fenced else heading.match(line)
        if level and found and len(found[1]) <= level:
            break
        if level:
            body.append(line)
        elif found and found[2] == title:
            level = len(found[1])
    assert level, f"no section {title!r} in {GUIDE.name}"
    return "\n".join(body) + "\n"


def blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.M | re.S)


def shell_commands(text: str) -> list[str]:
    """The commands of a text's ```sh blocks: continued lines joined, comments left out."""
    commands = []
    for block in blocks(text, "sh"):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                commands.append(" ".join(line.split()))
    return commands


def the_one(commands: list[str], words: str) -> str:
    [found] = [command for command in commands if words in command]
    return found


# --- a scratch host --------------------------------------------------------------------------


def require_root() -> None:
    if os.geteuid() == 0:
        return
    if os.environ.get("CI", "").strip().lower() in ("true", "1", "yes"):
        pytest.fail("CI must follow the guide as root (it installs files root:pbmserv)")
    pytest.skip("the guide's install steps run as root")


@dataclass
class Host:
    """The paths and users of the guide, in a scratch directory (mode 0755, as / is)."""

    root: Path
    user: str
    group: str

    @property
    def etc(self) -> Path:
        return self.root / "etc" / "pbmserv"

    @property
    def config(self) -> Path:
        return self.etc / "pbmserv.toml"

    def as_user_prefix(self) -> str:
        """How `sudo -u pbmserv` is run here (see the module's docstring)."""
        python = REPO / ".venv" / "bin" / "python"
        probe = ["runuser", "-u", self.user, "--", str(python), "-c", ""]
        if shutil.which("runuser") and subprocess.run(probe, capture_output=True).returncode == 0:
            return f"runuser -u {self.user} -- "
        return ""

    def adapt(self, command: str) -> str:
        command = command.replace("/opt/pbmserv/.venv/bin/pbmserv", str(VENV_PBMSERV))
        command = command.replace("/etc/pbmserv", str(self.etc))
        command = re.sub(r"\bsudo -u pbmserv ", lambda _: self.as_user_prefix(), command)
        command = re.sub(r"(-g|--group) pbmserv\b", rf"\1 {self.group}", command)
        return command.replace("root:pbmserv", f"root:{self.group}")

    def run(self, command: str) -> str:
        """Run one of the guide's commands; its standard output, once it has succeeded."""
        adapted = self.adapt(command)
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", adapted],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, f"{command}\n(run as: {adapted})\n{done.stderr}"
        return done.stdout

    def set_settings(self, printed: str) -> None:
        """Do what keygen says: set the `  name = value` lines it printed in the config
        file, in place of the commented-out example lines."""
        text = self.config.read_text(encoding="utf-8")
        for name, value in re.findall(r"^  (dkim_\w+) = (.*)$", printed, re.M):
            line = f"{name} = {value}"
            text, found = re.subn(rf"^# {name} = .*$", lambda _, line=line: line, text, flags=re.M)
            if not found:
                text += line + "\n"
        self.config.write_text(text, encoding="utf-8")


def stand_in() -> tuple[str, str]:
    """The service user and its group: pbmserv's where it exists, else nobody's."""
    for name in ("pbmserv", "nobody"):
        try:
            user = pwd.getpwnam(name)
        except KeyError:
            continue
        return name, grp.getgrgid(user.pw_gid).gr_name
    pytest.skip("neither a pbmserv nor a nobody user here")


@dataclass
class Published:
    """What the DKIM section produced: the key, the records printed, the host."""

    host: Host
    key_file: Path
    records: dict[str, str]

    def dns(self, name: bytes, timeout: int = 5) -> bytes | None:
        return self.records.get(name.decode().rstrip(".").lower(), "").encode() or None


def zone_records(printed: str) -> dict[str, str]:
    """``NAME. TTL IN TXT "..." "..."`` lines: each name's value, its strings joined."""
    records = {}
    for name, strings in re.findall(r"^(\S+)\.\s+\d+\s+IN\s+TXT\s+(.*)$", printed, re.M):
        records[name.lower()] = "".join(re.findall(r'"([^"]*)"', strings))
    return records


@pytest.fixture
def host() -> Iterator[Host]:
    require_root()
    user, group = stand_in()
    root = Path(tempfile.mkdtemp(prefix="pbmops-", dir="/tmp"))
    root.chmod(0o755)  # the stand-in user must reach /etc/pbmserv in it
    (root / "etc").mkdir(mode=0o755)
    try:
        yield Host(root, user, group)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def follow_the_dkim_section(host: Host) -> Published:
    # The guide's own install steps for /etc/pbmserv (0750 root:pbmserv, config 0640) ...
    install = shell_commands(section("Install"))
    for command in install:
        if command.startswith("install ") and "/etc/pbmserv" in command:
            host.run(command)
    assert stat.S_IMODE(host.etc.stat().st_mode) == 0o750 and host.config.exists()
    # ... then the DKIM section, command by command.
    commands = shell_commands(section("DKIM, SPF and DMARC"))
    printed = host.run(the_one(commands, "dkim keygen"))
    host.set_settings(printed)  # "then set dkim_selector and dkim_key_file as it says"
    again = host.run(the_one(commands, "dkim records"))

    key_file = host.etc / "dkim.pem"
    records = zone_records(printed)
    assert zone_records(again) == records  # the server's user reads the same key
    assert records[f"pbmserv._domainkey.{DOMAIN}"] == public_key_record(key_file.read_bytes())
    return Published(host, key_file, records)


# --- the tests -------------------------------------------------------------------------------


def test_the_dkim_section_makes_a_key_the_server_reads_and_records_to_publish(
    host: Host,
) -> None:
    published = follow_the_dkim_section(host)
    # root:pbmserv 0640, like the config file: the server reads it, nobody else does, and the
    # server cannot change it.
    key = published.key_file.stat()
    assert (key.st_uid, grp.getgrgid(key.st_gid).gr_name) == (0, host.group)
    assert stat.S_IMODE(key.st_mode) == 0o640
    read = subprocess.run(
        ["runuser", "-u", host.user, "--", "cat", str(published.key_file)], capture_output=True
    )
    assert read.returncode == 0 and read.stdout == published.key_file.read_bytes(), read.stderr

    settings = load_settings(environ={}, config_file=host.config)
    assert (settings.dkim_selector, settings.dkim_key_file) == ("pbmserv", published.key_file)
    records = published.records
    assert records[DOMAIN].startswith("v=spf1 ")
    dmarc = dict(
        part.strip().split("=", 1) for part in records[f"_dmarc.{DOMAIN}"].split(";") if part
    )
    # "start with p=none", as the record's own comment and the guide say.
    assert dmarc["v"] == "DMARC1" and dmarc["p"] == "none"
    # Its reports go to an address both Postfix examples accept (and alias to a person).
    report_to = dmarc["rua"].removeprefix("mailto:")
    assert report_to == f"postmaster@{DOMAIN}"
    for kind in ("relay", "pipe"):
        main_cf = (DEPLOY / "postfix" / kind / "main.cf").read_text(encoding="utf-8")
        accepted = re.search(r"^relay_recipient_maps = inline:\{(.*)\}$", main_cf, re.M)
        assert accepted and f"{report_to}=ok" in accepted[1].replace(" ", ""), kind
        assert re.search(rf"^virtual_alias_maps = inline:\{{ {report_to}=\S+ \}}$", main_cf, re.M)


def test_keygen_says_so_when_the_group_does_not_exist(host: Host) -> None:
    result = subprocess.run(
        [str(VENV_PBMSERV), "dkim", "keygen", "--key-file", str(host.root / "k.pem")]
        + ["--group", "no-such-group-here", "--domain", DOMAIN],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2 and "no group 'no-such-group-here'" in result.stderr
    assert not (host.root / "k.pem").exists()


class KitPostfix(RealPostfix):
    """The test's private Postfix with the kit's relay files added as the guide says:
    ``deploy/postfix/relay/main.cf`` appended to main.cf (its settings win), and its
    ``transport`` put in place and built with ``postmap``."""

    def _main_cf(self, cert: Path, key: Path) -> str:
        kit = (DEPLOY / "postfix" / "relay" / "main.cf").read_text(encoding="utf-8")
        return super()._main_cf(cert, key) + kit.replace("/etc/postfix/", f"{self.config_dir}/")

    def _write_config(self) -> None:
        super()._write_config()
        transport = (DEPLOY / "postfix" / "relay" / "transport").read_text(encoding="utf-8")
        path = self.config_dir / "transport"
        path.write_text(transport.replace("]:2525", f"]:{self.listen_port}"), encoding="utf-8")
        # "then: postmap /etc/postfix/transport && postfix reload" (the start, here)
        subprocess.run(["postmap", str(path)], check=True, capture_output=True, timeout=30)


def first_relay_example(postfix: RealPostfix) -> dict[str, object]:
    """The TLS section's first example (the local Postfix, its certificate checked), with
    the test's port and, as the table allows, the CA that signed the certificate."""
    toml = blocks(section("TLS to the relay"), "toml")[0].split("\n\n")[0]
    example = tomllib.loads(toml)
    assert example["relay"] == "127.0.0.1:25" and example["relay_tls"] == "starttls"
    return {**example, "relay": f"127.0.0.1:{postfix.port}", "relay_ca_file": postfix.ca_file}


@pytest.mark.db
def test_the_relay_kit_and_dkim_section_work_behind_a_real_postfix(
    host: Host, db_url: str, engine: Engine, tmp_path: Path
) -> None:
    require_postfix()
    published = follow_the_dkim_section(host)
    postfix = KitPostfix(
        listen_port=free_port(),
        sink_port=free_port(),
        mailboxes=("alice", "operator"),
        keep_dir=tmp_path,
    )
    server: RunningServer | None = None
    try:
        postfix.start()
        settings = load_settings(
            {
                "db_url": db_url,
                "listen": f"127.0.0.1:{postfix.listen_port}",
                "spool": tmp_path / "spool",
                "poll_seconds": 0.2,
                **first_relay_example(postfix),
            },
            environ={},
            config_file=host.config,
        )
        assert settings.address == SERVER and settings.confirm_addresses
        server = RunningServer(settings).start()

        # A newcomer writes to the server through Postfix: the answer (the confirmation mail,
        # as the server ships) comes back through the same Postfix, signed.
        command = make_mail("alice@example.org", "help", "help\n", to=SERVER)
        assert smtp_send(postfix.port, command, to=SERVER)[0] == 250
        [raw] = postfix.wait_for_mail("alice", 1, timeout=60)
        settle(engine)
        wire = re.sub(rb"\r?\n", b"\r\n", raw)
        assert dkim.verify(wire, dnsfunc=published.dns), raw[:2000]
        message = email.message_from_bytes(raw, policy=email.policy.default)
        signature = dict(
            part.strip().split("=", 1)
            for part in str(message["DKIM-Signature"]).replace("\n", "").split(";")
            if "=" in part
        )
        # DMARC alignment: the signing domain is the From's.
        assert signature["d"] == DOMAIN == message["From"].addresses[0].domain

        # The DMARC reports' address is accepted and reaches the person it is aliased to.
        report = make_mail("reports@receiver.example", "Report domain", "xml\n", to="x")
        assert smtp_send(postfix.port, report, to=f"postmaster@{DOMAIN}")[0] == 250
        [forwarded] = postfix.wait_for_mail("operator", 1, timeout=60)
        assert b"Report domain" in forwarded
        # Anyone else at the domain is refused at RCPT time.
        with smtplib.SMTP("127.0.0.1", postfix.port, timeout=30) as client:
            client.ehlo("test.example")
            client.mail("someone@example.org")
            code, _ = client.rcpt(f"nobody@{DOMAIN}")
        assert code == 550
    finally:
        if server is not None:
            server.stop()
        postfix.stop()
