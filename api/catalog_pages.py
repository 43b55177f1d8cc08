"""What the catalog pages show, built from contracts: no HTTP and no registry in here.

The served catalog (:mod:`api.routers.catalog`) and the static export (:mod:`api.catalog_site`)
gather the versions of each contract their own way (the registry; git history) into
:class:`ContractView` objects, then render the same templates from the contexts built here. Every
type shown is the project's own translation (:func:`contracts.render.render_contract`), never a
second mapping, and every verdict is the diff engine's.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from contracts.contract import Contract
from contracts.errors import ContractsError

#: names of a contract rendering on the page, in the order shown: (id, title, target, part)
RENDERINGS: Final = (
    ("spark-ddl", "Spark DDL (row)", "spark-ddl", "row"),
    ("pyspark", "PySpark StructType (row)", "pyspark", "row"),
    ("avro-value", "Avro value schema (as registered)", "avro", "value"),
    ("avro-key", "Avro key schema", "avro", "key"),
    ("connect-value", "Connect JSON (value)", "connect", "value"),
)
#: the envelope fields that hold the row (shown in the column table, not among the envelope's)
ROW_IMAGES: Final = frozenset({"before", "after"})
#: versions shown in a contract's timeline (the newest)
TIMELINE_LIMIT: Final = 50


@dataclass(frozen=True)
class VersionView:
    """One version of a contract, wherever it was found."""

    number: int
    contract: Contract | None
    subjects: Mapping[str, str] = field(default_factory=dict)  # part -> subject
    ids: Mapping[str, int] = field(default_factory=dict)  # part -> schema id
    date: str | None = None  # ISO-8601, when the source keeps one
    label: str | None = None  # e.g. a commit's short hash
    problem: str | None = None  # why the contract could not be read


@dataclass(frozen=True)
class ContractView:
    """A contract and its versions, oldest first (the last is the latest)."""

    name: str
    source: str  # registry | directory | git
    versions: tuple[VersionView, ...]
    path: str | None = None

    @property
    def latest(self) -> VersionView:
        return self.versions[-1]

    def version(self, number: int) -> VersionView | None:
        return next((v for v in self.versions if v.number == number), None)


# --- types as text ---------------------------------------------------------------------------


def semantic_name(column: Mapping[str, Any]) -> str:
    """A column's logical type in short: ``Decimal(10,2)``, ``MicroTimestamp``, or ``""``."""
    name = column.get("name")
    if not isinstance(name, str) or column.get("type") == "struct":
        return ""
    short = name.rsplit(".", 1)[-1]
    params = column.get("parameters") or {}
    if short == "Decimal" and isinstance(params, Mapping):
        precision = params.get("connect.decimal.precision")
        scale = params.get("scale")
        if scale is not None:
            return f"Decimal({precision},{scale})" if precision else f"Decimal(scale {scale})"
    return short


def connect_text(column: Mapping[str, Any]) -> str:
    """A Connect schema's type in short: ``int64``, ``array<string>``, ``struct (3 fields)``."""
    kind = str(column.get("type", "?"))
    if kind == "array" and isinstance(column.get("items"), Mapping):
        return f"array<{connect_text(column['items'])}>"
    if kind == "map" and isinstance(column.get("keys"), Mapping):
        return f"map<{connect_text(column['keys'])}, {connect_text(column.get('values') or {})}>"
    if kind == "struct":
        return f"struct ({len(column.get('fields') or ())} fields)"
    return kind


def avro_text(node: Any) -> str:
    """An Avro type in short: ``bytes · decimal(10,2)``, ``long · timestamp-micros``;
    a nullable union shows its other branch (nullability has its own column)."""
    if isinstance(node, list):
        branches = [b for b in node if b != "null"]
        return " | ".join(avro_text(b) for b in branches) or "null"
    if isinstance(node, str):
        return node
    if not isinstance(node, Mapping):
        return "?"
    kind = node.get("type")
    logical = node.get("logicalType")
    if logical == "decimal":
        return f"{kind} · decimal({node.get('precision')},{node.get('scale', 0)})"
    if logical:
        return f"{avro_text(kind)} · {logical}"
    if kind == "array":
        return f"array<{avro_text(node.get('items'))}>"
    if kind == "map":
        return f"map<{avro_text(node.get('values'))}>"
    if kind in ("record", "enum", "fixed"):
        return f"{kind} {node.get('name', '')}".strip()
    return avro_text(kind)


def spark_text(node: Any) -> str:
    """A Spark type from its JSON in short: ``decimal(10,2)``, ``array<string>``, ``struct<…>``."""
    if isinstance(node, str):
        return node
    if not isinstance(node, Mapping):
        return "?"
    kind = node.get("type")
    if kind == "array":
        return f"array<{spark_text(node.get('elementType'))}>"
    if kind == "map":
        return f"map<{spark_text(node.get('keyType'))}, {spark_text(node.get('valueType'))}>"
    if kind == "struct":
        return f"struct ({len(node.get('fields') or ())} fields)"
    return str(kind)


def value_text(value: Any) -> str:
    """A default value as the contract writes it (JSON), or ``""`` when there is none."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


# --- the column table ------------------------------------------------------------------------


@dataclass(frozen=True)
class ColumnRow:
    """One line of a contract's column table (nested struct fields get dotted names)."""

    name: str
    depth: int
    connect: str
    semantic: str
    avro: str
    spark: str
    nullable: bool
    key: bool
    default: str
    doc: str

    def cells(self) -> dict[str, str]:
        """The attributes a diff compares, by label."""
        return {
            "Connect": " · ".join(x for x in (self.connect, self.semantic) if x),
            "Avro": self.avro,
            "Spark": self.spark,
            "nullable": "yes" if self.nullable else "no",
            "key": "yes" if self.key else "",
            "default": self.default,
            "doc": self.doc,
        }


def _json_rendering(contract: Contract, target: str, part: str) -> Any:
    from contracts.render import render_contract

    return json.loads(render_contract(contract, target, part))  # type: ignore[arg-type]


def _fields_by_name(node: Any, key: str = "fields") -> dict[str, Any]:
    fields = node.get(key) if isinstance(node, Mapping) else None
    return {f["name"]: f for f in fields or () if isinstance(f, Mapping) and "name" in f}


def column_rows(contract: Contract) -> list[ColumnRow]:
    """The contract's columns with their Connect, Avro and Spark types (nested fields after
    their struct, one level deep)."""
    avro = _fields_by_name(_json_rendering(contract, "avro", "row"))
    spark = _fields_by_name(_json_rendering(contract, "spark-json", "row"))
    keys = set(contract.key)
    rows: list[ColumnRow] = []
    for column in contract.columns:
        name = str(column.get("field"))
        a, s = avro.get(name, {}), spark.get(name, {})
        rows.append(_row(name, 0, column, a.get("type"), s, name in keys))
        if column.get("type") == "struct":
            inner_avro = _fields_by_name(_unwrap(a.get("type")))
            inner_spark = _fields_by_name(s.get("type"))
            for inner in column.get("fields") or ():
                child = str(inner.get("field"))
                rows.append(
                    _row(
                        f"{name}.{child}",
                        1,
                        inner,
                        inner_avro.get(child, {}).get("type"),
                        inner_spark.get(child, {}),
                        False,
                    )
                )
    return rows


def _unwrap(avro_type: Any) -> Any:
    if isinstance(avro_type, list):
        return next((b for b in avro_type if b != "null"), None)
    return avro_type


def _row(
    name: str, depth: int, column: Mapping[str, Any], avro: Any, spark: Any, key: bool
) -> ColumnRow:
    return ColumnRow(
        name=name,
        depth=depth,
        connect=connect_text(column),
        semantic=semantic_name(column),
        avro=avro_text(avro) if avro is not None else "",
        spark=spark_text(spark.get("type")) if isinstance(spark, Mapping) and spark else "",
        nullable=bool(column.get("optional", False)),
        key=key,
        default=value_text(column.get("default")),
        doc=str(column.get("doc") or ""),
    )


@dataclass(frozen=True)
class EnvelopeField:
    """A field of the value schema around the row (``op``, ``ts_ms``, ``source``...)."""

    name: str
    connect: str
    semantic: str
    nullable: bool
    fields: tuple[EnvelopeField, ...] = ()


def envelope_fields(contract: Contract) -> tuple[list[EnvelopeField], str | None]:
    """The value schema's fields other than the row images, or why there are none to show."""
    try:
        value = _json_rendering(contract, "connect", "value")
    except ContractsError as err:
        return [], err.what
    found = []
    for f in value.get("fields") or ():
        if f.get("field") in ROW_IMAGES:
            continue
        inner = tuple(
            EnvelopeField(
                str(g.get("field")), connect_text(g), semantic_name(g), bool(g.get("optional"))
            )
            for g in f.get("fields") or ()
        )
        found.append(
            EnvelopeField(
                str(f.get("field")),
                connect_text(f),
                semantic_name(f),
                bool(f.get("optional")),
                inner,
            )
        )
    return found, None


# --- renderings ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rendering:
    id: str
    title: str
    text: str
    error: str | None = None


def renderings(contract: Contract) -> list[Rendering]:
    """Every rendering the page offers; a part the format cannot give says why instead."""
    from contracts.render import render_contract
    from contracts.translate.ddl import pyspark_code

    found: list[Rendering] = []
    for ident, title, target, part in RENDERINGS:
        try:
            if target == "pyspark":
                text = pyspark_code(_json_rendering(contract, "spark-json", part))
            else:
                text = render_contract(contract, target, part)  # type: ignore[arg-type]
        except ContractsError as err:
            found.append(Rendering(ident, title, "", err.what))
            continue
        found.append(Rendering(ident, title, text.rstrip("\n")))
    return found


# --- comparing versions ----------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One version in the timeline, with what changed since the one before it."""

    version: VersionView
    previous: int | None
    result: Any = None  # contracts.diff.DiffResult
    error: str | None = None

    @property
    def findings(self) -> list[Any]:
        return list(self.result.findings) if self.result is not None else []


def compare(old: Contract, new: Contract) -> Any:
    """The diff engine's result for ``old`` -> ``new`` at the new contract's level."""
    from contracts.diff import diff_contracts

    return diff_contracts(old, new, new.compatibility)


def timeline(view: ContractView) -> list[Step]:
    """The newest versions first, each compared with the version before it."""
    shown = view.versions[-TIMELINE_LIMIT:]
    steps: list[Step] = []
    before: VersionView | None = None
    start = len(view.versions) - len(shown)
    if start:
        before = view.versions[start - 1]
    for version in shown:
        if before is None:
            steps.append(Step(version, None))
        elif version.contract is None or before.contract is None:
            steps.append(Step(version, before.number, error="a version could not be read"))
        else:
            try:
                steps.append(
                    Step(version, before.number, compare(before.contract, version.contract))
                )
            except ContractsError as err:
                steps.append(Step(version, before.number, error=err.what))
        before = version
    return list(reversed(steps))


@dataclass(frozen=True)
class ColumnChange:
    """A column in the diff: its cells on each side and which differ."""

    name: str
    change: str  # added | removed | changed
    old: Mapping[str, str]
    new: Mapping[str, str]
    severity: str | None  # of the worst finding about it

    @property
    def differing(self) -> set[str]:
        return {k for k in {*self.old, *self.new} if self.old.get(k) != self.new.get(k)}


@dataclass(frozen=True)
class ContractChange:
    """A contract-level attribute that changed (key, level, format, topic, table...)."""

    label: str
    old: str
    new: str


def column_changes(
    old: Contract, new: Contract, findings: Iterable[Any]
) -> tuple[list[ColumnChange], list[ColumnRow]]:
    """The columns that differ (in the new contract's order, removed ones last) and the
    unchanged ones."""
    severity = _worst_by_column(findings)
    before = {r.name: r for r in column_rows(old)}
    after = {r.name: r for r in column_rows(new)}
    changes: list[ColumnChange] = []
    same: list[ColumnRow] = []
    for name, row in after.items():
        was = before.get(name)
        if was is None:
            changes.append(ColumnChange(name, "added", {}, row.cells(), severity.get(name)))
        elif was.cells() != row.cells():
            changes.append(
                ColumnChange(name, "changed", was.cells(), row.cells(), severity.get(name))
            )
        else:
            same.append(row)
    for name, row in before.items():
        if name not in after:
            changes.append(ColumnChange(name, "removed", row.cells(), {}, severity.get(name)))
    return changes, same


def _worst_by_column(findings: Iterable[Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for f in sorted(findings, key=lambda f: -f.severity.rank):
        if f.column:
            out[f.column] = f.severity.value
    return out


def contract_changes(old: Contract, new: Contract) -> list[ContractChange]:
    """What changed outside the columns."""
    pairs: list[tuple[str, Any, Any]] = [
        ("format", old.format, new.format),
        ("topic", old.topic, new.topic),
        ("table", old.table_id.qualified(), new.table_id.qualified()),
        ("key", ", ".join(old.key), ", ".join(new.key)),
        ("compatibility", old.compatibility.value, new.compatibility.value),
        ("owner", old.owner, new.owner),
        ("description", old.description, new.description),
    ]
    for option in sorted({*old.options, *new.options}):
        pairs.append((f"options.{option}", old.options.get(option), new.options.get(option)))
    return [ContractChange(label, _short(a), _short(b)) for label, a, b in pairs if a != b]


def _short(value: Any, limit: int = 160) -> str:
    text = "" if value is None else value_text(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- page contexts ---------------------------------------------------------------------------


@dataclass(frozen=True)
class IndexRow:
    name: str
    description: str
    format: str
    topic: str
    owner: str
    key: str
    columns: int | None
    versions: int
    latest: int
    changed: str  # ISO date or ""
    source: str
    problem: str | None


def index_rows(views: Sequence[ContractView]) -> list[IndexRow]:
    rows = []
    for view in views:
        latest = view.latest
        c = latest.contract
        rows.append(
            IndexRow(
                name=view.name,
                description=(c.description or "") if c else "",
                format=c.format if c else "",
                topic=(c.topic or "") if c else "",
                owner=(c.owner or "") if c else "",
                key=", ".join(c.key) if c else "",
                columns=len(c.columns) if c else None,
                versions=len(view.versions),
                latest=latest.number,
                changed=latest.date or "",
                source=view.source,
                problem=latest.problem,
            )
        )
    return rows


def index_context(views: Sequence[ContractView], problems: Sequence[str], q: str) -> dict[str, Any]:
    rows = sorted(index_rows(views), key=lambda r: (r.name.lower(), r.name))
    return {
        "rows": rows,
        "q": q,
        "problems": list(problems),
        "formats": sorted({r.format for r in rows if r.format}),
        "owners": sorted({r.owner for r in rows if r.owner}),
    }


def contract_context(view: ContractView, version: VersionView) -> dict[str, Any]:
    """Everything the contract page shows for one version."""
    contract = version.contract
    assert contract is not None
    envelope, envelope_note = envelope_fields(contract)
    return {
        "view": view,
        "version": version,
        "contract": contract,
        "columns": column_rows(contract),
        "envelope": envelope,
        "envelope_note": envelope_note,
        "renderings": renderings(contract),
        "timeline": timeline(view),
        "is_latest": version.number == view.latest.number,
    }


def diff_context(view: ContractView, old: VersionView, new: VersionView) -> dict[str, Any]:
    """Everything the diff page shows: the verdict and findings, then the changed columns."""
    assert old.contract is not None and new.contract is not None
    result = compare(old.contract, new.contract)
    changes, same = column_changes(old.contract, new.contract, result.findings)
    return {
        "view": view,
        "old": old,
        "new": new,
        "result": result,
        "findings": sorted(result.findings, key=lambda f: f.severity.rank),
        "changes": changes,
        "unchanged": same,
        "contract_changes": contract_changes(old.contract, new.contract),
    }


Linker = Callable[..., str]
