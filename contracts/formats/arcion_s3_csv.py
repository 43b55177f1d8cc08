"""``arcion-s3-csv``: Arcion Replicant's internal CDC format for Amazon S3, CSV files.

For a table of X columns:

- snapshot rows have X cells, one per column (normalized as op ``r``);
- full/realtime rows have 3X+3 cells: X triplets ``NEW_VAL, OLD_VAL, EXISTS_VAL`` (EXISTS_VAL
  0 neither, 1 new, 2 old, 3 both), then ``opType`` (I/U/D), ``cursor`` (JSON) and
  ``operationcount`` (JSON).

``NULL`` is SQL NULL. With ``include-header`` the file starts with a row of column names. A CSV
row says nothing about column names, so the contract records them in file order
(``options.column_order``) together with ``mode`` (snapshot / realtime) and ``header``. Without
a header, infer names columns ``col_1``..``col_X``; rename them in the contract (Arcion's
realtime examples order the triplets by column name, not table order).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Final

from contracts.contract import Contract
from contracts.errors import InputError
from contracts.events import ChangeEvent, ControlRecord, Normalized, Op, TableId
from contracts.formats._typing import (
    RowCodec,
    RowTypes,
    build_contract,
    decode_located,
    key_from,
    parse_json_text,
    path_of,
)
from contracts.formats.arcion_s3_json import SPEC as JSON_SPEC
from contracts.formats.base import Derived, Format, Inference, InferOptions, Message, Violation
from contracts.formats.spec import FormatSpec, Table, read_position, read_time
from contracts.schema import primitive, struct

#: Arcion S3 JSON's facts, read from CSV cells (``spark_bindings/formats/arcion_s3_csv.py``
#: reshapes a row into that document): ``NULL`` is SQL NULL, the table is the contract's.
SPEC: Final = replace(
    JSON_SPEC,
    # every CSV cell is text: no JSON kinds to refuse
    images=replace(JSON_SPEC.images, null_text="NULL", cell_refuses=frozenset()),
    table=Table(fallback=True),
)
NULL_LITERAL: Final = SPEC.images.null_text
EXISTS_FLAGS: Final = JSON_SPEC.images.exists.flags if JSON_SPEC.images.exists else {}
METADATA_COLUMNS: Final = ("opType", "cursor", "operationcount")
TRIPLET_SUFFIXES: Final = ("NEW_VAL", "OLD_VAL", "EXISTS_VAL")
_IDENTIFIER: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_$#]*")
_NEW_SUFFIX: Final = re.compile(r"[_.\s-]*(NEW_VAL|NEW)$", re.I)


@dataclass(frozen=True, slots=True)
class CsvRow:
    """One data row: op, images (absent columns left out), cursor."""

    op: Op
    before: dict[str, str | None] | None
    after: dict[str, str | None] | None
    cursor: dict[str, Any]


def is_realtime_shape(cells: list[str]) -> bool:
    """3X+3 cells ending in an opType and a JSON cursor."""
    n = len(cells)
    return (
        n >= 6
        and (n - 3) % 3 == 0
        and cells[-3] in SPEC.ops.codes
        and cells[-2].lstrip()[:1] == "{"
    )


def realtime_header_names(cells: list[str]) -> list[str] | None:
    """Column names from a realtime header (… opType, cursor, operationcount), else None."""
    n = len(cells)
    if (
        n < 6
        or (n - 3) % 3
        or [c.strip().lower() for c in cells[-3:]] != [m.lower() for m in METADATA_COLUMNS]
    ):
        return None
    return [_NEW_SUFFIX.sub("", cells[i].strip()) or cells[i].strip() for i in range(0, n - 3, 3)]


def _cell(text: str) -> str | None:
    return None if text == NULL_LITERAL else text


def _first_line(message: Message) -> bool:
    return message.where.endswith(":1")


def parse_row(cells: list[str], names: list[str], where: str) -> CsvRow:
    """One data row (snapshot or realtime by its width) → op and images."""
    x = len(names)
    if len(cells) == x:
        return CsvRow("r", None, {n: _cell(c) for n, c in zip(names, cells, strict=True)}, {})
    if len(cells) != 3 * x + 3:
        raise InputError(
            f"row has {len(cells)} cells; expected {x} (snapshot) or {3 * x + 3} (realtime)",
            f"{where} $[{len(cells) - 1}]",
        )
    op, _ = SPEC.ops.read(cells[-3])
    if op is None:
        raise InputError(SPEC.unknown_op(cells[-3]), f"{where} $[{3 * x}]")
    cursor = parse_json_text(cells[-2], where, f"$[{3 * x + 1}]", "cursor")
    before: dict[str, str | None] = {}
    after: dict[str, str | None] = {}
    for i, name in enumerate(names):
        new, old, exists = cells[3 * i : 3 * i + 3]
        flag = EXISTS_FLAGS.get(exists.strip())
        if flag is None:
            raise InputError(
                f"EXISTS_VAL of {name} must be 0, 1, 2 or 3, got {exists!r}",
                f"{where} $[{3 * i + 2}]",
            )
        if flag[0]:
            before[name] = _cell(old)
        if flag[1]:
            after[name] = _cell(new)
    before_rule, after_rule = SPEC.images.rules(op)
    return CsvRow(op, before if before_rule else None, after if after_rule else None, cursor)


class ArcionS3Csv(Format):
    """Arcion Replicant's internal CDC format for S3, CSV flavour."""

    name: ClassVar[str] = "arcion-s3-csv"
    description: ClassVar[str] = (
        "Arcion Replicant S3 CSV: snapshot rows, or NEW/OLD/EXISTS triplets + opType, cursor"
    )
    embedded_schema: ClassVar = "no"
    input_kind: ClassVar = "csv"
    spec: ClassVar[FormatSpec] = SPEC

    def detect(self, message: Message) -> bool:
        cells = message.value
        if not isinstance(cells, list) or not all(isinstance(c, str) for c in cells):
            return False
        return is_realtime_shape(cells) or realtime_header_names(cells) is not None

    def infer(self, messages: Iterable[Message], options: InferOptions) -> Inference:
        types = RowTypes()
        names: list[str] | None = None
        modes: set[str] = set()
        header = False
        count = 0
        for message, is_header in _with_headers(messages):
            cells = _cells(message)
            count += 1
            if is_header:
                found = realtime_header_names(cells) or [c.strip() for c in cells]
                if names is not None and found != names:
                    raise InputError(f"header {found} differs from {names}", message.where)
                names, header = found, True
                continue
            if names is None:
                x = (len(cells) - 3) // 3 if is_realtime_shape(cells) else len(cells)
                names = [f"col_{i + 1}" for i in range(x)]
            row = parse_row(cells, names, message.where)
            modes.add("snapshot" if row.op == "r" else "realtime")
            for image in (row.before, row.after):
                if image:
                    types.observe_row(image)
        if names is None:
            raise InputError("no rows in the sample: nothing to infer columns from")
        types.declare(names)
        contract = build_contract(
            fmt=self.name,
            options=options,
            table=None,
            fields=types.fields(options.infer_types, order=names),
            format_options={
                "mode": "/".join(sorted(modes)) or "snapshot",
                "header": header,
                "column_order": names,
            },
        )
        return Inference(contract=contract, messages=count)

    def derive(self, contract: Contract) -> Derived:
        names = column_names(contract)
        if "realtime" not in str(contract.option("mode", "snapshot")):
            cells = [primitive("string", optional=True, field=n) for n in names]
        else:
            cells = [
                primitive("string", optional=suffix != "EXISTS_VAL", field=f"{n}_{suffix}")
                for n in names
                for suffix in TRIPLET_SUFFIXES
            ]
            cells += [primitive("string", field=m) for m in METADATA_COLUMNS]
        return Derived(key=None, value=struct(cells))

    def validate(self, message: Message, contract: Contract) -> list[Violation]:
        where = message.where
        cells = _cells(message)
        names = column_names(contract)
        if _is_header(message, cells, contract):
            got = realtime_header_names(cells) or [c.strip() for c in cells]
            if got != names:
                return [Violation(where, "$", "schema-drift", f"header {got} is not {names}")]
            return []
        try:
            row = parse_row(cells, names, where)
        except InputError as err:
            return [Violation(where, path_of(err), "envelope", err.what)]
        found: list[Violation] = []
        mismatch = _mode_mismatch(row, contract)
        if mismatch:
            found.append(Violation(where, "$", "envelope", mismatch))
        codec = RowCodec.of(contract)
        index = {n: i for i, n in enumerate(names)}
        for image, offset in ((row.before, 1), (row.after, 0)):
            for v in codec.check(image, "$", where, full=False):
                col = v.path[2:]
                at = index[col] if row.op == "r" else 3 * index[col] + offset
                found.append(Violation(where, f"$[{at}]", v.kind, f"{col}: {v.message}"))
        return found

    def normalize(self, message: Message, contract: Contract | None = None) -> list[Normalized]:
        cells = _cells(message)
        if _is_header(message, cells, contract):
            return [ControlRecord("other", "CSV header row")]
        if contract is not None:
            names = column_names(contract)
        else:
            x = (len(cells) - 3) // 3 if is_realtime_shape(cells) else len(cells)
            names = [f"col_{i + 1}" for i in range(x)]
        row = parse_row(cells, names, message.where)
        mismatch = _mode_mismatch(row, contract) if contract is not None else None
        if mismatch:
            raise InputError(mismatch, f"{message.where} $")
        codec = RowCodec.of(contract) if contract is not None else None
        before = decode_located(codec, row.before, "$", message.where)
        after = decode_located(codec, row.after, "$", message.where)
        return [
            ChangeEvent(
                op=row.op,
                table=contract.table_id if contract is not None else TableId(),
                key=key_from(contract.key if contract else (), after, before),
                before=before,
                after=after,
                ts_ms=read_time(SPEC.ts_ms, {"cursor": row.cursor}, message.where),
                source_ts_ms=read_time(SPEC.source_ts_ms, {"cursor": row.cursor}, message.where),
                position=read_position(SPEC.position, {}, block=row.cursor),
            )
        ]


def _mode_mismatch(row: CsvRow, contract: Contract) -> str | None:
    """Why ``row`` does not fit the contract's ``mode`` (snapshot, realtime or both), or None:
    validate reports it, normalize refuses the row."""
    mode = str(contract.option("mode", "snapshot"))
    shape = "snapshot" if row.op == "r" else "realtime"
    return None if shape in mode else f"a {shape} row in a {mode} contract"


def _cells(message: Message) -> list[str]:
    value = message.value
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        raise InputError("expected a CSV row (a list of cells)", message.where)
    return value


def column_names(contract: Contract) -> list[str]:
    order = contract.option("column_order")
    if isinstance(order, list) and order:
        return [str(n) for n in order]
    return contract.row_schema.field_names()


def _is_header(message: Message, cells: list[str], contract: Contract | None) -> bool:
    if realtime_header_names(cells) is not None:
        return True
    if contract is None or not _first_line(message) or not contract.option("header", False):
        return False
    return [c.strip() for c in cells] == column_names(contract)


def _with_headers(messages: Iterable[Message]) -> Iterator[tuple[Message, bool]]:
    """Pair each row with whether it is a header.

    A realtime header is recognized by its last three names. A snapshot header cannot be told
    from data by itself: the first row of a file is one when all its cells are identifiers and
    the next row of the same file has, in some column, a cell that is not.
    """
    pending: Message | None = None
    for message in messages:
        cells = _cells(message)
        if pending is not None:
            yield pending, _looks_like_header_of(_cells(pending), cells)
            pending = None
        if realtime_header_names(cells) is not None:
            yield message, True
        elif _first_line(message) and not is_realtime_shape(cells) and _all_identifiers(cells):
            pending = message
        else:
            yield message, False
    if pending is not None:
        yield pending, False


def _all_identifiers(cells: list[str]) -> bool:
    return bool(cells) and all(_IDENTIFIER.fullmatch(c.strip()) for c in cells)


def _looks_like_header_of(first: list[str], second: list[str]) -> bool:
    if len(first) != len(second) and len(second) != 3 * len(first) + 3:
        return False
    if len(second) == len(first):
        return any(not _IDENTIFIER.fullmatch(c.strip()) for c in second)
    return True
