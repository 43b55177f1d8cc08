"""Reliability: a SIGKILLed registry keeps every acknowledged registration and never reuses an
id; plan/push through a registry that fails part-way report the truth and converge on re-run."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from registry_sync.client import RegistryClient, RegistryConfig
from registry_sync.desired import desired_subjects
from registry_sync.sync import Outcome, push

from .helpers import make_contract


def test_sigkill_during_concurrent_registrations(fresh_registry) -> None:
    url = fresh_registry.url
    assert httpx.put(f"{url}/config", json={"compatibility": "NONE"}).status_code == 200
    acked: list[tuple[str, int, int, str]] = []
    stop = threading.Event()

    def worker(n: int) -> None:
        with httpx.Client(timeout=5.0) as http:
            i = 0
            while not stop.is_set():
                fields = [{"name": f"w{n}_{i}", "type": "long"}]
                schema = json.dumps({"type": "record", "name": f"R{n}", "fields": fields})
                try:
                    r = http.post(f"{url}/subjects/s{n % 3}/versions", json={"schema": schema})
                except httpx.TransportError:
                    return
                if r.status_code == 200:
                    body = r.json()
                    acked.append((f"s{n % 3}", body["version"], body["id"], schema))
                i += 1

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 10
    while len(acked) < 60 and time.monotonic() < deadline:
        time.sleep(0.02)
    fresh_registry.kill()  # mid-flight: the workers are still sending
    stop.set()
    for t in threads:
        t.join(10)
    assert len(acked) >= 60

    fresh_registry.start()
    ids: dict[int, str] = {}
    with httpx.Client() as http:
        for subject, version, schema_id, schema in acked:
            got = http.get(f"{url}/subjects/{subject}/versions/{version}").json()
            assert got["id"] == schema_id
            assert json.loads(got["schema"]) == json.loads(schema)
            assert ids.setdefault(schema_id, schema) == schema  # one id, one schema
        new = json.dumps({"type": "record", "name": "After", "fields": []})
        after = http.post(f"{url}/subjects/after/versions", json={"schema": new}).json()
    assert after["id"] > max(ids)


class FlakyProxy:
    """A real HTTP proxy in front of the registry that fails chosen requests.

    ``rules`` maps (method, path) to ``"500"`` (answer 500), ``"drop"`` (close the connection
    without answering) or ``"lose-answer"`` (forward, then close without answering, once).
    """

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.http = httpx.Client(timeout=10.0)
        self.rules: dict[tuple[str, str], str] = {}
        self.lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_args: object) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                path = self.path.split("?")[0]
                with proxy.lock:
                    rule = proxy.rules.get((self.command, path))
                    if rule == "lose-answer":
                        del proxy.rules[(self.command, path)]
                if rule == "drop":
                    self.close_connection = True
                    return
                if rule == "500":
                    self._answer(500, b'{"error_code": 50001, "message": "store failure"}')
                    return
                forwarded = proxy.http.request(
                    self.command,
                    proxy.upstream + self.path,
                    content=body,
                    headers={"Content-Type": self.headers.get("Content-Type", "")},
                )
                if rule == "lose-answer":
                    self.close_connection = True
                    return
                self._answer(forwarded.status_code, forwarded.content)

            def _answer(self, status: int, content: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)

            do_GET = do_POST = do_PUT = do_DELETE = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FlakyProxy:
        self.thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.http.close()


@pytest.fixture
def proxy(registry) -> Iterator[FlakyProxy]:
    with FlakyProxy(registry.url) as p:
        yield p


def test_push_through_a_failing_registry_is_truthful_and_converges(
    registry, proxy: FlakyProxy, unique: str
) -> None:
    names = [f"{unique}.{x}" for x in "abcd"]
    desired = desired_subjects([make_contract(n) for n in names])
    proxy.rules = {
        ("POST", f"/subjects/{names[1]}-value/versions"): "500",
        ("POST", f"/subjects/{names[2]}-value"): "drop",
        ("POST", f"/subjects/{names[3]}-value/versions"): "lose-answer",
    }
    config = RegistryConfig(url=proxy.url, max_retries=2, retry_wait_ms=5, timeout=5.0)
    with RegistryClient(config) as client:
        first = {r.plan.subject: r for r in push(client, desired, concurrency=4)}
    expected_failed = {f"{names[1]}-value", f"{names[2]}-value"}
    assert {s for s, r in first.items() if not r.ok} == expected_failed
    assert "HTTP 500, error_code 50001" in (first[f"{names[1]}-value"].error or "")
    assert "unreachable" in (first[f"{names[2]}-value"].error or "")
    # the lost answer was retried: the registration is idempotent, reported once, version 1
    assert first[f"{names[3]}-value"].outcome is Outcome.CREATED
    assert first[f"{names[3]}-value"].version == 1
    with httpx.Client() as http:  # the report matches the registry's state
        for subject, result in first.items():
            versions = http.get(f"{registry.url}/subjects/{subject}/versions")
            assert (versions.status_code == 200) == result.ok, subject
            if result.ok:
                assert versions.json() == [1]

    proxy.rules = {}
    with RegistryClient(config) as client:
        second = {r.plan.subject: r.outcome for r in push(client, desired)}
        third = {r.plan.subject: r.outcome for r in push(client, desired)}
    assert {s for s, o in second.items() if o is Outcome.CREATED} == expected_failed
    assert {o for s, o in second.items() if s not in expected_failed} == {Outcome.UNCHANGED}
    assert set(third.values()) == {Outcome.UNCHANGED}
