"""A bounded schemathesis run against the live service's OpenAPI schema: no request gets a 5xx.

The Schema Registry routes (tag ``schema registry``) are tested by their own suite; here every
contract API operation gets generated requests (valid and invalid, ``MAX_EXAMPLES`` each), sent
with the API key so that ``PUT`` reaches its parsing and registration logic.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from api_server import API_KEY, Server
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable

schemathesis = pytest.importorskip("schemathesis", reason="pip install schemathesis")

MAX_EXAMPLES = 25  # per operation and generation mode


def _operations(server: Server) -> list[Any]:
    schema = schemathesis.openapi.from_url(server.url + "/openapi.json")
    schema = schema.exclude(tag="schema registry")
    return [result.ok() for result in schema.get_all_operations()]


def test_no_server_errors(server: Server) -> None:
    operations = _operations(server)
    assert len(operations) >= 9
    failures: list[str] = []
    calls = 0

    modes = list(schemathesis.GenerationMode)  # positive (valid) and negative (invalid) data
    for operation, mode in itertools.product(operations, modes):

        @given(case=operation.as_strategy(mode))
        @settings(
            max_examples=MAX_EXAMPLES,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            derandomize=True,
            database=None,
        )
        def run(case: Any) -> None:
            nonlocal calls
            response = case.call(headers={"X-API-Key": API_KEY}, timeout=30)
            calls += 1
            if response.status_code >= 500:
                failures.append(
                    f"{case.method} {case.formatted_path}: {response.status_code} {response.text[:200]}"
                )

        try:
            run()
        except Unsatisfiable:
            assert mode is schemathesis.GenerationMode.NEGATIVE  # nothing to make invalid
    assert calls >= len(operations) * len(modes) * 5
    assert not failures, "\n".join(failures[:20])
