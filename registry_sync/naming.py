"""Subject naming strategies, as Confluent's serializers name subjects.

========================  ==============================  ===========================
strategy                  key subject                     value subject
========================  ==============================  ===========================
TopicNameStrategy         ``<topic>-key``                 ``<topic>-value``
RecordNameStrategy        ``<record full name>``          ``<record full name>``
TopicRecordNameStrategy   ``<topic>-<record full name>``  ``<topic>-<record full name>``
========================  ==============================  ===========================
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Final

from contracts.errors import ContractsError


class NamingError(ContractsError):
    """A subject name cannot be formed (unknown strategy, missing record name)."""


class SubjectNameStrategy(enum.StrEnum):
    TOPIC = "TopicNameStrategy"
    RECORD = "RecordNameStrategy"
    TOPIC_RECORD = "TopicRecordNameStrategy"


#: spellings accepted on the command line
STRATEGY_NAMES: Final[dict[str, SubjectNameStrategy]] = {
    "topic": SubjectNameStrategy.TOPIC,
    "topicnamestrategy": SubjectNameStrategy.TOPIC,
    "record": SubjectNameStrategy.RECORD,
    "recordnamestrategy": SubjectNameStrategy.RECORD,
    "topic-record": SubjectNameStrategy.TOPIC_RECORD,
    "topic_record": SubjectNameStrategy.TOPIC_RECORD,
    "topicrecordnamestrategy": SubjectNameStrategy.TOPIC_RECORD,
}

PARTS: Final = ("key", "value")


def parse_strategy(name: str | SubjectNameStrategy) -> SubjectNameStrategy:
    """A strategy from its class name or short name (``topic``, ``record``, ``topic-record``)."""
    if isinstance(name, SubjectNameStrategy):
        return name
    found = STRATEGY_NAMES.get(name.strip().lower().split(".")[-1])
    if found is None:
        raise NamingError(
            f"unknown subject naming strategy {name!r} (use topic, record or topic-record)"
        )
    return found


def _topic(topic: str, part: str, _record: str | None) -> str:
    return f"{topic}-{part}"


def _record(topic: str, part: str, record: str | None) -> str:
    if not record:
        raise NamingError(f"RecordNameStrategy needs the {part} schema's record name")
    return record


def _topic_record(topic: str, part: str, record: str | None) -> str:
    return f"{topic}-{_record(topic, part, record)}"


_NAMERS: Final[dict[SubjectNameStrategy, Callable[[str, str, str | None], str]]] = {
    SubjectNameStrategy.TOPIC: _topic,
    SubjectNameStrategy.RECORD: _record,
    SubjectNameStrategy.TOPIC_RECORD: _topic_record,
}


def subject_for(
    topic: str,
    part: str,
    strategy: SubjectNameStrategy | str = SubjectNameStrategy.TOPIC,
    record_name: str | None = None,
) -> str:
    """The subject of a topic's ``key`` or ``value`` schema under a naming strategy."""
    if part not in PARTS:
        raise NamingError(f"part must be 'key' or 'value', not {part!r}")
    return _NAMERS[parse_strategy(strategy)](topic, part, record_name)
