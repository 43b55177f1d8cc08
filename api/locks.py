"""Writes to a subject are serialized: the check and the write of ``PUT /contracts/{name}`` run
under one lock per subject, so that two contracts can never both take a subject and exactly
one of several identical writes creates the version.

Within a process an ``asyncio.Lock`` per key serializes requests; across the worker processes
of ``cdc-contracts serve --workers N`` an exclusive ``flock`` on one file per key in a shared
directory does (the embedded registry's directory, or one per external registry URL). Services
on other hosts writing to the same external registry are not serialized with these.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import os
from collections.abc import AsyncIterator, Iterable
from pathlib import Path

from api.offload import BusyError


class SubjectLocks:
    """Named locks (subjects, contract names), held together in a fixed order."""

    def __init__(self, directory: Path | None, timeout: float = 30.0) -> None:
        self.directory = directory
        self.timeout = timeout
        self._local: dict[str, asyncio.Lock] = {}

    @contextlib.asynccontextmanager
    async def hold(self, keys: Iterable[str]) -> AsyncIterator[None]:
        """Hold every lock of ``keys`` (sorted, so two holders never wait on each other);
        :class:`~api.offload.BusyError` when they cannot be had within the timeout."""
        ordered = sorted(set(keys))
        async with contextlib.AsyncExitStack() as stack:
            try:
                async with asyncio.timeout(self.timeout):
                    for key in ordered:
                        await stack.enter_async_context(self._local.setdefault(key, asyncio.Lock()))
                    if self.directory is not None:
                        for key in ordered:
                            fd = await _flock(self.directory, key)
                            stack.callback(_unlock, fd)
            except TimeoutError:
                raise BusyError(
                    "another write to the same subjects is taking too long; retry later"
                ) from None
            yield


def lock_directory(base: Path) -> Path:
    """The lock files' directory under ``base`` (made when missing)."""
    directory = base / "locks"
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def lock_directory_for(url: str) -> Path:
    """A lock directory shared by the processes of this host writing to registry ``url``."""
    import tempfile

    digest = hashlib.blake2b(url.encode(), digest_size=8).hexdigest()
    return lock_directory(Path(tempfile.gettempdir()) / f"cdc-contracts-{os.getuid()}-{digest}")


async def _flock(directory: Path, key: str) -> int:
    """An exclusive ``flock`` on the key's file, polled without blocking the loop (a
    cancelled wait leaves nothing held)."""
    name = hashlib.blake2b(key.encode(), digest_size=12).hexdigest()
    fd = os.open(directory / f"{name}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                await asyncio.sleep(0.005)
    except BaseException:
        os.close(fd)
        raise


def _unlock(fd: int) -> None:
    with contextlib.suppress(OSError):
        fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)
