"""Real PostgreSQL and MariaDB servers for the live derive tests: a temp dir, a free port, stopped after.

The servers are the Debian packages (``postgresql``, ``mariadb-server``; ``.ci/run`` installs
them). A test using one is skipped, saying why, only when the binaries are missing or the
server does not start; the log tail is in the skip message.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as(user: str) -> list[str]:
    """Run as ``user`` when we are root (the servers refuse to run as root)."""
    if os.geteuid() != 0:
        return []
    try:
        pwd.getpwnam(user)
    except KeyError:
        pytest.skip(f"running as root and there is no {user!r} user to run the server as")
    runuser = shutil.which("runuser")
    if runuser is None:
        pytest.skip("running as root and runuser is missing: cannot start the server")
    return [runuser, "-u", user, "--"]


def _chown(path: Path, user: str) -> None:
    if os.geteuid() == 0:
        entry = pwd.getpwnam(user)
        for root, dirs, files in os.walk(path):
            for name in [*dirs, *files, "."]:
                os.chown(os.path.join(root, name), entry.pw_uid, entry.pw_gid)


def _tail(path: Path) -> str:
    try:
        return " | ".join(path.read_text(errors="replace").splitlines()[-5:])
    except OSError:
        return "(no log)"


def _postgres_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


@contextmanager
def postgres_server(tmp: Path) -> Iterator[str]:
    """A fresh PostgreSQL cluster; yields its URL."""
    initdb, pg_ctl = _postgres_bin("initdb"), _postgres_bin("pg_ctl")
    if initdb is None or pg_ctl is None:
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql): live tests not run")
    tmp.mkdir(parents=True, exist_ok=True)
    data, log = tmp / "data", tmp / "server.log"
    prefix = _as("postgres")
    _chown(tmp, "postgres")
    init = subprocess.run(
        [*prefix, initdb, "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8"],
        capture_output=True,
        text=True,
        check=False,
    )
    if init.returncode != 0:
        pytest.skip(f"PostgreSQL initdb failed, live tests not run: {init.stderr.strip()[-300:]}")
    port = free_port()
    options = f"-p {port} -k {tmp} -c listen_addresses=127.0.0.1 -c fsync=off"
    start = subprocess.run(
        [*prefix, pg_ctl, "-D", str(data), "-o", options, "-l", str(log), "-w", "start"],
        capture_output=True,
        text=True,
        check=False,
    )
    if start.returncode != 0:
        pytest.skip(f"PostgreSQL did not start, live tests not run: {_tail(log)}")
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            [*prefix, pg_ctl, "-D", str(data), "-m", "immediate", "stop"],
            capture_output=True,
            check=False,
        )


@contextmanager
def mariadb_server(tmp: Path) -> Iterator[str]:
    """A fresh MariaDB server (grant tables skipped: no passwords); yields its URL."""
    install = shutil.which("mariadb-install-db") or shutil.which("mysql_install_db")
    server = shutil.which("mariadbd") or shutil.which("mysqld")
    if server is None and os.path.exists("/usr/sbin/mariadbd"):
        server = "/usr/sbin/mariadbd"
    if install is None or server is None:
        pytest.skip("MariaDB is not installed (apt-get install mariadb-server): live tests not run")
    tmp.mkdir(parents=True, exist_ok=True)
    data, log, sock = tmp / "data", tmp / "server.log", tmp / "mysqld.sock"
    user = ["--user=mysql"] if os.geteuid() == 0 else []
    if os.geteuid() == 0:
        _as("mysql")
        _chown(tmp, "mysql")
    init = subprocess.run(
        [install, "--no-defaults", f"--datadir={data}", *user, "--auth-root-authentication-method=normal",
         "--skip-test-db"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if init.returncode != 0:
        pytest.skip(f"mariadb-install-db failed, live tests not run: {init.stderr.strip()[-300:]}")
    port = free_port()
    process = subprocess.Popen(
        [server, "--no-defaults", f"--datadir={data}", f"--socket={sock}", f"--port={port}",
         "--bind-address=127.0.0.1", "--skip-grant-tables", "--skip-networking=0",
         "--explicit-defaults-for-timestamp=1", f"--log-error={log}", *user],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        if not _wait_for_port(port, process):
            pytest.skip(f"MariaDB did not start, live tests not run: {_tail(log)}")
        yield f"mysql://root@127.0.0.1:{port}/"
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_for_port(port: int, process: subprocess.Popen[bytes], seconds: float = 30) -> bool:
    import socket

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return True
        time.sleep(0.2)
    return False
