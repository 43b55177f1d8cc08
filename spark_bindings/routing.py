"""Multi-table topics in Spark: each message decoded with the contract of its table.

The same semantics as the core's :mod:`contracts.routing` (``validate``/``normalize -c DIR``):

- a message's table is read with the parts its format's :class:`~contracts.formats.spec.Table`
  rule names (the decoder's own :meth:`~spark_bindings.build.SpecDecoder.table`, over a parse
  of those parts only, without the contract fallback);
- where a table's messages go is :meth:`contracts.routing.Routing.decide` itself (a Python UDF
  over the table struct, remembered per table): the ``table_include`` / ``database_include``
  filters (Python regular expressions matching the WHOLE name, as Flink's
  ``canal-json.table.include``), the contract of each table, and what a message of a table no
  contract names is (an error whose ``_error`` is the core's ``unmatched-table`` text, or with
  ``unmatched="skip"`` skipped) are never restated here;
- a skipped message is a row with ``_control = "skipped"`` (no images), never dropped
  silently: rows in = rows out (Canal: one per element of ``data``) and
  :func:`~spark_bindings.storage.feed_counts` counts them as ``control:skipped``.

:func:`decode_changes_by_table` gives one feed per contract (what a job writing one table each
wants) and the rest; :func:`union_feed` merges them into one feed whose ``key``/``before``/
``after`` hold every contract's columns (``decode_changes`` with several contracts).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BooleanType,
    DataType,
    IntegerType,
    StringType,
    StructField,
    StructType,
    VariantType,
)

from contracts.contract import Contract
from contracts.errors import InputError, SchemaError
from contracts.events import TableId
from contracts.routing import (
    NO_TABLE,
    UNMATCHED_CHOICES,
    Routes,
    Routing,
    TableFilter,
    Unmatched,
    contract_files,
    table_key,
)
from spark_bindings.build import SpecDecoder, decoder_for
from spark_bindings.context import Context
from spark_bindings.feed import PARSED_COL, table_struct
from spark_bindings.frame import Frame
from spark_bindings.schema import as_contract, quoted

#: Working column: the table a message is of (``database``, ``schema``, ``name``).
ROUTE_COL: Final = "__cdc_route"
#: The ``_control`` kind of a message a run leaves out on purpose (filter, unmatched skip).
SKIPPED: Final = "skipped"

ContractLike = Contract | str | Path


@dataclass(frozen=True)
class TableFeeds:
    """The decode of a multi-table topic.

    ``tables``: one change feed per contract, keyed by its table (``db.schema.table``, as the
    core's per-table counts), decoded with that contract. ``rest``: every other row — messages
    of a table no contract names (``_error``, or ``_control = "skipped"``), skipped by the
    filters, naming no table (tombstones and other control records, messages that do not
    parse): the first contract's feed columns, with null images."""

    tables: Mapping[str, DataFrame]
    rest: DataFrame


def load_contracts(*paths: str | Path) -> list[Contract]:
    """The contracts in files and directories (every ``*.yaml``/``*.yml`` under a directory,
    sorted, ``cdc-contracts.yaml`` left out), as ``validate DIR`` reads them."""
    return [as_contract(p) for p in contract_files(Path(p) for p in paths)]


def routes_of(contracts: Sequence[ContractLike]) -> Routes:
    """The routes of several contracts (objects, files, directories of files), as ``validate``
    reads them: one per table, one format (else a ContractsError naming the file)."""
    loaded: list[tuple[Contract, str]] = []
    for item in contracts:
        if isinstance(item, Contract):
            loaded.append((item, f"contract {item.name}"))
        else:
            loaded += [(as_contract(p), str(p)) for p in contract_files([Path(item)])]
    return Routes.of(loaded)


def routing_of(
    contracts: Sequence[ContractLike] | str | Path,
    *,
    table_include: str | None = None,
    database_include: str | None = None,
    unmatched: Unmatched | None = None,
) -> tuple[Routing, list[Contract]]:
    """The core's :class:`~contracts.routing.Routing` of a decode, as ``validate``/``normalize``
    build it, and its contracts in table order. One contract (not a directory) without
    ``unmatched`` is a single-contract run (filters aside); otherwise each message is routed to
    its table's contract."""
    if unmatched is not None and unmatched not in UNMATCHED_CHOICES:
        raise ValueError(f"unmatched={unmatched!r}: expected 'error' or 'skip'")
    keep = TableFilter.of(database_include, table_include)
    given = [contracts] if isinstance(contracts, str | Path) else list(contracts)
    single = len(given) == 1 and not (isinstance(given[0], str | Path) and Path(given[0]).is_dir())
    if single and unmatched is None:
        return Routing(keep), [as_contract(given[0])]
    routes = routes_of(given)
    ordered = [routes.by_table[t] for t in sorted(routes.by_table, key=table_key)]
    return Routing(keep, routes, unmatched or "error"), ordered


def decode_changes_by_table(
    df: DataFrame,
    contracts: Sequence[ContractLike] | str | Path,
    *,
    table_include: str | None = None,
    database_include: str | None = None,
    unmatched: Unmatched | None = None,
    value_col: str = "value",
    key_col: str = "key",
    drop_control_records: bool = False,
) -> TableFeeds:
    """Decode a multi-table topic: each message with the contract of its table.

    ``contracts``: contracts (objects or files) or directories of them; one per table, all of
    one format. ``table_include``/``database_include``: regular expressions (Python's syntax)
    that must match the whole name (a message they do not keep is skipped). ``unmatched``:
    ``"error"`` (the default with several contracts) or ``"skip"`` for a message of a table no
    contract names. Where each table goes is decided by the core's
    :meth:`contracts.routing.Routing.decide` (a Python UDF, cached per table). JSON formats
    only. The input is read once per contract plus once for the rest: cache it first when it
    is expensive to read.
    """
    from spark_bindings.decode import decode_changes

    routing, ordered = routing_of(
        contracts,
        table_include=table_include,
        database_include=database_include,
        unmatched=unmatched,
    )
    _check_json(ordered)
    routed = _with_route(df, ordered[0], value_col)
    routed = routed.select("*", _decider(routing, ordered)(F.col(ROUTE_COL)).alias(DECISION_COL))
    decision = F.col(DECISION_COL)
    tables: dict[str, DataFrame] = {}
    for i, contract in enumerate(ordered):
        mine = decision["index"] == F.lit(i)
        tables[table_key(contract.table_id)] = decode_changes(
            routed.where(mine).drop(ROUTE_COL, DECISION_COL),
            contract,
            value_col=value_col,
            key_col=key_col,
            drop_control_records=drop_control_records,
        )
    rest = _rest(
        routed.where(decision["index"].isNull()),
        routing,
        ordered[0],
        value_col,
        key_col,
        drop_control_records,
    )
    return TableFeeds(tables, rest)


#: Working column: where the core's routing sends a message (see :data:`DECISION_TYPE`).
DECISION_COL: Final = "__cdc_decision"
#: :class:`contracts.routing.Decision` as a Spark struct; ``index``: the position of the
#: message's contract in table order (null: no contract decodes it).
DECISION_TYPE: Final = StructType(
    [
        StructField("key", StringType()),
        StructField("index", IntegerType()),
        StructField("skip", BooleanType()),
        StructField("refused", StringType()),
        StructField("untabled", BooleanType()),
    ]
)


def _decider(routing: Routing, ordered: Sequence[Contract]) -> Any:
    """A UDF of a message's table struct: ``routing.decide`` of that table, remembered per
    table (a topic holds few tables, so the Python call is made once per table and worker)."""
    index = {c.table_id: i for i, c in enumerate(ordered)}
    one = routing.routes is None
    known: dict[tuple[str | None, ...], tuple[object, ...]] = {}

    def decide(table: Any) -> tuple[object, ...]:
        parts = (None, None, None) if table is None else (table[0], table[1], table[2])
        got = known.get(parts)
        if got is None:
            tid = TableId(*parts)
            d = routing.decide(tid if tid.qualified() else None)
            at: int | None = None
            if d.contract is not None:
                at = index[d.contract.table_id]
            elif one and not d.skip:  # the run's one contract
                at = 0
            got = known[parts] = (d.key, at, d.skip, d.refused, d.untabled)
        return got

    return F.udf(decide, DECISION_TYPE, useArrow=True)


def _check_json(contracts: Sequence[Contract]) -> None:
    from spark_bindings.avro import avro_records, wants_avro

    name = contracts[0].format
    if avro_records(name) or any(wants_avro(c, {}) for c in contracts):
        raise InputError(
            f"{name} values are Avro: routing each message by its table reads JSON "
            "messages only (decode each table's topic with its own contract)"
        )


# --- the table of a message -----------------------------------------------------------------


def _table_reader(decoder: SpecDecoder) -> SpecDecoder:
    """The format's decoder reading only its table parts (no images, no contract fallback)."""

    class TableOnly(type(decoder)):  # type: ignore[misc]
        def leaves(self, ctx: Context) -> list[tuple[tuple[str, ...], DataType]]:
            rule = self.spec.table
            paths = dict.fromkeys([*rule.paths().values(), *rule.required])
            return [(p, VariantType()) for p in paths]

        def text_only_columns(self, ctx: Context) -> list[str]:
            return []  # the table is all it reads: no image cells to ask their JSON kind

    spec = decoder.spec
    return TableOnly(decoder.name, replace(spec, table=replace(spec.table, fallback=False)))


def _with_route(df: DataFrame, contract: Contract, value_col: str) -> DataFrame:
    """``df`` with :data:`ROUTE_COL`: the table each message names (null parts when it names
    none or does not parse)."""
    decoder = decoder_for(contract.format)
    rule = decoder.spec.table
    if not rule.paths():
        none = F.lit(None)
        return df.select("*", table_struct(none, none, none).alias(ROUTE_COL))
    reader = _table_reader(decoder)
    ctx = Context(contract)
    text = F.col(quoted(value_col)).cast("string")
    frame = reader.prepare(Frame(df), text, ctx)
    frame = frame.select("*", reader.parse(text, ctx).alias(PARSED_COL))
    if reader.spec.connect is not None:
        frame = reader.envelope_columns(frame, F.col(PARSED_COL), ctx)
    table, _ = reader.table(F.col(PARSED_COL), ctx)
    return frame.df.select(*[F.col(quoted(c)) for c in df.columns], table.alias(ROUTE_COL))


# --- the rest -------------------------------------------------------------------------------


def _rest(
    routed: DataFrame,
    routing: Routing,
    first: Contract,
    value_col: str,
    key_col: str,
    drop_control_records: bool,
) -> DataFrame:
    """Rows no contract decodes. A message naming no table is decoded with the first contract
    (its parse errors and control records are its own; a row change is unmatched, as in the
    core); one of a table skipped or unmatched is one row, not decoded."""
    from spark_bindings.decode import decode_changes

    decision = F.col(DECISION_COL)
    route = F.col(ROUTE_COL)
    untabled = decode_changes(
        routed.where(decision["key"] == F.lit(NO_TABLE)),
        first,
        value_col=value_col,
        key_col=key_col,
        drop_control_records=False,
    )
    c = F.col
    bad = c("_error").isNotNull()
    change = ~bad & c("_control").isNull()
    if routing.routes is None:
        no_table_skip, no_table_refused = F.lit(False), F.lit(None).cast("string")
    else:
        no_table = routing.unmatched_decision(None)
        no_table_skip, no_table_refused = F.lit(no_table.skip), F.lit(no_table.refused)
    skipped = ~bad & (decision["skip"] | (change & decision["untabled"] & no_table_skip))
    refused = ~bad & ~skipped & change & decision["untabled"] & no_table_refused.isNotNull()
    untabled = _blanked(untabled, skipped, refused, _at_top(no_table_refused), route)
    fields = [f for f in untabled.schema.fields if f.name not in (ROUTE_COL, DECISION_COL)]
    others = routed.where(decision["key"] != F.lit(NO_TABLE))
    reason = _at_top(decision["refused"])
    others = others.select(
        *[_synthetic(f, route, decision["skip"], reason, value_col, key_col) for f in fields]
    )
    out = untabled.drop(ROUTE_COL, DECISION_COL).unionByName(others)
    if drop_control_records:
        out = out.where(c("_control").isNull())
    return out


def _at_top(reason: Column) -> Column:
    """The core's ``unmatched-table`` violation (at ``$``) as an ``_error`` text."""
    return F.concat(F.lit("$: "), reason)


def _blanked(
    feed: DataFrame, skipped: Column, refused: Column, reason: Column, route: Column
) -> DataFrame:
    """A decoded row made a skipped or refused one: no op, images or key; the message's own
    table (none), ``_control``/``_error`` set."""
    gone = skipped | refused
    cols: list[Column] = []
    for f in feed.schema.fields:
        col = F.col(quoted(f.name))
        if f.name in ("op", "key", "before", "after"):
            col = F.when(~gone, col)
        elif f.name == "table":
            col = route.cast(f.dataType)
        elif f.name == "_control":
            col = F.when(skipped, F.lit(SKIPPED)).otherwise(col)
        elif f.name == "_error":
            col = F.when(refused, reason).otherwise(col)
        elif f.name == "_absent":
            col = F.when(gone, F.array().cast(f.dataType)).otherwise(col)
        if f.name == ROUTE_COL:
            continue
        cols.append(col.cast(f.dataType).alias(f.name))
    return feed.select(*cols, route.alias(ROUTE_COL))


def _synthetic(
    f: StructField,
    route: Column,
    skipped: Column,
    reason: Column,
    value_col: str,
    key_col: str,
) -> Column:
    """One column of the row of a message whose table no contract names (not decoded)."""
    if f.name == "table":
        return route.cast(f.dataType).alias("table")
    if f.name == "_control":
        return F.when(skipped, F.lit(SKIPPED)).alias(f.name)
    if f.name == "_error":
        return F.when(~skipped, reason).alias(f.name)
    if f.name == "_absent":
        return F.array().cast(f.dataType).alias(f.name)
    if f.name in ("op", "key", "before", "after", "ts_ms", "source_ts_ms", "position"):
        return F.lit(None).cast(f.dataType).alias(f.name)
    return F.col(quoted(f.name)).alias(f.name)  # a passed-through input column


# --- one feed ---------------------------------------------------------------------------------


def union_feed(feeds: TableFeeds) -> DataFrame:
    """Every row of ``feeds`` in one feed: ``key``/``before``/``after`` hold every contract's
    columns (null where a table has none). A column two contracts type differently is an
    error: use :func:`decode_changes_by_table` then."""
    frames = [*feeds.tables.values(), feeds.rest]
    merged: dict[str, StructType] = {}
    for part in ("key", "before", "after"):
        merged[part] = _merged(part, [(name, f.schema[part].dataType) for name, f in _named(feeds)])
    out: DataFrame | None = None
    for frame in frames:
        shaped = frame.select(
            *[
                _widened(F.col(name), frame.schema[name].dataType, merged[name]).alias(name)
                if name in merged
                else F.col(quoted(name))
                for name in frame.columns
            ]
        )
        out = shaped if out is None else out.unionByName(shaped)
    assert out is not None
    return out


def _named(feeds: TableFeeds) -> list[tuple[str, DataFrame]]:
    return [*feeds.tables.items(), ("(rest)", feeds.rest)]


def _merged(part: str, types: list[tuple[str, DataType]]) -> StructType:
    fields: dict[str, tuple[StructField, str]] = {}
    for table, type_ in types:
        assert isinstance(type_, StructType), (part, type_)
        for f in type_.fields:
            seen = fields.get(f.name)
            if seen is None:
                fields[f.name] = (StructField(f.name, f.dataType, True), table)
            elif seen[0].dataType != f.dataType:
                raise SchemaError(
                    f"{part}.{f.name} is {f.dataType.simpleString()} in {table} but "
                    f"{seen[0].dataType.simpleString()} in {seen[1]}: one feed cannot hold "
                    "both; use decode_changes_by_table (one feed per table)"
                )
    return StructType([f for f, _ in fields.values()])


def _widened(col: Column, have: DataType, want: StructType) -> Column:
    assert isinstance(have, StructType)
    names = set(have.fieldNames())
    struct = F.struct(
        *[
            (col[f.name] if f.name in names else F.lit(None).cast(f.dataType)).alias(f.name)
            for f in want.fields
        ]
    )
    return F.when(col.isNotNull(), struct)
