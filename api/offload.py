"""CPU work of requests runs off the event loop: a bounded process pool with a bounded queue
and a per-request time budget.

Parsing a contract or a candidate, diffing, rendering and inferring from a request body can
take seconds for large bodies; on the event loop that would stall every other request (the
registry reads producers depend on). :class:`Offload` runs such work in worker processes (no
GIL shared with the loop); when every worker is busy and the queue is full, or the work
outlasts its budget, the request is answered 503 with ``Retry-After`` instead of waiting.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Final, ParamSpec, TypeVar

from contracts.errors import ContractsError

P = ParamSpec("P")
T = TypeVar("T")

#: seconds a client is told to wait before retrying a refused request
RETRY_AFTER: Final = 2


class BusyError(ContractsError):
    """The service is saturated (every worker busy, the queue full) or the request's work took
    longer than its budget: 503 with ``Retry-After``."""

    exit_code = 2
    http_status = 503
    retry_after = RETRY_AFTER


def _warm() -> int:
    """Import what requests need, in a worker, before the first request does (the functions
    sent to workers live in these modules), and judge one small contract (lazy imports)."""
    import api.catalog
    import api.routers.contracts
    import api.routers.diff
    import api.routers.infer  # noqa: F401
    from contracts.contract import Contract
    from contracts.diff.verdict import contract_verdict
    from contracts.errors import ContractsError
    from registry_sync.desired import desired_subjects

    contract = Contract.model_validate(
        {
            "name": "warm.up",
            "format": "debezium-json",
            "table": {"name": "t"},
            "key": ["id"],
            "columns": [{"field": "id", "type": "int64", "optional": False}],
        }
    )
    try:
        desired_subjects([contract])
        contract_verdict(contract, [])
    except ContractsError:
        pass  # warming is best effort
    return os.getpid()


class Offload:
    """At most ``workers`` tasks run at once and ``queue`` more wait; each gets ``budget``
    seconds. ``processes=False`` runs them in threads (for tests of the limits)."""

    def __init__(self, workers: int, queue: int, budget: float, *, processes: bool = True) -> None:
        self.workers = workers
        self.capacity = workers + queue
        self.budget = budget
        self.processes = processes
        self._pending = 0
        self._executor: Executor | None = None

    def _pool(self) -> Executor:
        if self._executor is None:
            if self.processes:
                context = multiprocessing.get_context("spawn")
                self._executor = ProcessPoolExecutor(self.workers, mp_context=context)
            else:
                self._executor = ThreadPoolExecutor(self.workers, "offload")
        return self._executor

    async def start(self) -> None:
        """Start the workers and import the project in them (so the first request is not slow)."""
        loop = asyncio.get_running_loop()
        pool = self._pool()
        await asyncio.gather(*(loop.run_in_executor(pool, _warm) for _ in range(self.workers)))

    def close(self) -> None:
        """Stop the workers now (work in flight is abandoned: its requests are answered)."""
        if self._executor is None:
            return
        # worker processes blocked on an empty queue would outlive a server that exits without
        # waiting for them: end them
        processes = list(getattr(self._executor, "_processes", {}).values())
        self._executor.shutdown(wait=False, cancel_futures=True)
        self._executor = None
        for process in processes:
            process.terminate()
        for process in processes:
            process.join(2)

    @property
    def pending(self) -> int:
        """Tasks running or waiting."""
        return self._pending

    async def run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """``fn(*args, **kwargs)`` in a worker; :class:`BusyError` when saturated or over budget.

        ``fn`` and its arguments must pickle (module-level functions, plain data, models)."""
        if self._pending >= self.capacity:
            raise BusyError(
                f"the service is busy ({self._pending} requests being processed); retry later"
            )
        loop = asyncio.get_running_loop()
        self._pending += 1
        try:
            future = loop.run_in_executor(self._pool(), _call, fn, args, kwargs)
        except BaseException:
            self._pending -= 1
            raise
        # the slot stays taken until the worker is done, even when the answer did not wait
        future.add_done_callback(self._release)
        try:
            return await asyncio.wait_for(asyncio.shield(future), self.budget)
        except TimeoutError:
            raise BusyError(
                f"the request needed more than {self.budget:g} s of processing; retry later or "
                "send a smaller body"
            ) from None
        except BrokenProcessPool:
            self._executor = None  # a worker died (e.g. out of memory): start afresh next time
            raise BusyError("a worker process failed; retry later") from None

    def _release(self, _future: Any) -> None:
        self._pending -= 1


def _call(fn: Callable[..., T], args: tuple[Any, ...], kwargs: dict[str, Any]) -> T:
    return fn(*args, **kwargs)
