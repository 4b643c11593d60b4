"""A real Postfix (Debian's package), started privately by a test: its own configuration,
queue and data directories, listening on 127.0.0.1 only, stopped (and checked gone) after.

The instance stands for the mail host of ``games.example.org``:

- its smtpd offers STARTTLS with a certificate for ``mx.games.example.org`` from a test CA
  (``ca_file``), so pbmserv can relay with ``relay_tls = "starttls"`` and check it;
- mail for ``games.example.org`` (players' commands, delivery reports) is relayed to the
  pbmserv listener on ``listen_port``;
- mail for ``example.org`` (the players) is delivered by virtual(8) into maildirs;
- mail for ``gone.example.net`` goes to an SMTP server on ``sink_port`` that the test runs
  (one that refuses every recipient makes Postfix send a real DSN);
- anything else fails at once (``default_transport = error``): nothing leaves the machine.

What a second instance needs, found out on Debian's Postfix 3.7 run as root:

- ``postfix -c DIR`` is enough as root: the ``alternate_config_directories`` /
  ``multi_instance_directories`` check of the default main.cf only applies to set-gid callers
  run by other users; ``postfix -c DIR check`` creates the queue directory tree with the
  right owners (``postfix``, ``postdrop``); ``data_directory`` must be owned by ``postfix``;
- every directory above the queue must be searchable by the ``postfix`` user, and the queue's
  UNIX sockets must fit in 108 bytes: so the instance lives in a short ``/tmp/pbmpf-*``
  directory (mode 0755), not in pytest's (mode 0700, deep) ``tmp_path``;
- ``maillog_file`` needs the ``postlog`` service in master.cf and the file's directory in
  ``maillog_file_prefixes`` (default ``/var, /dev/stdout``), otherwise every postfix command
  exits 1 with the reason logged only to a syslog that is not there;
- no service is chrooted (the master.cf here says ``n``), so no copies of /etc are needed;
- virtual(8) refuses uid 0: mailboxes belong to ``nobody``;
- the master runs as ``master -w`` (its configuration comes in ``MAIL_CONFIG``), so it is
  found by its pid file and by its working directory (the queue), never by name.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType

import pytest
import trustme

POSTFIX = Path("/usr/sbin/postfix")
POSTCONF = Path("/usr/sbin/postconf")
POSTQUEUE = Path("/usr/sbin/postqueue")
SERVER_NAME = "mx.games.example.org"
GAME_DOMAIN = "games.example.org"
PLAYER_DOMAIN = "example.org"
GONE_DOMAIN = "gone.example.net"
MAILBOX_USER = "nobody"


def _on_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def postfix_version() -> tuple[int, ...] | None:
    if not POSTCONF.exists():
        return None
    try:
        out = subprocess.run(
            [str(POSTCONF), "-d", "-h", "mail_version"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return tuple(int(part) for part in re.findall(r"\d+", out)[:3]) or None


def unavailable_reason() -> str | None:
    """Why a private Postfix cannot run here (None: it can)."""
    if not POSTFIX.exists():
        return f"Postfix is not installed ({POSTFIX}): apt-get install postfix"
    if os.geteuid() != 0:
        return "a private Postfix instance must be started by root"
    version = postfix_version()
    if version is None or version < (3, 4):
        return f"Postfix {version} is too old: maillog_file and inline: maps need 3.4"
    try:
        import pwd

        pwd.getpwnam("postfix")
        pwd.getpwnam(MAILBOX_USER)
    except KeyError as error:
        return f"a user Postfix needs is missing: {error}"
    return None


def require_postfix() -> None:
    """Skip the calling test where Postfix cannot run; on CI (CI=true), fail instead."""
    reason = unavailable_reason()
    if reason is None:
        return
    if _on_ci():
        pytest.fail(f"CI must run the real-Postfix tests, but {reason}", pytrace=False)
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


MASTER_CF = """\
# service type  private unpriv  chroot  wakeup  maxproc command
127.0.0.1:{port} inet n - n - - smtpd
pickup    unix  n       -       n       60      1       pickup
cleanup   unix  n       -       n       -       0       cleanup
qmgr      unix  n       -       n       300     1       qmgr
tlsmgr    unix  -       -       n       1000?   1       tlsmgr
rewrite   unix  -       -       n       -       -       trivial-rewrite
bounce    unix  -       -       n       -       0       bounce
defer     unix  -       -       n       -       0       bounce
trace     unix  -       -       n       -       0       bounce
verify    unix  -       -       n       -       1       verify
flush     unix  n       -       n       1000?   0       flush
proxymap  unix  -       -       n       -       -       proxymap
proxywrite unix -       -       n       -       1       proxymap
smtp      unix  -       -       n       -       -       smtp
relay     unix  -       -       n       -       -       smtp
showq     unix  n       -       n       -       -       showq
error     unix  -       -       n       -       -       error
retry     unix  -       -       n       -       -       error
discard   unix  -       -       n       -       -       discard
virtual   unix  -       n       n       -       -       virtual
anvil     unix  -       -       n       -       1       anvil
scache    unix  -       -       n       -       1       scache
postlog   unix-dgram n  -       n       -       1       postlogd
"""


def _inline(pairs: Iterable[tuple[str, str]]) -> str:
    return "inline:{ " + ", ".join(f"{key}={value}" for key, value in pairs) + " }"


class RealPostfix:
    """A private Postfix instance; use as a context manager (or ``start``/``stop``)."""

    server_name = SERVER_NAME

    def __init__(
        self,
        *,
        listen_port: int,
        sink_port: int,
        port: int | None = None,
        mailboxes: Iterable[str] = ("alice", "bob"),
        keep_dir: Path | None = None,
    ) -> None:
        self.listen_port = listen_port
        self.sink_port = sink_port
        self.port = port if port is not None else free_port()
        self.users = list(mailboxes)
        # Where the log and configuration are copied when the instance stops (tmp_path).
        self.keep_dir = keep_dir
        self.root = Path(tempfile.mkdtemp(prefix="pbmpf-", dir="/tmp"))
        self.root.chmod(0o755)
        self.config_dir = self.root / "etc"
        self.queue_dir = self.root / "queue"
        self.data_dir = self.root / "data"
        self.mailbox_base = self.root / "mailboxes"
        self.maillog = self.root / "maillog"
        self.ca_file = self.root / "test-ca.pem"
        self.master_pid: int | None = None
        self.running = False
        # Processes ``postfix stop`` left behind, that stop() had to kill (none, normally).
        self.killed: list[int] = []

    # --- set-up -------------------------------------------------------------------------

    def _main_cf(self, cert: Path, key: Path) -> str:
        import pwd

        owner = pwd.getpwnam(MAILBOX_USER)
        transports = [
            (GAME_DOMAIN, f"smtp:[127.0.0.1]:{self.listen_port}"),
            (GONE_DOMAIN, f"smtp:[127.0.0.1]:{self.sink_port}"),
        ]
        boxes = [(f"{user}@{PLAYER_DOMAIN}", f"{user}/") for user in self.users]
        settings = {
            "compatibility_level": "3.6",
            "queue_directory": self.queue_dir,
            "data_directory": self.data_dir,
            "myhostname": SERVER_NAME,
            "mydomain": GAME_DOMAIN,
            "myorigin": "$myhostname",
            "mydestination": "",
            "inet_interfaces": "loopback-only",
            "inet_protocols": "ipv4",
            "mynetworks": "127.0.0.0/8",
            "smtpd_relay_restrictions": "permit_mynetworks, reject_unauth_destination",
            "biff": "no",
            "alias_maps": "",
            "alias_database": "",
            "local_recipient_maps": "",
            # pbmserv's domain: relayed to its listener (plus addresses pass as they are).
            "relay_domains": GAME_DOMAIN,
            "recipient_delimiter": "+",
            "transport_maps": _inline(transports),
            # Nothing else leaves this machine: no DNS, no Internet.
            "default_transport": "error:this test instance delivers to its own domains only",
            "relay_transport": "error:this test instance delivers to its own domains only",
            "smtp_dns_support_level": "disabled",
            "smtp_host_lookup": "native",
            # The players: maildirs written by virtual(8) (as nobody: it refuses root).
            "virtual_mailbox_domains": PLAYER_DOMAIN,
            "virtual_mailbox_base": self.mailbox_base,
            "virtual_mailbox_maps": _inline(boxes),
            "virtual_uid_maps": f"static:{owner.pw_uid}",
            "virtual_gid_maps": f"static:{owner.pw_gid}",
            # STARTTLS offered with the test CA's certificate; logged, and named in Received.
            "smtpd_tls_cert_file": cert,
            "smtpd_tls_key_file": key,
            "smtpd_tls_security_level": "may",
            "smtpd_tls_loglevel": "1",
            "smtpd_tls_received_header": "yes",
            "smtp_tls_security_level": "none",
            # Quick queue runs: a deferred message is retried within seconds.
            "queue_run_delay": "1s",
            "minimal_backoff_time": "1s",
            "maximal_backoff_time": "2s",
            "notify_classes": "",
            "maillog_file": self.maillog,
            "maillog_file_prefixes": self.root,
        }
        return "".join(f"{name} = {value}\n" for name, value in settings.items())

    def _write_config(self) -> None:
        self.config_dir.mkdir(mode=0o755)
        self.queue_dir.mkdir(mode=0o755)
        self.data_dir.mkdir(mode=0o700)
        shutil.chown(self.data_dir, "postfix", "postfix")
        self.mailbox_base.mkdir(mode=0o755)
        shutil.chown(self.mailbox_base, MAILBOX_USER)
        ca = trustme.CA(organization_name="pbmserv test CA")
        issued = ca.issue_cert(SERVER_NAME)
        ca.cert_pem.write_to_path(str(self.ca_file))
        cert, key = self.config_dir / "mx.crt", self.config_dir / "mx.key"
        cert.write_bytes(b"".join(blob.bytes() for blob in issued.cert_chain_pems))
        issued.private_key_pem.write_to_path(str(key))
        key.chmod(0o600)
        (self.config_dir / "main.cf").write_text(self._main_cf(cert, key))
        (self.config_dir / "master.cf").write_text(MASTER_CF.format(port=self.port))

    def _postfix(self, *args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(POSTFIX), "-c", str(self.config_dir), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )

    def _failed(self, what: str, result: subprocess.CompletedProcess[str]) -> RuntimeError:
        # Postfix commands write their complaints to the log (stderr only on a terminal).
        return RuntimeError(
            f"postfix {what} exited {result.returncode}: {result.stdout}{result.stderr}\n"
            f"--- {self.maillog} ---\n{self.log()}"
        )

    def start(self) -> RealPostfix:
        try:
            self._write_config()
            checked = self._postfix("check")  # creates the queue tree with its owners
            if checked.returncode != 0:
                raise self._failed("check", checked)
            self.running = True  # from here on, stop() must run even if start fails
            started = self._postfix("start")
            if started.returncode != 0:
                raise self._failed("start", started)
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        pid_file = self.queue_dir / "pid" / "master.pid"
        while time.monotonic() < deadline:
            if self.master_pid is None and pid_file.exists():
                text = pid_file.read_text().strip()
                self.master_pid = int(text) if text.isdigit() else None
            if self.master_pid is not None:
                try:
                    with socket.create_connection(("127.0.0.1", self.port), timeout=2) as sock:
                        greeting = sock.recv(512)
                        sock.sendall(b"QUIT\r\n")
                        sock.recv(512)
                    if greeting.startswith(b"220"):
                        return
                except OSError:
                    pass
            time.sleep(0.1)
        raise RuntimeError(f"Postfix did not answer on 127.0.0.1:{self.port}\n{self.log()}")

    # --- tear-down ----------------------------------------------------------------------

    def processes(self) -> list[int]:
        """Live processes of this instance: its master and every daemon (all of them work in
        its queue directory), zombies left aside."""
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                cwd = os.readlink(entry / "cwd")
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if state != "Z" and (cwd == str(self.root) or cwd.startswith(f"{self.root}/")):
                found.append(int(entry.name))
        return sorted(found)

    def stop(self, timeout: float = 15.0) -> None:
        """``postfix stop``, then wait until no process of the instance is left (the master
        is killed by its pid should it hang), then keep the log and remove the instance."""
        if self.running:
            self._postfix("stop")
            self.running = False
        deadline = time.monotonic() + timeout
        while self.processes() and time.monotonic() < deadline:
            time.sleep(0.05)
        # Still there: killed, by pid (only this instance's own processes), and noted.
        self.killed = self.processes()
        for pid in self.killed:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self._keep()
        shutil.rmtree(self.root, ignore_errors=True)

    def _keep(self) -> None:
        if self.keep_dir is None:
            return
        self.keep_dir.mkdir(parents=True, exist_ok=True)
        for source, name in (
            (self.maillog, "postfix-maillog"),
            (self.config_dir / "main.cf", "postfix-main.cf"),
            (self.config_dir / "master.cf", "postfix-master.cf"),
        ):
            if source.exists():
                shutil.copyfile(source, self.keep_dir / name)

    def __enter__(self) -> RealPostfix:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()

    # --- looking at it ------------------------------------------------------------------

    def log(self) -> str:
        try:
            return self.maillog.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def wait_for_log(self, pattern: str, count: int = 1, timeout: float = 20.0) -> list[str]:
        """The log lines matching ``pattern`` (a regular expression), once there are
        ``count`` of them."""
        deadline = time.monotonic() + timeout
        regex = re.compile(pattern)
        while True:
            lines = [line for line in self.log().splitlines() if regex.search(line)]
            if len(lines) >= count:
                return lines
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{len(lines)} of {count} Postfix log lines match {pattern!r}:\n{self.log()}"
                )
            time.sleep(0.1)

    def mailbox(self, user: str) -> list[bytes]:
        """The raw messages in ``user``'s maildir (new/ and cur/), oldest first."""
        files: list[Path] = []
        for sub in ("new", "cur"):
            folder = self.mailbox_base / user / sub
            if folder.is_dir():
                files.extend(path for path in folder.iterdir() if path.is_file())
        files.sort(key=lambda path: (path.stat().st_mtime_ns, path.name))
        return [path.read_bytes() for path in files]

    def wait_for_mail(self, user: str, count: int, timeout: float = 20.0) -> list[bytes]:
        """``user``'s messages once there are at least ``count`` of them."""
        deadline = time.monotonic() + timeout
        while True:
            messages = self.mailbox(user)
            if len(messages) >= count:
                return messages
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"{user}@{PLAYER_DOMAIN} has {len(messages)} of {count} messages\n"
                    f"--- Postfix log ---\n{self.log()}"
                )
            time.sleep(0.05)

    def flush(self) -> None:
        """Retry every deferred message now (``postqueue -f``)."""
        subprocess.run(
            [str(POSTQUEUE), "-c", str(self.config_dir), "-f"],
            capture_output=True,
            timeout=30,
            check=True,
        )

    def queue(self) -> str:
        """``postqueue -p``: what is still waiting."""
        return subprocess.run(
            [str(POSTQUEUE), "-c", str(self.config_dir), "-p"],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout
