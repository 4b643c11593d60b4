"""The rig every end-to-end bench runs on: a recording relay sink, a scratch database (a SQLite
file or a private PostgreSQL schema), `pbmserv serve` as a child process with the bench
environment and an SMTP client that reports status codes. On top of it, imported by their
full names and not from here: the Chameleon move load of throughput.py and growth.py
(``bench.rig.move_load``, its relay in a process of its own ``bench.rig.noting_relay``), and the
hostile mail of bench/security/fuzz_mail.py (``bench.rig.hostile_mail``, ``bench.rig.abuse``),
and another commit's server built and run beside the work tree (``bench.rig.baseline``).

- basics: ports on 127.0.0.1, bounded waits, threads, child processes, a work folder, a
  percentile, a log's tracebacks, a table of figures;
- cpu_and_memory: what the processes under test cost, from /proc;
- relays: the recording relay, a baseline relay in a child process, a bare aiosmtpd ``Sink``,
  reading relayed mail;
- server: `pbmserv serve` as a child process, its environment, the scratch database, waiting
  until the server has done its work;
- smtp_client: the client, the message it sends, a plain one-command message.

Everything talks to 127.0.0.1 only, and every wait is bounded: a run that cannot finish in time
returns what it has and says so in its notes. Scripts import what they use from here
(``from bench.rig import ServerProcess``).

Run ``python -m bench.rig aiosmtpd-sink PORT`` (from the checkout) or ``python
bench/rig/__main__.py aiosmtpd-sink PORT`` (from anywhere) to get a bare aiosmtpd ``Sink`` relay
on 127.0.0.1 (throughput.py starts it so); it stops by itself after an hour at most.
"""

from bench.rig.basics import (
    count_tracebacks,
    free_port,
    parse_host_port,
    percentile,
    print_rows,
    start_threads,
    wait_listening,
    wait_or_kill,
    wait_until,
    workdir_for,
)
from bench.rig.cpu_and_memory import (
    child_pids,
    cpu_by_part,
    cpu_seconds,
    load_average,
    memory_by_part,
    postgres_cpu,
    postgres_cpu_since,
    roles_by_pid,
    vm_hwm_kb,
)
from bench.rig.relays import (
    BOARD_SUBJECT,
    RecordingRelay,
    Relayed,
    SinkProcess,
    header_text,
    message_ids,
    parse_relayed,
    serve_aiosmtpd_sink,
)
from bench.rig.server import (
    BENCH_ENV,
    DEFAULT_PG,
    ROOT,
    SERVER_ADDRESS,
    ScratchDatabase,
    ServerProcess,
    Settled,
    announce,
    pbmserv_command,
    scratch_database,
    server_env,
    sign_off,
    wait_settled,
)
from bench.rig.smtp_client import Outgoing, SmtpClient, mail_bytes

__all__ = [
    "BENCH_ENV",
    "BOARD_SUBJECT",
    "DEFAULT_PG",
    "ROOT",
    "SERVER_ADDRESS",
    "Outgoing",
    "RecordingRelay",
    "Relayed",
    "ScratchDatabase",
    "ServerProcess",
    "Settled",
    "SinkProcess",
    "SmtpClient",
    "announce",
    "child_pids",
    "count_tracebacks",
    "cpu_by_part",
    "cpu_seconds",
    "free_port",
    "header_text",
    "load_average",
    "mail_bytes",
    "memory_by_part",
    "message_ids",
    "parse_host_port",
    "parse_relayed",
    "pbmserv_command",
    "percentile",
    "postgres_cpu",
    "postgres_cpu_since",
    "print_rows",
    "roles_by_pid",
    "scratch_database",
    "serve_aiosmtpd_sink",
    "server_env",
    "sign_off",
    "start_threads",
    "vm_hwm_kb",
    "wait_listening",
    "wait_or_kill",
    "wait_settled",
    "wait_until",
    "workdir_for",
]
