"""One error hierarchy for the whole project.

Every error says *where* (a file and line, a message index, a JSON path) and *what* went wrong,
and renders as a single line. The CLI maps these to exit codes and the API to HTTP problems,
each in one place.
"""

from __future__ import annotations

import re
from typing import Any, Final


class ContractsError(Exception):
    """Base of every error cdc-contracts raises on purpose.

    ``where`` locates the problem (``file.json:12``, ``$.fields[3].type``, ``message 7``);
    ``what`` says what is wrong, in one sentence.
    """

    exit_code: int = 2
    http_status: int = 422

    def __init__(self, what: str, where: str | None = None) -> None:
        self.what = what
        self.where = where
        super().__init__(self.one_line())

    def one_line(self) -> str:
        """The error as one line: ``where: what``."""
        text = " ".join(self.what.split())
        return f"{self.where}: {text}" if self.where else text

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle with ``what``, ``where`` and extra attributes (errors cross process pools)."""
        return (_rebuild, (type(self), self.what, self.where, dict(vars(self))))

    def located(self, prefix: str) -> ContractsError:
        """A copy of this error whose location is prefixed (e.g. with ``file:line``)."""
        where = f"{prefix} {self.where}" if self.where else prefix
        clone = type(self).__new__(type(self))
        ContractsError.__init__(clone, self.what, where)
        for key, value in vars(self).items():
            if key not in {"what", "where"}:
                setattr(clone, key, value)
        return clone


def _rebuild(
    cls: type[ContractsError], what: str, where: str | None, state: dict[str, Any]
) -> ContractsError:
    err = cls.__new__(cls)
    ContractsError.__init__(err, what, where)
    vars(err).update(state)
    return err


class SchemaError(ContractsError):
    """A schema (Connect, Avro or Spark) is malformed or cannot be translated."""


class InputError(ContractsError):
    """An input file or message is unusable (malformed JSON, wrong format, bad encoding)."""


class ContractFileError(ContractsError):
    """A contract file does not follow the contract file format."""


class ConfigError(ContractsError):
    """The project configuration (``cdc-contracts.yaml``) is unusable: a bad key or value, a
    secret written in it, a variable it names that is not set."""


class UnknownFormatError(ContractsError):
    """A format name is not registered."""

    http_status = 404


class DetectionError(InputError):
    """Auto-detection found no format, or more than one, for the input."""


class DecodeError(InputError):
    """A value does not decode as its declared type."""


class NotFoundError(ContractsError):
    """A named contract, subject, schema or version does not exist."""

    http_status = 404


class ConflictError(ContractsError):
    """A change was refused because it is incompatible or conflicts with existing state."""

    exit_code = 1
    http_status = 409


_OBJECT_REPR: Final = re.compile(r"<([\w.]+) object at 0x[0-9a-fA-F]+>")


def reason_of(err: BaseException, limit: int = 100) -> str:
    """A library exception as a short, deterministic reason for an error message: its type and
    first line, without object addresses (``cannot read float from <_io.BytesIO>``)."""
    text = str(err).splitlines()[0] if str(err) else ""
    text = _OBJECT_REPR.sub(r"<\1>", text)[:limit]
    return f"{type(err).__name__}: {text}" if text else type(err).__name__
