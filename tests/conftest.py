"""Shared fixtures: one local Spark session per test run, paths to fixtures, free ports."""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).parent.parent


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return FIXTURES


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """The one local Spark session (local[2], UTC) shared by every Spark-marked test."""
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("Java 17 is not installed: Spark tests need it")
    from spark_bindings.session import local_session

    session = local_session(
        "cdc-contracts-tests",
        spark_driver_memory="2g",
        spark_sql_execution_arrow_pyspark_enabled="true",
    )
    yield session
    session.stop()
