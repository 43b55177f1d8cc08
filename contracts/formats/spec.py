"""A format's facts as declarative tables: the one definition every path reads.

Each format module under ``contracts/formats/`` states its facts once, as a :class:`FormatSpec`
(the class attribute ``spec`` of its :class:`~contracts.formats.base.Format`): where the op code
is and what each code means, which messages are control records, where the row images are and
how their values are written, where the table, the timestamps, the position and the key come
from. The Python core reads these tables when it normalizes a message, and the Spark bindings
*build* their decoder from the same tables (``spark_bindings.build``), the way sqlglot's
generator reads a dialect's tables: nothing about a format is written twice.

The vocabulary is small on purpose:

- a :data:`Path` is a field path below the envelope's root (``("source", "db")``);
- a :data:`Condition` (:class:`Equals`, :class:`Present`, :class:`Absent`, :class:`Only`,
  :class:`AllOf`, :class:`AnyOf`) says when a message is a control record;
- :class:`Images` says where the before and after images come from, per op
  (:class:`Image`, :class:`Overlay`, :class:`FirstOf`), and how their values are written.

What a table cannot say stays a method of the format (Python) or a Spark hook module named in
the format's registry entry (``spark_bindings/formats/<name>.py``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeVar

import orjson

from contracts.errors import DecodeError, InputError
from contracts.events import ControlKind, Op, TableId
from contracts.jsonnumbers import as_written
from contracts.schema import json_kind

#: A field path below the envelope's root.
Path = tuple[str, ...]

#: How a row image's values are written: typed by a Connect schema as Kafka's JsonConverter
#: writes them (``connect``); every value a string read with the text rules (``text``); plain
#: JSON scalars, strings read with the text rules (``json``); typed Avro value records the format
#: reads itself (``avro``); MongoDB Extended JSON documents in a string (``ejson``).
Values = Literal["connect", "text", "json", "avro", "ejson"]
#: The unit of a timestamp: an epoch count in ms/us/ns, or ISO-8601 text.
TimeUnit = Literal["s", "ms", "us", "ns", "iso"]
INT64_MIN: Final = -(2**63)
INT64_MAX: Final = 2**63 - 1


def at(doc: Any, path: Path) -> Any:
    """The value at ``path`` in ``doc`` (None when a step is missing or not an object)."""
    value = doc
    for step in path:
        if not isinstance(value, dict):
            return None
        value = value.get(step)
    return value


def reach(doc: Any, path: Path, where: str, prefix: str = "$") -> Any:
    """The value at ``path`` in ``doc`` (None when a step is missing); a step that is there
    but not an object is an :class:`InputError` at its path (as a wire schema refuses it)."""
    value = doc
    for i, step in enumerate(path):
        if type(value) is not dict:  # the common case (an object) tested first: read per message
            if value is None:
                return None
            if not isinstance(value, dict):
                raise InputError(
                    f"expected an object, got {json_kind(value)}",
                    f"{where} {_under(prefix, path[:i])}",
                )
        value = value.get(step)
    return value


#: A compiled reader: ``(doc, where)`` → what the rule reads (errors located at ``where``).
Reader = Callable[[Any, str], Any]
TimeReader = Callable[[Any, str], int | None]
TableReader = Callable[[Any, str], TableId | None]
#: A compiled position reader: ``(doc, where, block, connector)`` → the position.
PositionReader = Callable[[Any, str, Any, str | None], dict[str, Any]]


def path_getter(path: Path, prefix: str = "$") -> Reader:
    """``reach(doc, path, where, prefix)`` as a function of ``(doc, where)``, with a fast path
    for objects all the way down (anything else takes :func:`reach`, so errors are the same)."""
    if len(path) == 1:
        (first,) = path

        def get1(doc: Any, where: str) -> Any:
            if type(doc) is dict:
                return doc.get(first)
            return reach(doc, path, where, prefix)

        return get1
    if len(path) == 2:
        first, second = path

        def get2(doc: Any, where: str) -> Any:
            if type(doc) is dict:
                value = doc.get(first)
                if type(value) is dict:
                    return value.get(second)
            return reach(doc, path, where, prefix)

        return get2
    return lambda doc, where: reach(doc, path, where, prefix)


_READERS: dict[tuple[str, int, str], tuple[Any, Any]] = {}


_Rule = TypeVar("_Rule")
_Built = TypeVar("_Built")


def _compiled(build: Callable[[_Rule, str], _Built], rule: _Rule, prefix: str) -> _Built:
    """``build(rule, prefix)``, built once per rule object (rules are module constants)."""
    key = (build.__name__, id(rule), prefix)
    found = _READERS.get(key)
    if found is not None and found[0] is rule:
        built: _Built = found[1]
        return built
    if len(_READERS) >= 1024:
        _READERS.clear()
    built = build(rule, prefix)
    _READERS[key] = (rule, built)
    return built


# --- text values ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TextConventions:
    """How a family of formats writes values as text (beyond the shared text grammars).

    Booleans are one of ``true_texts``/``false_texts`` (``fold_booleans``: compared stripped
    and in lower case); bytes are text in ``bytes_charset``; a date or timestamp text starting
    with ``zero_date`` is null (MySQL's zero date); a timestamp text without a zone is wall-clock
    time in ``time_zone`` (MySQL ``timestamp``; a ``datetime`` is always UTC wall-clock).
    ``enum_numbers``: an ENUM may be written as its 1-based index and a SET as its bitmask
    (what the binlog holds), besides the member texts; both read as the text."""

    true_texts: tuple[str, ...] = ("true", "TRUE")
    false_texts: tuple[str, ...] = ("false", "FALSE")
    fold_booleans: bool = False
    bytes_charset: str = "UTF-8"
    zero_date: str | None = None
    time_zone: str = "UTC"
    enum_numbers: bool = False


DEFAULT_TEXT: Final = TextConventions()
#: MySQL's text as Canal writes it: ``1``/``0`` booleans, binary as ISO-8859-1 text, zero
#: dates, ENUM/SET as the binlog's index/bitmask (Canal's LogEventConvert writes the binlog
#: value's ``toString()``; producers reading rows by SQL write the member texts).
CANAL_TEXT: Final = TextConventions(
    true_texts=("1", "true"),
    false_texts=("0", "false"),
    fold_booleans=True,
    bytes_charset="ISO-8859-1",
    zero_date="0000-00-00",
    enum_numbers=True,
)


# --- conditions ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Equals:
    """The value at ``at`` is one of ``values`` (compared as JSON values: ``True`` is not
    ``"true"``)."""

    at: Path
    values: frozenset[Any]


@dataclass(frozen=True, slots=True)
class Present:
    """A non-null value at ``at``."""

    at: Path


@dataclass(frozen=True, slots=True)
class Absent:
    """No value (or null) at ``at``."""

    at: Path


@dataclass(frozen=True, slots=True)
class Only:
    """Non-null values at ``present`` and at no other field the format knows (see
    :meth:`FormatSpec.known_fields`): a message carrying nothing else."""

    present: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class AllOf:
    conditions: tuple[Condition, ...]


@dataclass(frozen=True, slots=True)
class AnyOf:
    conditions: tuple[Condition, ...]


Condition = Equals | Present | Absent | Only | AllOf | AnyOf


def holds(condition: Condition, doc: Any, known: tuple[str, ...]) -> bool:
    """Whether ``condition`` holds for the envelope ``doc`` (``known``: its known fields)."""
    if isinstance(condition, Equals):
        value = at(doc, condition.at)
        return any(_same_json(value, v) for v in condition.values)
    if isinstance(condition, Present):
        return at(doc, condition.at) is not None
    if isinstance(condition, Absent):
        return at(doc, condition.at) is None
    if isinstance(condition, Only):
        if not isinstance(doc, dict):
            return False
        wanted = set(condition.present)
        return all(doc.get(n) is not None for n in wanted) and all(
            doc.get(n) is None for n in known if n not in wanted
        )
    if isinstance(condition, AllOf):
        return all(holds(c, doc, known) for c in condition.conditions)
    return any(holds(c, doc, known) for c in condition.conditions)


def _same_json(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def condition_paths(condition: Condition) -> list[Path]:
    """Every path a condition reads."""
    if isinstance(condition, Equals | Present | Absent):
        return [condition.at]
    if isinstance(condition, Only):
        return [(n,) for n in condition.present]
    return [p for c in condition.conditions for p in condition_paths(c)]


# --- ops and control records ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Ops:
    """Where the op code is, and what each code means.

    ``codes`` maps a code to a canonical op, ``controls`` a code to the kind of control record
    a message with that code is. ``spelling`` ``words``: a code is compared lower case, with
    ``_`` and runs of whitespace as one space, trimmed (SharePlex's ``UPDATE_BEFORE``)."""

    at: Path
    codes: Mapping[str, Op]
    controls: Mapping[str, ControlKind] = field(default_factory=dict)
    spelling: Literal["exact", "words"] = "exact"

    def spelled(self, code: str) -> str:
        if self.spelling == "words":
            return " ".join(code.lower().replace("_", " ").split())
        return code

    def read(self, code: Any) -> tuple[Op | None, ControlKind | None]:
        """(op, control kind) of a code; both None for a code that is not known (or not a
        string)."""
        if not isinstance(code, str):
            return None, None
        spelled = self.spelled(code)
        return self.codes.get(spelled), self.controls.get(spelled)

    def unknown(self, code: Any, also: tuple[str, ...] = ()) -> str:
        """What to say about a code that is not known (``also``: more that would do)."""
        label = "op code" if self.at[-1] == "op" else self.at[-1]
        known = [*self.codes, *self.controls, *also]
        said = ", ".join(known[:-1]) + f" or {known[-1]}" if len(known) > 1 else known[0]
        return f"unknown {label} {code!r} (expected {said})"


@dataclass(frozen=True, slots=True)
class Control:
    """A message for which ``when`` holds is a control record of ``kind``.

    Rules are tried in order; a message whose op code is a row change is one unless the rule
    says ``over_op`` (Canal's ``isDdl``)."""

    kind: ControlKind
    when: Condition
    reason: str
    over_op: bool = False


# --- row images ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Image:
    """The image at ``at``; when the message has none: no image, or with ``empty`` an image
    of no columns."""

    at: Path
    empty: bool = False


@dataclass(frozen=True, slots=True)
class Overlay:
    """The image at ``base`` with the columns of the image at ``top`` over it (Canal's before
    image of an update: its changed columns over the row; SharePlex's after image: the changed
    columns over the key). A missing part counts as an image of no columns, unless
    ``needs_top``: then there is no image without ``top``."""

    base: Path
    top: Path
    needs_top: bool = False


@dataclass(frozen=True, slots=True)
class FirstOf:
    """The first of these images that holds a column (an empty image counts as none); when
    none does: no image, or with ``empty`` an image of no columns."""

    images: tuple[Path, ...]
    empty: bool = False


ImageRule = Image | Overlay | FirstOf


@dataclass(frozen=True, slots=True)
class Exists:
    """Per-column flags telling which image really holds a column (Arcion): flag → (in
    before, in after). A column whose flag leaves it out of an image is absent there."""

    at: Path
    flags: Mapping[str, tuple[bool, bool]]


@dataclass(frozen=True, slots=True)
class Images:
    """Where the row images are and how their values are written.

    ``by_op`` says, per op, which rule makes the before and the after image (None: no image);
    an op not listed takes ``before``/``after`` as the message has them. ``null_text`` is the
    text that stands for SQL NULL in a text image; ``empty_is_absent``: ``{}`` means no image
    (Arcion). Columns a message leaves out of an image stay absent from it (the Spark feed
    lists them in ``_absent``)."""

    before: Path
    after: Path
    values: Values
    by_op: Mapping[str, tuple[ImageRule | None, ImageRule | None]] = field(default_factory=dict)
    null_text: str | None = None
    exists: Exists | None = None
    empty_is_absent: bool = False
    text: TextConventions = DEFAULT_TEXT
    #: ``json`` values: an image may instead be raw bytes (base64 text); bytes that hold a
    #: JSON object are read as one, others fill this bytes column (without it: an error).
    raw: str | None = None
    #: ``text`` values: the JSON kinds (``int``, ``float``, ``boolean``, ``json`` for an object
    #: or array) a cell holds in no column; ``typed_cells``: a number or boolean cell is judged
    #: by its column as a plain JSON value (SharePlex) rather than read as its text (Arcion S3).
    cell_refuses: frozenset[str] = frozenset()
    typed_cells: bool = False

    def rules(self, op: str) -> tuple[ImageRule | None, ImageRule | None]:
        """The before and after rules of ``op``."""
        found = self.by_op.get(op)
        return found if found is not None else (Image(self.before), Image(self.after))


@dataclass(frozen=True, slots=True)
class Rows:
    """A message carrying several row changes: one per element of the arrays at ``after``
    and ``before`` of :class:`Images` (Canal's ``data`` and ``old``), element by element; an op
    with no image rules (TRUNCATE) is one change of the whole table. The position names the
    row's index ``index``."""

    index: str


def raw_image(rule: ImageRule | None, images: Mapping[Path, Any]) -> dict[str, Any] | None:
    """The image a rule makes from the message's images (``images``: path → the image there,
    an object or None)."""
    if rule is None:
        return None
    if isinstance(rule, Image):
        found = images.get(rule.at)
        return dict(found) if found is not None else ({} if rule.empty else None)
    if isinstance(rule, Overlay):
        base, top = images.get(rule.base), images.get(rule.top)
        if top is None and rule.needs_top:
            return None
        return {**(base or {}), **(top or {})}
    for path in rule.images:
        found = images.get(path)
        if found:
            return dict(found)
    return {} if rule.empty else None


def rule_paths(rule: ImageRule | None) -> tuple[Path, ...]:
    """The image paths a rule reads."""
    if rule is None:
        return ()
    if isinstance(rule, Image):
        return (rule.at,)
    if isinstance(rule, Overlay):
        return (rule.base, rule.top)
    return rule.images


# --- envelope facts ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Table:
    """Where the table's parts are: each a path, or ``qualified`` (``OWNER.TABLE`` in one
    field, split at its last dot). ``empty_is_null``: an empty string is no value.
    ``fallback``: a message that names no table is about the contract's. A part that is not a
    string (or null) is an error."""

    database: Path | None = None
    schema: Path | None = None
    name: Path | None = None
    qualified: Path | None = None
    empty_is_null: bool = False
    fallback: bool = False
    #: Paths that must hold a value (not null, not empty) in every row change.
    required: tuple[Path, ...] = ()
    #: (part name, path) of the parts this rule names, computed once (read per message).
    parts: tuple[tuple[str, Path], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        named = {
            "database": self.database,
            "schema": self.schema,
            "name": self.name,
            "qualified": self.qualified,
        }
        parts = tuple((k, v) for k, v in named.items() if v is not None)
        object.__setattr__(self, "parts", parts)

    def paths(self) -> dict[str, Path]:
        """The part name (database, schema, name, qualified) → its path."""
        return dict(self.parts)


@dataclass(frozen=True, slots=True)
class Time:
    """A timestamp: an epoch count in ``unit`` (a JSON integer; with ``text``, also a string
    of digits, and anything else is no value) or ISO-8601 text (``iso``)."""

    at: Path
    unit: TimeUnit = "ms"
    text: bool = False


@dataclass(frozen=True, slots=True)
class Position:
    """Where a change's position comes from.

    ``at``: the block holding it (an object, or a JSON object in a string: see
    :attr:`FormatSpec.json_texts`; ``()``: the envelope itself; None: no block);
    ``keys``: the entries kept (None: every entry; a nested value as its JSON text) — or
    ``by_connector``: the keys per the block's ``connector`` entry (Debezium), or ``pairs``: an array of
    ``{name, value}``; ``named``: fixed names → paths (``default`` when absent);
    ``row``: the name of the row's index in a message of several rows (:class:`Rows`)."""

    at: Path | None = None
    keys: tuple[str, ...] | None = ()
    by_connector: Mapping[str, tuple[str, ...]] | None = None
    connector: str = "connector"
    pairs: bool = False
    named: Mapping[str, Path] = field(default_factory=dict)
    default: str | None = None
    #: Keep entries whose value is null (as ``null``).
    keep_nulls: bool = False
    #: Leave out entries whose value is an empty string.
    drop_empty: bool = False
    #: Every connector's keys in ``by_connector`` (a block naming no known connector keeps
    #: these), computed once.
    every_key: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        every = () if self.by_connector is None else self.by_connector.values()
        keys = tuple(dict.fromkeys(k for keys in every for k in keys))
        object.__setattr__(self, "every_key", keys)


@dataclass(frozen=True, slots=True)
class Key:
    """Where a change's key comes from, first found first: the Kafka key (``kafka``), a key
    struct in the envelope (``unique``), the contract's key columns of the row image, the
    record's own key (``record``)."""

    kafka: bool = False
    unique: Path | None = None
    record: Path | None = None


@dataclass(frozen=True, slots=True)
class Connect:
    """``{schema, payload}`` messages (Kafka's JsonConverter): the envelope is the payload;
    with ``schema_optional`` a message may be the payload alone."""

    schema: str = "schema"
    payload: str = "payload"
    schema_optional: bool = False
    #: A document holding only these fields is an envelope by itself (CDL's heartbeats).
    bare: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class FormatSpec:
    """The facts of one format (see the module doc)."""

    ops: Ops
    images: Images
    table: Table
    controls: tuple[Control, ...] = ()
    ts_ms: tuple[Time, ...] = ()
    source_ts_ms: tuple[Time, ...] = ()
    position: Position = field(default_factory=Position)
    key: Key = field(default_factory=Key)
    connect: Connect | None = None
    rows: Rows | None = None
    #: Fields every message must carry (Canal's ``isDdl``).
    required: tuple[Path, ...] = ()
    #: Blocks whose values are text (a map of strings: a value that is not a string is read
    #: as its JSON text), and whose keys matter.
    text_blocks: tuple[Path, ...] = ()
    #: Blocks written as a JSON object inside a string (Arcion's ``cursor``); their values are
    #: read as text, as in a text block.
    json_texts: tuple[Path, ...] = ()
    #: Envelope fields the format knows besides the ones its rules read (message generators
    #: use them; :class:`Only` looks at the fields the rules read).
    fields: tuple[str, ...] = ()
    #: Fields whose (string) value must be padded base64 text.
    base64: tuple[Path, ...] = ()
    #: :meth:`known_fields`, computed once (control rules read it per message).
    known: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "known", self._known_fields())

    def known_fields(self) -> tuple[str, ...]:
        """The top-level envelope fields any rule of this format reads."""
        return self.known

    def _known_fields(self) -> tuple[str, ...]:
        paths: list[Path] = [self.ops.at, self.images.before, self.images.after]
        paths += [p for c in self.controls for p in condition_paths(c.when)]
        paths += [p for _, p in self.table.parts]
        paths += [t.at for t in (*self.ts_ms, *self.source_ts_ms)]
        if self.position.at:
            paths.append(self.position.at)
        elif self.position.at == () and self.position.keys:
            paths += [(k,) for k in self.position.keys]
        paths += list(self.position.named.values())
        paths += [p for p in (self.key.unique, self.key.record) if p]
        paths += list(self.base64)
        if self.images.exists is not None:
            paths.append(self.images.exists.at)
        paths += list(self.required)
        return tuple(dict.fromkeys(p[0] for p in paths if p))

    def unknown_op(self, code: Any) -> str:
        """What to say about an op code neither :attr:`ops` nor a control rule knows."""
        also = [
            v
            for c in self.controls
            if isinstance(c.when, Equals) and c.when.at == self.ops.at
            for v in sorted(c.when.values, key=str)
        ]
        return self.ops.unknown(code, tuple(str(v) for v in also))

    def control_of(self, doc: Any, op: Op | None) -> Control | None:
        """The control rule a message's envelope ``doc`` matches (None: a row change)."""
        for rule in self.controls:
            if (op is None or rule.over_op) and holds(rule.when, doc, self.known):
                return rule
        return None


# --- reading envelope facts (the Python path) ----------------------------------------------------


#: Why a JSON integer time in seconds is refused when its milliseconds leave a 64-bit integer.
TIME_OUT_OF_RANGE: Final = "is beyond the 64-bit range of epoch milliseconds"


def read_time(times: tuple[Time, ...], doc: Any, where: str, prefix: str = "$") -> int | None:
    """Epoch milliseconds from the first of ``times`` that holds a value (None: none does).

    A JSON integer rule refuses any other value (:class:`DecodeError` at ``where`` and the
    path); a ``text`` rule reads a JSON integer or a string of ASCII digits and ignores
    anything else. Counts outside a signed 64-bit integer (seconds: whose milliseconds are) are
    no value for a ``text`` rule, an error otherwise. (Code reading many
    messages keeps :func:`time_reader`'s function instead.)"""
    return _compiled(time_reader, times, prefix)(doc, where)


def time_reader(times: tuple[Time, ...], prefix: str = "$") -> TimeReader:
    """:func:`read_time` for these rules, with their paths and error locations worked out once."""
    getters = tuple(path_getter(rule.at, prefix) for rule in times)
    rules = tuple((rule.unit, rule.text, _under(prefix, rule.at)) for rule in times)

    def checked(doc: Any, where: str) -> int | None:
        raws = [get(doc, where) for get in getters]
        # every field is read, not only the first that holds a value: a JSON integer field
        # holding anything else is an error wherever it is (so the first value found is kept
        # and the rest still checked)
        result: int | None = None
        for (unit, text, label), raw in zip(rules, raws, strict=True):
            if raw is None:
                continue
            if unit == "iso":
                found = iso_epoch_ms(raw) if result is None else None
            else:
                if type(raw) is int and INT64_MIN <= raw <= INT64_MAX:
                    found = raw
                else:
                    found = epoch_count(raw, text)
                    if found is None:
                        if text:
                            continue
                        raise DecodeError(
                            f"expected an integer, got {json_kind(raw)}", f"{where} {label}"
                        )
                if unit != "s":
                    found //= _DIVISORS[unit]
                elif not INT64_MIN <= (found := found * 1000) <= INT64_MAX:
                    # seconds whose milliseconds leave a 64-bit integer: as a count beyond one
                    if text:
                        continue
                    raise DecodeError(TIME_OUT_OF_RANGE, f"{where} {label}")
            if result is None:
                result = found
        return result

    if any(rule.unit == "iso" for rule in times):
        return checked
    counts = tuple(
        (get, rule.unit == "s", _DIVISORS.get(rule.unit, 1))
        for get, rule in zip(getters, times, strict=True)
    )

    def read(doc: Any, where: str) -> int | None:
        # the common case: every field null or an in-range JSON integer (seconds: in range as
        # milliseconds too); anything else is read again by ``checked`` (in order, so its
        # errors are the same)
        result: int | None = None
        for get, seconds, divisor in counts:
            raw = get(doc, where)
            if raw is None:
                continue
            if type(raw) is not int or not INT64_MIN <= raw <= INT64_MAX:
                return checked(doc, where)
            if seconds:
                raw *= 1000
                if not INT64_MIN <= raw <= INT64_MAX:
                    return checked(doc, where)
            elif divisor != 1:
                raw //= divisor
            if result is None:
                result = raw
        return result

    return read


def epoch_count(value: Any, text: bool) -> int | None:
    """A signed 64-bit integer from a JSON integer (or, with ``text``, a string of ASCII digits
    with an optional minus sign and whitespace around); None otherwise."""
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif text and isinstance(value, str):
        stripped = value.strip(" \t\n\r\f\v")
        digits = stripped.removeprefix("-")
        if not (digits.isascii() and digits.isdigit()):
            return None
        number = int(stripped)
    else:
        return None
    return number if INT64_MIN <= number <= INT64_MAX else None


def iso_epoch_ms(value: Any) -> int | None:
    """Epoch milliseconds of an ISO-8601 timestamp text (``yyyy-MM-dd[ T]HH:mm:ss[.f][zone]``,
    no zone: UTC); None for anything else."""
    from contracts.formats._typing import parse_timestamp_text

    if not isinstance(value, str):
        return None
    try:
        parsed = parse_timestamp_text(value.strip(" \t\n\r\f\v"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.UTC)
    delta = parsed - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


_EPOCH: Final = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
#: Epoch units finer than milliseconds: the count is floor-divided by these.
_DIVISORS: Final[Mapping[str, int]] = {"ms": 1, "us": 1_000, "ns": 1_000_000}


def read_table(rule: Table, doc: Any, where: str, prefix: str = "$") -> TableId | None:
    """The table a message names (None: it names none); a part that is not a string or null,
    or a required part that is missing, is a located error. (Code reading many messages keeps
    :func:`table_reader`'s function instead.)"""
    return _compiled(table_reader, rule, prefix)(doc, where)


def table_reader(rule: Table, prefix: str = "$") -> TableReader:
    """:func:`read_table` for this rule, with its paths and error locations worked out once."""
    parts = tuple(
        (part, path_getter(path, prefix), _under(prefix, path)) for part, path in rule.parts
    )
    required = tuple((path, _under(prefix, path)) for path in rule.required)
    qualified_at = _under(prefix, rule.qualified) if rule.qualified is not None else None
    empty_is_null, fallback = rule.empty_is_null, rule.fallback

    def checked(doc: Any, where: str) -> TableId | None:
        values: dict[str, str | None] = {}
        for part, get, label in parts:
            value = get(doc, where)
            if value is not None and not isinstance(value, str):
                raise DecodeError(
                    f"expected a string or null, got {json_kind(value)}", f"{where} {label}"
                )
            values[part] = None if empty_is_null and value == "" else value
        for path, label in required:
            if at(doc, path) in (None, ""):
                raise DecodeError("is missing (it names the table)", f"{where} {label}")
        qualified = values.pop("qualified", None)
        if qualified == "" and qualified_at is not None:
            raise DecodeError("must be a non-empty string", f"{where} {qualified_at}")
        if qualified is not None:
            owner, dot, name = qualified.rpartition(".")
            values["schema"], values["name"] = (owner if dot else None), name
        if fallback and not any(values.values()):
            return None
        return table_id(values.get("database"), values.get("schema"), values.get("name"))

    getters = tuple(get for _, get, _ in parts)
    needed = tuple(path for path, _ in required)
    # with every required field there, the table depends on the parts' values alone: those
    # seen are remembered (only strings and nulls get there, and no other JSON value equals
    # one of them)
    seen: dict[tuple[Any, ...], TableId | None] = {}

    def read(doc: Any, where: str) -> TableId | None:
        for path in needed:
            if at(doc, path) in (None, ""):
                return checked(doc, where)  # which says what is wrong first
        values = tuple([get(doc, where) for get in getters])
        try:
            return seen[values]
        except (KeyError, TypeError):  # not seen yet, or holding an object or array
            pass
        found = checked(doc, where)
        if len(seen) < _TABLES_LIMIT:
            seen[values] = found
        return found

    return read


_TABLES: dict[tuple[str | None, str | None, str | None], TableId] = {}
_TABLES_LIMIT: Final = 10_000


def table_id(database: str | None, schema: str | None, name: str | None) -> TableId:
    """``TableId(database, schema, name)``, interned: a stream names few tables, and every
    message of one shares its TableId."""
    parts = (database, schema, name)
    found = _TABLES.get(parts)
    if found is None:
        found = TableId(database, schema, name)
        if len(_TABLES) < _TABLES_LIMIT:
            _TABLES[parts] = found
    return found


def _under(prefix: str, path: Path) -> str:
    return prefix + "".join(f".{p}" for p in path)


_SCALARS: Final = frozenset({str, int, float, bool})


def position_value(value: Any) -> Any:
    """A position entry's value: a JSON scalar as it is, anything else its compact JSON text."""
    if value is None or type(value) in _SCALARS or isinstance(value, str | int | float | bool):
        return value
    return orjson.dumps(value, default=as_written).decode("utf-8")


def read_position(
    rule: Position,
    doc: Any,
    where: str = "",
    prefix: str = "$",
    block: Any = None,
    connector: str | None = None,
) -> dict[str, Any]:
    """The position of a message (``block``: the block already parsed, when it is a JSON
    text; ``connector``: the connector a contract names). (Code reading many messages keeps
    :func:`position_reader`'s function instead.)"""
    return _compiled(position_reader, rule, prefix)(doc, where, block, connector)


def position_reader(rule: Position, prefix: str = "$") -> PositionReader:
    """:func:`read_position` for this rule, with its paths worked out once; the function takes
    ``(doc, where, block, connector)``."""
    named = tuple((name, path_getter(path, prefix)) for name, path in rule.named.items())
    default, keep_nulls, drop_empty = rule.default, rule.keep_nulls, rule.drop_empty
    get_block = path_getter(rule.at, prefix) if rule.at else None
    block_at = _under(prefix, rule.at or ())
    # without named entries and null-keeping, no entry can be null: nothing to filter at the end
    filtered = bool(named) or keep_nulls

    def read(
        doc: Any, where: str = "", block: Any = None, connector: str | None = None
    ) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, get in named:
            value = get(doc, where)
            out[name] = position_value(value) if value is not None else default
        source = block
        if source is None and rule.at is not None:
            source = get_block(doc, where) if get_block is not None else doc
        if rule.pairs and source is not None:
            if not isinstance(source, list):
                raise DecodeError(
                    f"expected an array of {{name, value}} objects, got {json_kind(source)}",
                    f"{where} {block_at}",
                )
            source = _pairs(source)
        if isinstance(source, dict):
            keys: Iterable[str]
            if rule.by_connector is not None:
                keys = connector_keys(rule, source, connector)
            else:
                keys = source if rule.keys is None else rule.keys
            for k in keys:
                if k not in source:
                    continue
                value = source[k]
                if (value is not None or keep_nulls) and not (drop_empty and value == ""):
                    out[k] = position_value(value)
        if not filtered:
            return out
        return {k: v for k, v in out.items() if v is not None or keep_nulls}

    return read


def connector_keys(
    rule: Position, source: Mapping[str, Any], named: str | None = None
) -> tuple[str, ...]:
    """The position keys of a Debezium-style source block: those of the connector the contract
    names (``named``) when it names a known one, else of the block's own connector, else every
    connector's."""
    assert rule.by_connector is not None
    every = rule.every_key
    if named is not None and named.lower() in rule.by_connector:
        return rule.by_connector[named.lower()]
    connector = source.get(rule.connector)
    if not isinstance(connector, str):
        return every
    return rule.by_connector.get(connector.lower(), every)


def _pairs(value: list[Any]) -> dict[str, Any]:
    """``[{name, value}, ...]`` as a dict (the last of a repeated name wins)."""
    return {
        p["name"]: p.get("value")
        for p in value
        if isinstance(p, dict) and isinstance(p.get("name"), str)
    }
