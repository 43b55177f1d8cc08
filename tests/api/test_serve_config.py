"""`cdc-contracts serve --config`: the project configuration's contracts directory and registry,
flags first; a real server process."""

from __future__ import annotations

from pathlib import Path

import httpx
from api_server import contracts_dir, start_server, stop_server


def test_serve_takes_the_contracts_directory_from_the_configuration(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    directory = contracts_dir(project)
    config = project / "cdc-contracts.yaml"
    config.write_text("contracts: contracts\n")
    server = start_server(
        tmp_path, "--registry-db", str(tmp_path / "r.db"), "--config", str(config)
    )
    try:
        body = httpx.get(f"{server.url}/health", timeout=10).json()
        assert body["registry"] == "embedded"  # --registry-db wins over any registry.url
        assert body["contracts_dir"] == str(directory.resolve())
        listing = httpx.get(f"{server.url}/contracts", timeout=10).json()
        names = [c["name"] for c in listing["items"]]
        assert "pgserver1.public.orders" in names
    finally:
        stop_server(server)


def test_serve_refuses_a_bad_configuration(tmp_path: Path) -> None:
    config = tmp_path / "cdc-contracts.yaml"
    config.write_text("contracts: contracts\nregistry:\n  password: hunter2\n")
    try:
        start_server(tmp_path, "--config", str(config))
    except RuntimeError as err:
        assert "cdc-contracts.yaml:3: registry.password: a secret may not be written" in str(err)
        assert "hunter2" not in str(err)
    else:
        raise AssertionError("serve started with a secret in its configuration")
