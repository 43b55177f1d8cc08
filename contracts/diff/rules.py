"""The breaking-change rules: small named units in one table (:data:`RULES`).

Each :class:`Rule` has an id, a one-sentence purpose, the severity of what it finds, the
compatibility levels or categories it breaks, the scope it looks at and one function:

- ``registry`` rules explain one reason of the Avro verdict (the verdict is the reference
  checker's; these only say why, in words);
- ``column`` rules compare one column present on both sides (CDC semantics Avro cannot see);
- ``struct`` rules compare the set of columns of one struct (removed, added, renamed);
- ``side`` rules compare whole sides (key, format, topic);
- ``catalog`` rules compare sets of contract files (added, removed), used by ``check``.

To add a rule: write its function, add one :class:`Rule` line to :data:`RULES`, and put a
``before``/``after`` fixture pair under ``tests/fixtures/diff/<rule-id>/``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from contracts.contract import CompatibilityLevel
from contracts.diff.compat import Check
from contracts.diff.levels import judging_level, lowered, raised
from contracts.diff.model import Finding, Severity
from contracts.logical import (
    ENUM_NAME,
    ENUM_SET_NAME,
    LogicalType,
    decimal_precision,
    decimal_scale,
    lookup,
)
from contracts.schema import ConnectSchema

Scope = Literal["registry", "column", "struct", "side", "catalog"]

#: Categories a rule can break, besides the registry levels.
CDC: Final = "CDC"
BACKWARD_LEVELS: Final = ("BACKWARD", "BACKWARD_TRANSITIVE", "FULL", "FULL_TRANSITIVE")
FORWARD_LEVELS: Final = ("FORWARD", "FORWARD_TRANSITIVE", "FULL", "FULL_TRANSITIVE")
ALL_LEVELS: Final = tuple(dict.fromkeys(BACKWARD_LEVELS + FORWARD_LEVELS))

TEMPORAL_KINDS: Final = frozenset(
    {"date", "time", "timestamp", "zoned-timestamp", "zoned-time", "year", "interval"}
)
ENUM_NAMES: Final = frozenset({ENUM_NAME, ENUM_SET_NAME})


@dataclass(frozen=True, slots=True)
class ColumnPair:
    """One column (or nested field) present on both sides.

    ``path`` is the finding path (``value.after.amount``), ``label`` the column as people say it
    (``amount``, ``address.city``) and ``column`` the top-level column.
    """

    path: str
    label: str
    column: str
    old: ConnectSchema
    new: ConnectSchema

    def finding(self, rule: str, severity: Severity, message: str, old: Any, new: Any) -> Finding:
        return Finding(rule, self.path, severity, message, old, new, self.column)


@dataclass(frozen=True, slots=True)
class StructPair:
    """One struct present on both sides; ``prefix`` is the finding path of the struct."""

    prefix: str
    label_prefix: str
    column: str | None
    old: ConnectSchema
    new: ConnectSchema

    def path(self, name: str) -> str:
        return f"{self.prefix}.{name}" if self.prefix else name

    def label(self, name: str) -> str:
        return f"{self.label_prefix}.{name}" if self.label_prefix else name

    def top(self, name: str) -> str:
        return self.column or name


@dataclass(frozen=True, slots=True)
class SidePair:
    """The facts of two whole sides that side rules compare (None: that side does not say)."""

    old_format: str | None
    new_format: str | None
    old_topic: str | None
    new_topic: str | None
    old_key: ConnectSchema | None
    new_key: ConnectSchema | None
    keys_known: bool
    old_level: CompatibilityLevel | None = None
    new_level: CompatibilityLevel | None = None


@dataclass(frozen=True, slots=True)
class RegistryProblem:
    """One reason of the registry verdict, placed in the diff: ``part`` is ``value`` or ``key``."""

    part: str
    check: Check
    total: int


@dataclass(frozen=True, slots=True)
class Rule:
    """One named rule."""

    id: str
    purpose: str
    severity: Severity
    breaks: tuple[str, ...]
    scope: Scope
    check: Callable[..., Iterator[Finding]]


# --- describing schemas -----------------------------------------------------------------------


def _short(name: str | None) -> str:
    return name.rsplit(".", 1)[-1] if name else "plain"


def _meaning(lt: LogicalType) -> str:
    return f"{_short(lt.name)} ({lt.description})" if lt.description else _short(lt.name)


def _plain(schema: ConnectSchema) -> str:
    return f"plain {schema.type}"


# --- registry rules ---------------------------------------------------------------------------

_LOSES: Final = {
    "backward": "the new schema cannot read data written with {which}",
    "forward": "{which} cannot read data written with the new schema",
}


def _consequence(p: RegistryProblem) -> str:
    which = "the latest version" if p.check.version == p.total else f"version {p.check.version}"
    return _LOSES[p.check.direction].format(which=which)


def _registry_path(p: RegistryProblem) -> str:
    loc = p.check.problem.location
    return f"{p.part}.{loc}" if loc else p.part


def _old_new(p: RegistryProblem) -> tuple[str | None, str | None]:
    """The problem's reader/writer descriptions as (old, new)."""
    prob = p.check.problem
    if p.check.direction == "backward":
        return prob.writer, prob.reader
    return prob.reader, prob.writer


def _registry_finding(rule: str, p: RegistryProblem, fact: str) -> Iterator[Finding]:
    old, new = _old_new(p)
    yield Finding(
        rule, _registry_path(p), Severity.breaking, f"{fact}; {_consequence(p)}.", old, new
    )


def _field_label(p: RegistryProblem) -> str:
    return p.check.problem.location or "the root"


def avro_field_no_default(p: RegistryProblem) -> Iterator[Finding]:
    label = _field_label(p)
    if p.check.direction == "backward":
        fact = f"Field {label} was added without a default"
    else:
        fact = f"Field {label} was removed but the older schema needs it (it has no default)"
    yield from _registry_finding("avro-field-no-default", p, fact)


def avro_type_mismatch(p: RegistryProblem) -> Iterator[Finding]:
    old, new = _old_new(p)
    fact = f"Field {_field_label(p)} changed type from {old} to {new}"
    yield from _registry_finding("avro-type-mismatch", p, fact)


def avro_union_branch_missing(p: RegistryProblem) -> Iterator[Finding]:
    prob = p.check.problem
    if p.check.direction == "backward":
        fact = (
            f"Field {_field_label(p)} changed to {prob.reader}, which has no branch for the "
            f"older {prob.writer}"
        )
    else:
        fact = (
            f"Field {_field_label(p)} changed to {prob.writer}, which the older "
            f"{prob.reader} has no branch for"
        )
    yield from _registry_finding("avro-union-branch-missing", p, fact)


def avro_name_mismatch(p: RegistryProblem) -> Iterator[Finding]:
    old, new = _old_new(p)
    fact = f"Type at {_field_label(p)} was renamed from {old} to {new} without an alias"
    yield from _registry_finding("avro-name-mismatch", p, fact)


def avro_enum_symbols_missing(p: RegistryProblem) -> Iterator[Finding]:
    fact = f"Enum at {_field_label(p)} changed symbols: {p.check.problem.detail}"
    yield from _registry_finding("avro-enum-symbols-missing", p, fact)


def avro_fixed_size_mismatch(p: RegistryProblem) -> Iterator[Finding]:
    fact = f"Fixed type at {_field_label(p)} changed size: {p.check.problem.detail}"
    yield from _registry_finding("avro-fixed-size-mismatch", p, fact)


#: Avro checker incompatibility kind → registry rule id.
AVRO_KIND_RULES: Final[Mapping[str, str]] = {
    "reader_field_missing_default_value": "avro-field-no-default",
    "type_mismatch": "avro-type-mismatch",
    "missing_union_branch": "avro-union-branch-missing",
    "name_mismatch": "avro-name-mismatch",
    "missing_enum_symbols": "avro-enum-symbols-missing",
    "fixed_size_mismatch": "avro-fixed-size-mismatch",
}


# --- column rules (CDC semantics) -------------------------------------------------------------


def _is_fixed_decimal(lt: LogicalType | None) -> bool:
    return lt is not None and lt.kind == "decimal" and lt.unit == "unscaled"


def decimal_scale_changed(c: ColumnPair) -> Iterator[Finding]:
    if not (_is_fixed_decimal(lookup(c.old)) and _is_fixed_decimal(lookup(c.new))):
        return
    old, new = decimal_scale(c.old), decimal_scale(c.new)
    if old != new:
        yield c.finding(
            "decimal-scale-changed",
            Severity.breaking,
            f"Column {c.label} changed decimal scale from {old} to {new}.",
            old,
            new,
        )


def decimal_precision_changed(c: ColumnPair) -> Iterator[Finding]:
    if not (_is_fixed_decimal(lookup(c.old)) and _is_fixed_decimal(lookup(c.new))):
        return
    old, new = decimal_precision(c.old), decimal_precision(c.new)
    if old != new:
        yield c.finding(
            "decimal-precision-changed",
            Severity.breaking,
            f"Column {c.label} changed decimal precision from {_stated(old)} to {_stated(new)}.",
            old,
            new,
        )


def _stated(value: int | None) -> str:
    return "unstated" if value is None else str(value)


def _temporal(lt: LogicalType | None) -> bool:
    return lt is not None and lt.kind in TEMPORAL_KINDS


def temporal_unit_changed(c: ColumnPair) -> Iterator[Finding]:
    old, new = lookup(c.old), lookup(c.new)
    if old is None or new is None or not (_temporal(old) and _temporal(new)):
        return
    if old.kind == new.kind and old.unit != new.unit:
        yield c.finding(
            "temporal-unit-changed",
            Severity.breaking,
            f"Column {c.label} changed {old.kind} unit from {old.unit} to {new.unit} "
            f"({_short(old.name)} to {_short(new.name)}).",
            old.name,
            new.name,
        )


def temporal_type_changed(c: ColumnPair) -> Iterator[Finding]:
    old, new = lookup(c.old), lookup(c.new)
    if not (_temporal(old) or _temporal(new)):
        return
    if old is not None and new is not None and old.kind == new.kind:
        return  # same meaning: temporal-unit-changed covers a unit change
    before = _meaning(old) if old is not None else _plain(c.old)
    after = _meaning(new) if new is not None else _plain(c.new)
    yield c.finding(
        "temporal-type-changed",
        Severity.breaking,
        f"Column {c.label} changed from {before} to {after}.",
        old.name if old else c.old.type,
        new.name if new else c.new.type,
    )


def logical_type_added(c: ColumnPair) -> Iterator[Finding]:
    old, new = lookup(c.old), lookup(c.new)
    if old is None and new is not None and not _temporal(new):
        yield c.finding(
            "logical-type-added",
            Severity.breaking,
            f"Column {c.label} changed from {_plain(c.old)} to {_meaning(new)}.",
            c.old.type,
            new.name,
        )


def logical_type_removed(c: ColumnPair) -> Iterator[Finding]:
    old, new = lookup(c.old), lookup(c.new)
    if old is not None and new is None and not _temporal(old):
        yield c.finding(
            "logical-type-removed",
            Severity.breaking,
            f"Column {c.label} lost logical type {_short(old.name)} and became {_plain(c.new)}.",
            old.name,
            c.new.type,
        )


def logical_type_changed(c: ColumnPair) -> Iterator[Finding]:
    old, new = lookup(c.old), lookup(c.new)
    if old is None or new is None or _temporal(old) or _temporal(new):
        return
    if (old.kind, old.unit) != (new.kind, new.unit):
        same_short = _short(old.name) == _short(new.name)
        before = f"{old.name} ({old.description})" if same_short else _meaning(old)
        after = f"{new.name} ({new.description})" if same_short else _meaning(new)
        yield c.finding(
            "logical-type-changed",
            Severity.breaking,
            f"Column {c.label} changed logical type from {before} to {after}.",
            old.name,
            new.name,
        )


def _allowed(schema: ConnectSchema) -> list[str] | None:
    if schema.name not in ENUM_NAMES:
        return None
    raw = schema.parameter("allowed")
    return [v for v in raw.split(",")] if raw is not None else None


def _enum_change(c: ColumnPair) -> tuple[list[str], list[str]] | None:
    old, new = _allowed(c.old), _allowed(c.new)
    if old is None or new is None:
        return None
    return [v for v in old if v not in set(new)], [v for v in new if v not in set(old)]


def _values(values: list[str]) -> str:
    return ", ".join(repr(v) for v in values)


def enum_values_removed(c: ColumnPair) -> Iterator[Finding]:
    change = _enum_change(c)
    if change and change[0]:
        yield c.finding(
            "enum-values-removed",
            Severity.breaking,
            f"Column {c.label} removed allowed value(s) {_values(change[0])}.",
            change[0],
            None,
        )


def enum_values_added(c: ColumnPair) -> Iterator[Finding]:
    change = _enum_change(c)
    if change and change[1]:
        yield c.finding(
            "enum-values-added",
            Severity.warning,
            f"Column {c.label} added allowed value(s) {_values(change[1])}.",
            None,
            change[1],
        )


def column_type_changed(c: ColumnPair) -> Iterator[Finding]:
    if c.old.type == c.new.type or lookup(c.old) is not None or lookup(c.new) is not None:
        return
    yield c.finding(
        "column-type-changed",
        Severity.warning,
        f"Column {c.label} changed type from {c.old.describe()} to {c.new.describe()}.",
        c.old.describe(),
        c.new.describe(),
    )


def column_became_required(c: ColumnPair) -> Iterator[Finding]:
    if c.old.optional and not c.new.optional:
        yield c.finding(
            "column-became-required",
            Severity.warning,
            f"Column {c.label} changed from optional to required.",
            "optional",
            "required",
        )


def column_became_optional(c: ColumnPair) -> Iterator[Finding]:
    if not c.old.optional and c.new.optional:
        yield c.finding(
            "column-became-optional",
            Severity.info,
            f"Column {c.label} changed from required to optional.",
            "required",
            "optional",
        )


# --- struct rules -----------------------------------------------------------------------------


def _signature(schema: ConnectSchema) -> tuple[Any, ...]:
    """What makes two columns 'the same type' for rename detection (everything but the name)."""
    return (
        schema.type,
        schema.optional,
        schema.name,
        schema.parameters,
        schema.fields,
        schema.items,
        schema.keys,
        schema.values,
    )


def probable_renames(s: StructPair) -> list[tuple[ConnectSchema, ConnectSchema]]:
    """Pairs (removed, added) of columns of the same type, matched in order, one to one."""
    new_names = set(s.new.field_names())
    old_names = set(s.old.field_names())
    removed = [f for f in s.old.fields or () if f.field not in new_names]
    added = [f for f in s.new.fields or () if f.field not in old_names]
    pairs: list[tuple[ConnectSchema, ConnectSchema]] = []
    taken: set[int] = set()
    for r in removed:
        sig = _signature(r)
        for i, a in enumerate(added):
            if i not in taken and _signature(a) == sig:
                taken.add(i)
                pairs.append((r, a))
                break
    return pairs


def column_probably_renamed(s: StructPair) -> Iterator[Finding]:
    for r, a in probable_renames(s):
        yield Finding(
            "column-probably-renamed",
            s.path(a.field or ""),
            Severity.warning,
            f"Column {s.label(r.field or '')} was probably renamed to {s.label(a.field or '')} "
            f"(removed and added with the same type {r.describe()}).",
            r.field,
            a.field,
            s.top(a.field or ""),
        )


def column_removed(s: StructPair) -> Iterator[Finding]:
    renamed = {r.field for r, _ in probable_renames(s)}
    new_names = set(s.new.field_names())
    for f in s.old.fields or ():
        if f.field not in new_names and f.field not in renamed:
            yield Finding(
                "column-removed",
                s.path(f.field or ""),
                Severity.warning,
                f"Column {s.label(f.field or '')} was removed ({f.describe()}).",
                f.describe(),
                None,
                s.top(f.field or ""),
            )


def column_added(s: StructPair) -> Iterator[Finding]:
    renamed = {a.field for _, a in probable_renames(s)}
    old_names = set(s.old.field_names())
    for f in s.new.fields or ():
        if f.field not in old_names and f.field not in renamed:
            yield Finding(
                "column-added",
                s.path(f.field or ""),
                Severity.info,
                f"Column {s.label(f.field or '')} was added ({f.describe()}"
                f"{', optional' if f.optional else ''}).",
                None,
                f.describe(),
                s.top(f.field or ""),
            )


# --- side rules -------------------------------------------------------------------------------


def format_changed(s: SidePair) -> Iterator[Finding]:
    if s.old_format and s.new_format and s.old_format != s.new_format:
        yield Finding(
            "format-changed",
            "format",
            Severity.breaking,
            f"Format changed from {s.old_format} to {s.new_format}.",
            s.old_format,
            s.new_format,
        )


def topic_changed(s: SidePair) -> Iterator[Finding]:
    if s.old_topic and s.new_topic and s.old_topic != s.new_topic:
        yield Finding(
            "topic-changed",
            "topic",
            Severity.breaking,
            f"Topic changed from {s.old_topic} to {s.new_topic}.",
            s.old_topic,
            s.new_topic,
        )


def compatibility_level_lowered(s: SidePair) -> Iterator[Finding]:
    if s.old_level is None or s.new_level is None or not lowered(s.old_level, s.new_level):
        return
    yield Finding(
        "compatibility-level-lowered",
        "compatibility",
        Severity.breaking,
        f"Compatibility level lowered from {s.old_level.value} to {s.new_level.value}; the "
        f"change is judged at {judging_level(s.old_level, s.new_level).value}, the level "
        "registered now.",
        s.old_level.value,
        s.new_level.value,
    )


def compatibility_level_raised(s: SidePair) -> Iterator[Finding]:
    if s.old_level is None or s.new_level is None or not raised(s.old_level, s.new_level):
        return
    yield Finding(
        "compatibility-level-raised",
        "compatibility",
        Severity.info,
        f"Compatibility level raised from {s.old_level.value} to {s.new_level.value}.",
        s.old_level.value,
        s.new_level.value,
    )


def _key_names(key: ConnectSchema | None) -> list[str]:
    return key.field_names() if key is not None else []


def key_columns_changed(s: SidePair) -> Iterator[Finding]:
    if not s.keys_known:
        return
    old, new = _key_names(s.old_key), _key_names(s.new_key)
    if old != new:
        yield Finding(
            "key-columns-changed",
            "key",
            Severity.breaking,
            f"Key columns changed from ({', '.join(old) or 'none'}) to "
            f"({', '.join(new) or 'none'}); messages will be partitioned differently.",
            old,
            new,
        )


def _key_shape(schema: ConnectSchema) -> dict[str, Any]:
    shape = schema.to_json()
    shape.pop("doc", None)
    return shape


def key_schema_changed(s: SidePair) -> Iterator[Finding]:
    if not s.keys_known or s.old_key is None or s.new_key is None:
        return
    if _key_names(s.old_key) != _key_names(s.new_key):
        return  # key-columns-changed says it
    for old, new in zip(s.old_key.fields or (), s.new_key.fields or (), strict=True):
        if _key_shape(old) != _key_shape(new):
            yield Finding(
                "key-schema-changed",
                f"key.{old.field}",
                Severity.breaking,
                f"Key column {old.field} changed from {old.describe()}"
                f"{' optional' if old.optional else ''} to {new.describe()}"
                f"{' optional' if new.optional else ''}; the key's bytes, and so partitioning,"
                " changed.",
                old.describe(),
                new.describe(),
                old.field,
            )


# --- catalog rules (used by `check`) ----------------------------------------------------------


def contract_removed(name: str) -> Iterator[Finding]:
    yield Finding(
        "contract-removed",
        name,
        Severity.breaking,
        f"Contract {name} was removed; its topic's consumers get no more data from it.",
        name,
        None,
    )


def contract_added(name: str) -> Iterator[Finding]:
    yield Finding("contract-added", name, Severity.info, f"Contract {name} was added.", None, name)


# --- the table --------------------------------------------------------------------------------

_B, _W, _I = Severity.breaking, Severity.warning, Severity.info

#: Every rule, in reporting order within its scope.
RULES: Final[tuple[Rule, ...]] = (
    # registry verdict explanations
    Rule("avro-field-no-default", "A field one side reads is missing on the other and has no default.", _B, ALL_LEVELS, "registry", avro_field_no_default),
    Rule("avro-type-mismatch", "A field's Avro type changed to one the reader cannot promote from.", _B, ALL_LEVELS, "registry", avro_type_mismatch),
    Rule("avro-union-branch-missing", "A union, such as an optional field, lost a branch the writer uses.", _B, ALL_LEVELS, "registry", avro_union_branch_missing),
    Rule("avro-name-mismatch", "A record, enum or fixed type was renamed without an alias.", _B, ALL_LEVELS, "registry", avro_name_mismatch),
    Rule("avro-enum-symbols-missing", "An Avro enum lost symbols the writer may use.", _B, ALL_LEVELS, "registry", avro_enum_symbols_missing),
    Rule("avro-fixed-size-mismatch", "An Avro fixed type changed size.", _B, ALL_LEVELS, "registry", avro_fixed_size_mismatch),
    # side rules
    Rule("format-changed", "The producer's CDC format changed.", _B, (CDC,), "side", format_changed),
    Rule("topic-changed", "The Kafka topic changed.", _B, (CDC,), "side", topic_changed),
    Rule("compatibility-level-lowered", "The compatibility level gave up a guarantee (BACKWARD to NONE, FULL to BACKWARD, a transitive level to its non-transitive one).", _B, (CDC,), "side", compatibility_level_lowered),
    Rule("compatibility-level-raised", "The compatibility level added a guarantee and gave up none.", _I, (CDC,), "side", compatibility_level_raised),
    Rule("key-columns-changed", "The key columns changed, so messages are partitioned differently.", _B, (CDC,), "side", key_columns_changed),
    Rule("key-schema-changed", "A key column's schema changed, so key bytes and partitions change.", _B, (CDC,), "side", key_schema_changed),
    # column rules
    Rule("decimal-scale-changed", "A decimal's scale changed, so unscaled values read 10^n off.", _B, (CDC,), "column", decimal_scale_changed),
    Rule("decimal-precision-changed", "A decimal's precision changed.", _B, (CDC,), "column", decimal_precision_changed),
    Rule("temporal-unit-changed", "A temporal type kept its meaning but changed its wire unit.", _B, (CDC,), "column", temporal_unit_changed),
    Rule("temporal-type-changed", "A temporal column changed meaning or became a plain type.", _B, (CDC,), "column", temporal_type_changed),
    Rule("logical-type-added", "A plain column gained a (non-temporal) logical type.", _B, (CDC,), "column", logical_type_added),
    Rule("logical-type-removed", "A column lost its (non-temporal) logical type.", _B, (CDC,), "column", logical_type_removed),
    Rule("logical-type-changed", "A column's logical type changed to another kind or encoding.", _B, (CDC,), "column", logical_type_changed),
    Rule("enum-values-removed", "An Enum/EnumSet column no longer allows some values.", _B, (CDC,), "column", enum_values_removed),
    Rule("enum-values-added", "An Enum/EnumSet column allows new values consumers may not know.", _W, (CDC,), "column", enum_values_added),
    Rule("column-type-changed", "A plain column's Connect type changed.", _W, (CDC,), "column", column_type_changed),
    Rule("column-became-required", "An optional column became required.", _W, (CDC,), "column", column_became_required),
    Rule("column-became-optional", "A required column became optional (nulls may now arrive).", _I, (CDC,), "column", column_became_optional),
    # struct rules
    Rule("column-probably-renamed", "A column was removed and one of the same type added.", _W, (CDC,), "struct", column_probably_renamed),
    Rule("column-removed", "A column was removed (downstream data loss).", _W, (CDC,), "struct", column_removed),
    Rule("column-added", "A column was added.", _I, (CDC,), "struct", column_added),
    # catalog rules
    Rule("contract-removed", "A contract was removed (or renamed), so its consumers get no more data.", _B, (CDC,), "catalog", contract_removed),
    Rule("contract-added", "A contract file was added.", _I, (CDC,), "catalog", contract_added),
)  # fmt: skip

RULES_BY_ID: Final[Mapping[str, Rule]] = {r.id: r for r in RULES}


def rules_in(scope: Scope) -> tuple[Rule, ...]:
    """The rules of one scope, in table order."""
    return tuple(r for r in RULES if r.scope == scope)
