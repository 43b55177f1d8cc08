"""Schema Registry compatibility verdicts for Avro, decided by Apache Avro's reference checker.

:func:`registry_verdict` answers the question Confluent Schema Registry answers when a schema is
registered under a compatibility level:

- ``BACKWARD``: the new schema (as reader) reads data written with the previous one;
- ``FORWARD``: the previous schema (as reader) reads data written with the new one;
- ``FULL``: both;
- ``*_TRANSITIVE``: against every previous version, otherwise only the latest;
- ``NONE``: always compatible.

The yes/no answer comes from ``avro.compatibility.ReaderWriterCompatibilityChecker`` (the same
checker Karapace uses), never from rules re-derived here. :func:`reader_writer_problems` then walks
the two schemas *guided by that checker* to pair every incompatibility with its location, because
the checker itself merges messages and locations into unordered sets.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

import avro.errors
import avro.schema
from avro.compatibility import (
    ReaderWriterCompatibilityChecker,
    SchemaCompatibilityResult,
    SchemaCompatibilityType,
    lookup_writer_field,
    schema_name_equals,
)

from contracts.contract import CompatibilityLevel
from contracts.errors import SchemaError

__all__ = [
    "Incompatibility",
    "Verdict",
    "parse_avro",
    "reader_writer_problems",
    "registry_verdict",
]


@dataclass(frozen=True, slots=True)
class Incompatibility:
    """One reason a reader cannot read a writer's data.

    ``location`` is a dotted path of field names from the root record (``after.amount``;
    empty for the root itself, ``[]`` marks array items and ``{value}`` map values);
    ``kind`` is the Avro checker's incompatibility type (``type_mismatch``,
    ``reader_field_missing_default_value``, ``missing_union_branch``, ``name_mismatch``,
    ``fixed_size_mismatch``, ``missing_enum_symbols``); ``reader``/``writer`` describe the two
    sides at that location.
    """

    location: str
    kind: str
    detail: str
    reader: str | None = None
    writer: str | None = None

    def describe(self) -> str:
        """The reason as one readable sentence fragment, with its location."""
        return f"at {self.location or '(root)'}: {self.detail}"


@dataclass(frozen=True, slots=True)
class Verdict:
    """The registry's answer: compatible or not, with one readable reason per incompatibility.

    ``problems`` holds the same reasons as structured :class:`Incompatibility` values, each
    tagged with the direction and version it concerns (see :attr:`Check`).
    """

    compatible: bool
    messages: tuple[str, ...] = ()
    problems: tuple[Check, ...] = ()


@dataclass(frozen=True, slots=True)
class Check:
    """One failed reader/writer check behind a verdict."""

    direction: str  # "backward" (new reads old) or "forward" (old reads new)
    version: int  # 1-based index into ``previous``
    problem: Incompatibility

    def message(self, total: int) -> str:
        which = "the latest version" if self.version == total else f"version {self.version}"
        if self.direction == "backward":
            lead = f"the new schema cannot read data written with {which}"
        else:
            lead = f"{which} cannot read data written with the new schema"
        return f"{lead}: {self.problem.describe()}"


# --- parsing ----------------------------------------------------------------------------------


def parse_avro(schema: Any, where: str = "$") -> avro.schema.Schema:
    """Parse an Avro schema given as its JSON value (or JSON text)."""
    text = schema if isinstance(schema, str) and schema.lstrip()[:1] in '{["' else None
    if text is None:
        try:
            text = json.dumps(schema, sort_keys=False)
        except (TypeError, ValueError) as err:
            raise SchemaError(f"Avro schema is not JSON-able: {err}", where) from None
    return _parse_text(text, where)


class _IndexedRecord(avro.schema.RecordSchema):
    """A parsed record whose ``fields_dict`` is built once.

    ``avro``'s ``RecordSchema.fields_dict`` rebuilds a dict on every access, which makes the
    checker quadratic in the number of fields (a 1,000-column table took ~0.4 s). Records parsed
    here are switched to this subclass; the checker's algorithm and verdicts are unchanged.
    """

    _index: dict[str, Any]

    @property
    def fields_dict(self) -> dict[str, Any]:
        index = self.__dict__.get("_index")
        if index is None:
            index = {f.name: f for f in self.fields}
            self.__dict__["_index"] = index
        return index


def _index_records(schema: Any, seen: set[int]) -> None:
    if id(schema) in seen:
        return
    seen.add(id(schema))
    if type(schema) is avro.schema.RecordSchema:
        schema.__class__ = _IndexedRecord
    for child in _children(schema):
        _index_records(child, seen)


def _children(schema: Any) -> list[Any]:
    kind = getattr(schema, "type", None)
    if kind in ("record", "error", "request"):
        return [f.type for f in schema.fields]
    if kind == "array":
        return [schema.items]
    if kind == "map":
        return [schema.values]
    if kind == "union":
        return list(schema.schemas)
    return []


@lru_cache(maxsize=512)
def _parse_cached(text: str) -> avro.schema.Schema:
    parsed = avro.schema.parse(text)
    _index_records(parsed, set())
    return parsed


def _parse_text(text: str, where: str) -> avro.schema.Schema:
    try:
        return _parse_cached(text)
    except (avro.errors.AvroException, json.JSONDecodeError, TypeError, ValueError) as err:
        reason = " ".join(str(err).split()) or type(err).__name__
        raise SchemaError(f"invalid Avro schema: {reason}", where) from None


# --- the verdict ------------------------------------------------------------------------------


def registry_verdict(new: Any, previous: Sequence[Any], level: CompatibilityLevel | str) -> Verdict:
    """Decide, as Confluent Schema Registry does for Avro, whether ``new`` may follow ``previous``.

    ``previous`` lists the registered versions oldest first (empty: always compatible).
    Columns identical on both sides are left out before checking (see :func:`prune_identical`),
    so a malformed part inside such a column is not reported here: validate user-supplied
    schemas with :func:`parse_avro` first.
    """
    level = CompatibilityLevel(level)
    if level is CompatibilityLevel.NONE or not previous:
        return Verdict(True)
    indexes = range(len(previous)) if level.transitive else [len(previous) - 1]
    checks: list[Check] = []
    for i in reversed(indexes):
        pruned_new, pruned_old = prune_identical(new, previous[i])
        new_parsed = parse_avro(pruned_new, "new")
        old = parse_avro(pruned_old, f"previous[{i}]")
        if level.checks_backward:
            checks.extend(
                Check("backward", i + 1, p) for p in reader_writer_problems(new_parsed, old)
            )
        if level.checks_forward:
            checks.extend(
                Check("forward", i + 1, p) for p in reader_writer_problems(old, new_parsed)
            )
    total = len(previous)
    return Verdict(
        compatible=not checks,
        messages=tuple(c.message(total) for c in checks),
        problems=tuple(checks),
    )


# --- pruning identical columns ----------------------------------------------------------------

_PRIMITIVES: Final = frozenset(
    {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
)


def _plain_type(t: Any) -> bool:
    """Whether a field type mentions no named type (no record/enum/fixed, no name reference)."""
    if isinstance(t, str):
        return t in _PRIMITIVES
    if isinstance(t, list):
        return all(_plain_type(b) for b in t)
    if isinstance(t, dict):
        kind = t.get("type")
        if kind == "array":
            return _plain_type(t.get("items"))
        if kind == "map":
            return _plain_type(t.get("values"))
        return isinstance(kind, str) and kind in _PRIMITIVES
    return False


def _records(schema: Any, namespace: str, out: dict[str, dict[str, Any]]) -> None:
    """Every record definition in a schema's JSON, by full name."""
    if isinstance(schema, list):
        for branch in schema:
            _records(branch, namespace, out)
        return
    if not isinstance(schema, dict):
        return
    kind = schema.get("type")
    if kind in ("record", "error") and isinstance(schema.get("name"), str):
        name = schema["name"]
        ns = schema.get("namespace", namespace) if "." not in name else name.rsplit(".", 1)[0]
        out[name if "." in name else (f"{ns}.{name}" if ns else name)] = schema
        for f in schema.get("fields") or ():
            if isinstance(f, dict):
                _records(f.get("type"), ns or "", out)
    elif kind in ("array", "map"):
        _records(schema.get("items" if kind == "array" else "values"), namespace, out)
    elif isinstance(kind, dict | list):
        _records(kind, namespace, out)


def prune_identical(new: Any, old: Any) -> tuple[Any, Any]:
    """Copies of two schemas without the record fields that are identical on both sides.

    A field with the same name, the same plain type (no named types) and the same default in
    the same-named record on both sides is compatible with itself in either direction, so the
    reference checker's verdict does not change without it; dropping those fields keeps wide
    tables fast. Records with aliases are left whole (aliases can pair differently named fields).
    """
    if not isinstance(new, dict | list) or not isinstance(old, dict | list):
        return new, old
    new_copy, old_copy = json.loads(json.dumps(new)), json.loads(json.dumps(old))
    new_recs: dict[str, dict[str, Any]] = {}
    old_recs: dict[str, dict[str, Any]] = {}
    _records(new_copy, "", new_recs)
    _records(old_copy, "", old_recs)
    for name, n_rec in new_recs.items():
        o_rec = old_recs.get(name)
        if o_rec is None or _has_aliases(n_rec) or _has_aliases(o_rec):
            continue
        o_fields = {f.get("name"): f for f in o_rec.get("fields") or () if isinstance(f, dict)}
        same = {
            f["name"]
            for f in n_rec.get("fields") or ()
            if isinstance(f, dict)
            and _plain_type(f.get("type"))
            and o_fields.get(f.get("name")) == f
        }
        if same:
            n_rec["fields"] = [f for f in n_rec["fields"] if f.get("name") not in same]
            o_rec["fields"] = [f for f in o_rec["fields"] if f.get("name") not in same]
    return new_copy, old_copy


def _has_aliases(record: dict[str, Any]) -> bool:
    if "aliases" in record:
        return True
    return any(isinstance(f, dict) and "aliases" in f for f in record.get("fields") or ())


def reader_writer_problems(
    reader: avro.schema.Schema, writer: avro.schema.Schema
) -> list[Incompatibility]:
    """Every reason ``reader`` cannot read ``writer``'s data (empty: it can).

    The verdict is the reference checker's; the walk below only locates its reasons.
    """
    checker = ReaderWriterCompatibilityChecker()  # type: ignore[no-untyped-call]
    top = checker.get_compatibility(reader, writer)
    if top.compatibility is not SchemaCompatibilityType.incompatible:
        return []
    found = list(_Explainer(checker).explain(reader, writer, "", set()))
    return found or _fallback(top)


def _fallback(result: SchemaCompatibilityResult) -> list[Incompatibility]:
    """The checker's own (unpaired) reasons, when the walk cannot pair them."""
    kinds = [k.value for k in result.incompatibilities] or ["incompatible"]
    where = ", ".join(sorted(result.locations))
    return [Incompatibility(where, kinds[0], m) for m in sorted(result.messages)]


def _describe_avro(schema: Any) -> str:
    logical = schema.props.get("logicalType") if hasattr(schema, "props") else None
    name = getattr(schema, "fullname", None)
    if schema.type == "union":
        return "union [" + ", ".join(_describe_avro(s) for s in schema.schemas) + "]"
    if schema.type == "array":
        return f"array of {_describe_avro(schema.items)}"
    if schema.type == "map":
        return f"map of {_describe_avro(schema.values)}"
    if schema.type in ("record", "enum", "fixed") and name:
        return f"{schema.type} {name}"
    return f"{schema.type} ({logical})" if logical else str(schema.type)


def _join(path: str, part: str) -> str:
    return f"{path}.{part}" if path else part


_INCOMPATIBLE: Final = SchemaCompatibilityType.incompatible
#: Types whose union branches are matched by type and name, to explain the difference inside.
_DESCEND: Final = frozenset({"record", "array", "map", "enum", "fixed"})


class _Explainer:
    """Descends through the pairs the checker found incompatible and names each leaf reason."""

    def __init__(self, checker: ReaderWriterCompatibilityChecker) -> None:
        self.checker = checker

    def bad(self, reader: avro.schema.Schema, writer: avro.schema.Schema) -> bool:
        result = self.checker.get_compatibility(reader, writer)
        return result.compatibility is _INCOMPATIBLE

    def explain(
        self,
        reader: Any,
        writer: Any,
        path: str,
        seen: set[tuple[int, int]],
    ) -> Iterator[Incompatibility]:
        pair = (id(reader), id(writer))
        if pair in seen or not self.bad(reader, writer):
            return
        seen = seen | {pair}
        rt, wt = reader.type, writer.type
        if rt == wt and rt in _SAME_TYPE:
            yield from _SAME_TYPE[rt](self, reader, writer, path, seen)
        elif wt == "union":
            for branch in writer.schemas:
                yield from self.explain(reader, branch, path, seen)
        elif rt == "union":
            similar = _similar_branch(reader, writer) if wt in _DESCEND else None
            if similar is not None:
                yield from self.explain(similar, writer, path, seen)
                return
            yield Incompatibility(
                path,
                "missing_union_branch",
                f"the reader's {_describe_avro(reader)} has no branch for the writer's {_describe_avro(writer)}",
                _describe_avro(reader),
                _describe_avro(writer),
            )
        else:
            yield Incompatibility(
                path,
                "type_mismatch",
                f"the reader's {_describe_avro(reader)} cannot read the writer's {_describe_avro(writer)}",
                _describe_avro(reader),
                _describe_avro(writer),
            )

    def record(
        self, reader: Any, writer: Any, path: str, seen: set[tuple[int, int]]
    ) -> Iterator[Incompatibility]:
        yield from _name_problem(reader, writer, path)
        for field in reader.fields:
            where = _join(path, field.name)
            match = lookup_writer_field(writer_schema=writer, reader_field=field)
            if match is None:
                if field.has_default:
                    continue
                if field.type.type == "enum" and field.type.props.get("default"):
                    yield from self.explain(field.type, writer, where, seen)
                    continue
                yield Incompatibility(
                    where,
                    "reader_field_missing_default_value",
                    f"the reader's field {field.name!r} has no default and the writer's "
                    f"{writer.fullname} has no such field",
                    _describe_avro(field.type),
                    None,
                )
            else:
                yield from self.explain(field.type, match.type, where, seen)

    def array(
        self, reader: Any, writer: Any, path: str, seen: set[tuple[int, int]]
    ) -> Iterator[Incompatibility]:
        yield from self.explain(reader.items, writer.items, f"{path}[]", seen)

    def map(
        self, reader: Any, writer: Any, path: str, seen: set[tuple[int, int]]
    ) -> Iterator[Incompatibility]:
        yield from self.explain(reader.values, writer.values, f"{path}{{value}}", seen)

    def union(
        self, reader: Any, writer: Any, path: str, seen: set[tuple[int, int]]
    ) -> Iterator[Incompatibility]:
        for branch in writer.schemas:
            if not self.bad(reader, branch):
                continue
            similar = _similar_branch(reader, branch) if branch.type in _DESCEND else None
            if similar is not None:
                yield from self.explain(similar, branch, path, seen)
                continue
            yield Incompatibility(
                path,
                "missing_union_branch",
                f"the reader's {_describe_avro(reader)} has no branch for the writer's "
                f"{_describe_avro(branch)}",
                _describe_avro(reader),
                _describe_avro(branch),
            )

    def enum(
        self, reader: Any, writer: Any, path: str, seen: set[tuple[int, int]]
    ) -> Iterator[Incompatibility]:
        yield from _name_problem(reader, writer, path)
        missing = [s for s in writer.symbols if s not in set(reader.symbols)]
        default = reader.props.get("default")
        if missing and not (default and default in reader.symbols):
            yield Incompatibility(
                path,
                "missing_enum_symbols",
                f"the reader's enum {reader.fullname} lacks the writer's symbol(s) "
                + ", ".join(missing),
                _describe_avro(reader),
                _describe_avro(writer),
            )

    def fixed(
        self, reader: Any, writer: Any, path: str, seen: set[tuple[int, int]]
    ) -> Iterator[Incompatibility]:
        yield from _name_problem(reader, writer, path)
        if reader.size != writer.size:
            yield Incompatibility(
                path,
                "fixed_size_mismatch",
                f"the reader's fixed {reader.fullname} has size {reader.size}, "
                f"the writer's has size {writer.size}",
                _describe_avro(reader),
                _describe_avro(writer),
            )


def _similar_branch(reader_union: Any, writer_branch: Any) -> Any:
    """The reader branch a writer branch most plausibly maps to (same type and name)."""
    for b in reader_union.schemas:
        if b.type == writer_branch.type and getattr(b, "name", None) == getattr(
            writer_branch, "name", None
        ):
            return b
    return None


def _name_problem(reader: Any, writer: Any, path: str) -> Iterator[Incompatibility]:
    if not schema_name_equals(reader, writer):
        yield Incompatibility(
            path,
            "name_mismatch",
            f"the reader's {reader.type} is named {reader.fullname}, the writer's "
            f"{writer.fullname} (and no alias matches)",
            reader.fullname,
            writer.fullname,
        )


_SAME_TYPE: Final = {
    "record": _Explainer.record,
    "array": _Explainer.array,
    "map": _Explainer.map,
    "union": _Explainer.union,
    "enum": _Explainer.enum,
    "fixed": _Explainer.fixed,
}
