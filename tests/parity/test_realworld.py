"""The Python ``normalize`` and Spark's ``decode_changes`` agree on real published messages.

``../shared/realworld/real_world`` holds messages other projects publish in their tests and docs
(Flink's, Paimon's, RisingWave's, TiCDC's test data, the Debezium docs, Kafka's
JsonConverterTest, Conduit's docs; README.md there names each source). Every file a registered
format detects is inferred a contract (``infer_types``), then decoded by both paths: the events
(and the messages refused) must be the same. The corpus is read from the shared folder only: the
test skips, saying so, where it is absent.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from derive.helpers import REALWORLD

from contracts.errors import ContractsError
from contracts.formats import detect_format, get_format
from contracts.formats.base import InferOptions
from contracts.io import read_messages, sniff_kind

from .differential import differences, python_outcomes, spark_outcomes
from .messages import Message

pytestmark = pytest.mark.spark

CORPUS = REALWORLD / "real_world"
#: Files the run must compare at least (a detection regression must not empty the test).
MIN_COMPARED = 29


def _files() -> list[Path]:
    return sorted(p for p in CORPUS.rglob("*") if p.is_file()) if CORPUS.is_dir() else []


def _read(path: Path) -> tuple[str, list[Any]] | None:
    """(format, messages) of a file a registered format detects; None for any other."""
    try:
        kind = sniff_kind(path)
        raw = list(read_messages([path], kind))
        fmt = detect_format(iter(raw), kind)
        return fmt.name, list(fmt.assemble(iter(raw)))
    except ContractsError:
        return None


def _kafka(message: Any) -> Message:
    """The Kafka record a message came as (its JSON text, as a producer writes it)."""
    if isinstance(message.value, list):  # a CSV row
        out = io.StringIO()
        csv.writer(out, lineterminator="").writerow(message.value)
        value: bytes | None = out.getvalue().encode()
    else:
        value = None if message.value is None else json.dumps(message.value).encode()
    key = json.dumps(message.key).encode() if message.has_key and message.key is not None else None
    return Message(value=value, key=key, note=message.where)


@pytest.mark.skipif(
    not CORPUS.is_dir(), reason=f"the shared real-world corpus is absent ({CORPUS})"
)
def test_both_paths_agree_on_every_real_world_file(spark: Any) -> None:
    compared, disagree, passed_over = [], [], []
    for path in _files():
        found = _read(path)
        if found is None:
            passed_over.append(f"{path.relative_to(CORPUS)}: no registered format detects it")
            continue
        name, messages = found
        try:
            contract = (
                get_format(name).infer(iter(messages), InferOptions(infer_types=True)).contract
            )
        except ContractsError as err:
            passed_over.append(f"{path.relative_to(CORPUS)}: {name} infers no contract ({err})")
            continue
        records = [_kafka(m) for m in messages]
        python = python_outcomes(contract, records)
        spark_side = spark_outcomes(spark, contract, records)
        compared.append(path)
        diff = differences(contract, records, python, spark_side)
        if diff:
            disagree.append(f"{path.relative_to(CORPUS)} ({name}):\n" + "\n".join(diff[:3]))
    print(f"compared {len(compared)} real-world files; not compared:\n" + "\n".join(passed_over))
    # 29 on 2026-11-27 (the others: pretty-printed doc blocks and formats not registered yet)
    assert len(compared) >= MIN_COMPARED, f"only {len(compared)} files were compared"
    assert not disagree, f"{len(disagree)} of {len(compared)} files differ:\n" + "\n".join(disagree)
