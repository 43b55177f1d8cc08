"""Session fixtures of the derive tests: one PostgreSQL and one MariaDB server per test run."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from .servers import mariadb_server, postgres_server


def _scratch(prefix: str) -> Path:
    # under /tmp itself: the server's own user must reach it (pytest's tmp dirs are 0700)
    path = Path(tempfile.mkdtemp(prefix=prefix))
    path.chmod(0o755)
    return path


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    tmp = _scratch("cdc-derive-pg-")
    try:
        with postgres_server(tmp / "pg") as url:
            yield url
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="session")
def mariadb_url() -> Iterator[str]:
    tmp = _scratch("cdc-derive-mariadb-")
    try:
        with mariadb_server(tmp / "mariadb") as url:
            yield url
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
