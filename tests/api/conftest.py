"""Fixtures of the API tests: one real ``cdc-contracts serve`` process per session."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from api_server import Server, contracts_dir, start_keyed_server, stop_server


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The service with the embedded registry, a contracts dir and an API key."""
    tmp = tmp_path_factory.mktemp("api")
    directory = contracts_dir(tmp)
    srv = start_keyed_server(tmp, directory)
    yield srv
    stop_server(srv)


@pytest.fixture()
def client(server: Server) -> Iterator[httpx.Client]:
    with server.client() as c:
        yield c
