"""Apply DDL to a catalog: ``CREATE TABLE``, ``ALTER TABLE``, ``DROP``/``RENAME TABLE``, enum types.

:func:`apply_sql` reads statements (split and tokenized by sqlglot, which knows each dialect's
quoting, comments and dollar-quoted bodies) and changes a :class:`Catalog` the way the database
would: a column's type is normalized as the server stores it (:func:`contracts.sqltypes.normalize`),
``SERIAL`` implies ``NOT NULL`` and a key, ``MODIFY`` replaces a definition, ``DROP PRIMARY KEY``
drops it. Statements that cannot change a table's columns (``INSERT``, ``CREATE INDEX`` on
non-unique indexes, ``GRANT`` ...) are counted and skipped; a table statement this module cannot
read is an error naming ``file:line`` and what was not understood — never a silently wrong
table.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

from contracts.derive.model import Column, Default, Key, Table
from contracts.derive.opaque import client_delimiters, marked, refusal, routine_word, with_bodies
from contracts.errors import InputError
from contracts.sqltypes import (
    CONSTRAINT_WORDS,
    STRING_KINDS,
    Dialect,
    SqlType,
    Token,
    TypeSyntaxError,
    is_serial,
    normalize,
    parse_type,
    tokenize,
)


class DdlError(InputError):
    """A DDL statement that cannot be applied (unknown syntax, an unknown table or column)."""


@dataclass(slots=True)
class Catalog:
    """The tables (and PostgreSQL enum types and domains) that the statements so far define."""

    dialect: Dialect
    database: str | None = None
    schema: str | None = None
    tables: dict[tuple[str | None, str], Table] = field(default_factory=dict)
    enums: dict[str, tuple[str, ...]] = field(default_factory=dict)
    domains: dict[str, tuple[SqlType, bool, Default | None]] = field(default_factory=dict)
    skipped: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        if self.dialect == "postgres" and self.schema is None:
            self.schema = "public"

    def owner_of(self, parts: Sequence[str]) -> tuple[str | None, str]:
        """``(database or schema, name)`` for a possibly qualified table name."""
        name = parts[-1]
        owner = parts[-2] if len(parts) > 1 else None
        if owner is None:
            owner = self.schema if self.dialect == "postgres" else self.database
        return owner, name

    def table_list(self) -> list[Table]:
        """The tables, in the order they were created."""
        return list(self.tables.values())


def apply_sql(catalog: Catalog, text: str, source: str = "sql", first_line: int = 1) -> None:
    """Apply every statement of ``text`` to ``catalog`` (``source`` names it in errors).

    A statement that may change a table in a way derive cannot read (a DO block, a routine
    body or dynamic SQL holding DDL, :mod:`contracts.derive.opaque`) is an error, unless its
    author marked it to be skipped."""
    if catalog.dialect != "postgres":
        text = client_delimiters(text)
    tokens = tokenize(text, catalog.dialect, source, first_line)
    since = 0
    for statement in with_bodies(split_statements(tokens)):
        _Statement(catalog, statement, source, (text, first_line, since)).apply()
        since = statement[-1].end + 1


def split_statements(tokens: Sequence[Token]) -> list[list[Token]]:
    """Statements separated by semicolons (empty ones dropped)."""
    out: list[list[Token]] = []
    current: list[Token] = []
    for tok in tokens:
        if tok.kind == "SEMICOLON":
            if current:
                out.append(current)
            current = []
        else:
            current.append(tok)
    if current:
        out.append(current)
    return out


#: Words that end a DEFAULT expression: the next constraint begins.
_CONSTRAINT_WORDS: Final = CONSTRAINT_WORDS | {"SERIAL"}
#: Words of a current-time default, as MySQL and PostgreSQL spell them.
_NOW_WORDS: Final = frozenset(
    {"CURRENT_TIMESTAMP", "NOW", "LOCALTIMESTAMP", "LOCALTIME", "CURRENT_DATE", "CURRENT_TIME"}
)


class _Statement:
    """One statement being applied: a cursor over its tokens, with the catalog it changes."""

    def __init__(
        self,
        catalog: Catalog,
        tokens: list[Token],
        source: str,
        text: tuple[str, int, int] = ("", 1, 0),
    ) -> None:
        self.catalog = catalog
        self.dialect = catalog.dialect
        self.tokens = tokens
        self.source = source
        #: the script's text, its first line number, where this statement's preamble begins
        self.text, self.first_line, self.since = text
        self.i = 0

    # --- cursor ----------------------------------------------------------------------------

    def peek(self, ahead: int = 0) -> Token | None:
        j = self.i + ahead
        return self.tokens[j] if j < len(self.tokens) else None

    def up(self, ahead: int = 0) -> str:
        tok = self.peek(ahead)
        return tok.upper if tok is not None and tok.is_word else ""

    def kind(self, ahead: int = 0) -> str:
        tok = self.peek(ahead)
        return tok.kind if tok is not None else "END"

    def at_end(self) -> bool:
        return self.i >= len(self.tokens)

    def take(self) -> Token:
        tok = self.peek()
        if tok is None:
            raise self.error("the statement ends too early")
        self.i += 1
        return tok

    def accept(self, *words: str) -> bool:
        """Consume ``words`` (a phrase) if they come next."""
        if all(self.up(k) == w for k, w in enumerate(words)):
            self.i += len(words)
            return True
        return False

    def expect(self, *words: str) -> None:
        if not self.accept(*words):
            raise self.error(f"expected {' '.join(words)}")

    def expect_kind(self, kind: str, shown: str) -> Token:
        if self.kind() != kind:
            raise self.error(f"expected {shown}")
        return self.take()

    @property
    def line(self) -> int:
        tok = self.peek() or (self.tokens[-1] if self.tokens else None)
        return tok.line if tok is not None else 1

    def where(self) -> str:
        return f"{self.source}:{self.line}"

    def error(self, what: str) -> DdlError:
        tok = self.peek()
        found = f" (found {tok.text!r})" if tok is not None else " (at the end of the statement)"
        return DdlError(what + found, self.where())

    def identifier(self) -> str:
        """One name: quoted names keep their case; PostgreSQL folds unquoted ones to lower case."""
        tok = self.peek()
        if tok is None or not tok.is_word:
            raise self.error("expected a name")
        self.i += 1
        if tok.kind == "IDENTIFIER" or self.dialect != "postgres":
            return tok.text
        return tok.text.lower()

    def qualified(self) -> list[str]:
        parts = [self.identifier()]
        while self.kind() == "DOT":
            self.i += 1
            parts.append(self.identifier())
        return parts

    def skip_parens(self) -> None:
        """Skip a balanced parenthesized group starting at the cursor."""
        self.expect_kind("L_PAREN", "(")
        depth = 1
        while depth:
            kind = self.take().kind
            depth += kind == "L_PAREN"
            depth -= kind == "R_PAREN"

    def skip_to_item_end(self) -> None:
        """Skip to the next comma or closing parenthesis at depth 0 (not consumed)."""
        depth = 0
        while not self.at_end():
            kind = self.kind()
            if depth == 0 and kind in ("COMMA", "R_PAREN"):
                return
            depth += kind == "L_PAREN"
            depth -= kind == "R_PAREN"
            self.i += 1

    # --- dispatch ----------------------------------------------------------------------------

    def apply(self) -> None:
        refused = refusal(self.tokens, self.text, self.first_line, self.dialect)
        if refused is not None:
            if not marked(self.text, self.since, self.tokens):
                raise DdlError(refused.what, f"{self.source}:{refused.line}")
            self.catalog.skipped[f"{self._head()} (marked derive-skip)"] += 1
            return
        handler = self._handler()
        if handler is None:
            self.catalog.skipped[self._head()] += 1
            return
        handler()

    def _head(self) -> str:
        """The statement's leading keywords (``GRANT``, ``COMMENT ON``, ``CREATE FUNCTION``)."""
        routine = routine_word(self.tokens)
        if routine is not None:
            return f"CREATE {routine}"
        words = [self.tokens[0].upper]
        second = self.tokens[1] if len(self.tokens) > 1 else None
        if second is not None and second.is_word and second.kind not in ("VAR", "IDENTIFIER"):
            words.append(second.upper)
        return " ".join(words)

    def _handler(self) -> Callable[[], None] | None:
        first = self.up()
        if first == "CREATE":
            return self._create
        if first == "ALTER" and self.up(1) == "TABLE":
            return self._alter_table
        if first == "ALTER" and self.up(1) == "TYPE":
            return self._alter_type
        if first == "DROP" and self.up(1) in ("TABLE", "TYPE", "DOMAIN", "INDEX"):
            return self._drop
        if first == "RENAME" and self.up(1) == "TABLE":
            return self._rename_tables
        if first == "USE":
            return self._use
        if first == "SET" and self.up(1) == "SEARCH_PATH":
            return self._search_path
        return None

    def _use(self) -> None:
        self.i += 1
        self.catalog.database = self.identifier()

    def _search_path(self) -> None:
        self.i += 2
        if self.kind() == "EQ" or self.up() == "TO":
            self.i += 1
        tok = self.peek()
        if tok is not None and (tok.is_word or tok.kind in STRING_KINDS):
            self.catalog.schema = tok.text if tok.kind != "VAR" else tok.text.lower()

    # --- CREATE ------------------------------------------------------------------------------

    def _create(self) -> None:
        self.i += 1
        self.accept("OR", "REPLACE")
        if self.up() in ("TEMPORARY", "TEMP"):
            self.catalog.skipped["CREATE TEMPORARY"] += 1
            return  # a temporary table is never captured
        while self.up() in ("GLOBAL", "LOCAL", "UNLOGGED"):
            self.i += 1
        if self.accept("TABLE"):
            self._create_table()
        elif self.up() in ("UNIQUE", "INDEX"):
            self._create_index()
        elif self.accept("TYPE"):
            self._create_type()
        elif self.accept("DOMAIN"):
            self._create_domain()
        else:
            self.catalog.skipped[self._head()] += 1

    def _create_table(self) -> None:
        start = self.where()
        if_not_exists = self.accept("IF", "NOT", "EXISTS")
        owner, name = self.catalog.owner_of(self.qualified())
        if (owner, name) in self.catalog.tables:
            if if_not_exists:  # the database leaves the existing table as it is
                self.catalog.skipped["CREATE TABLE IF NOT EXISTS (exists)"] += 1
                return
            raise DdlError(f"CREATE TABLE {name}: the table already exists", start)
        if self.accept("LIKE") or (self.kind() == "L_PAREN" and self.up(1) == "LIKE"):
            self._create_like(owner, name, start)
            return
        if self.kind() != "L_PAREN":
            self._table_options(name)  # CREATE TABLE ... AS SELECT is refused there
            raise self.error(f"CREATE TABLE {name}: expected its column list")
        self.i += 1
        builder = _TableBuilder(self.dialect, owner, name, start)
        while True:
            self._table_element(builder)
            if self.kind() == "COMMA":
                self.i += 1
                continue
            self.expect_kind("R_PAREN", ") or , in the column list")
            break
        self._table_options(name)
        self.catalog.tables[(owner, name)] = builder.build()

    def _create_like(self, owner: str | None, name: str, start: str) -> None:
        parens = self.kind() == "L_PAREN"
        if parens:
            self.i += 2
        other = self._existing(self.qualified(), "CREATE TABLE ... LIKE")
        if parens:
            self.skip_to_item_end()
            self.expect_kind("R_PAREN", ")")
        database, schema = _owner_fields(self.dialect, owner)
        self.catalog.tables[(owner, name)] = other.but(
            database=database, schema=schema, name=name, where=start
        )

    def _table_options(self, name: str) -> None:
        """Table options after the column list: storage options are ignored, a body is not."""
        while not self.at_end():
            word = self.up()
            if word in ("AS", "SELECT") or (word == "IGNORE" and self.up(1) == "AS"):
                raise self.error(
                    f"CREATE TABLE {name} ... AS SELECT: the columns come from a query, "
                    "which cannot be derived from DDL"
                )
            if word in ("INHERITS", "PARTITION") and self.up(1) == "OF":
                raise self.error(f"CREATE TABLE {name}: inherited columns are not supported")
            if self.kind() == "L_PAREN":
                self.skip_parens()
            else:
                self.i += 1

    def _table_element(self, builder: _TableBuilder) -> None:
        constraint = self.constraint_name()
        word = self.up()
        if (word == "PRIMARY" and self.up(1) == "KEY") or word == "UNIQUE":
            self.key_constraint(builder, constraint)
        elif word in ("KEY", "INDEX", "FULLTEXT", "SPATIAL", "FOREIGN", "CHECK", "EXCLUDE"):
            self.skip_to_item_end()
        elif word == "LIKE":
            raise self.error("LIKE inside a column list is not supported")
        else:
            builder.add_column(self.column_definition())

    def constraint_name(self) -> str | None:
        """``CONSTRAINT [name]`` before a table constraint: the name, when one is given."""
        if not self.accept("CONSTRAINT"):
            return None
        if self.up() in ("PRIMARY", "UNIQUE", "FOREIGN", "CHECK", "EXCLUDE"):
            return None
        return self.identifier()

    def key_constraint(self, builder: _TableBuilder, constraint: str | None) -> None:
        """A PRIMARY KEY or UNIQUE table constraint (after an optional CONSTRAINT name)."""
        if self.accept("PRIMARY", "KEY"):
            builder.add_key(Key("primary", self._key_columns(), constraint))
            return
        self.expect("UNIQUE")
        if self.up() in ("KEY", "INDEX"):
            self.i += 1
        name = constraint
        if self.kind() != "L_PAREN" and self.up() != "USING":
            name = self.identifier()
        columns = self._key_columns()
        builder.add_key(Key("unique", columns, name or columns[0]))

    def _key_columns(self) -> tuple[str, ...]:
        if self.accept("USING"):
            self.i += 1
        self.expect_kind("L_PAREN", "( and the key's columns")
        columns: list[str] = []
        while True:
            columns.append(self.identifier())
            if self.kind() == "L_PAREN":  # a prefix length: col(10)
                self.skip_parens()
            while self.up() in ("ASC", "DESC"):
                self.i += 1
            if self.kind() == "COMMA":
                self.i += 1
                continue
            self.expect_kind("R_PAREN", ") after the key's columns")
            break
        self.skip_to_item_end()  # index options (USING BTREE, COMMENT ...)
        return tuple(columns)

    def column_definition(self) -> _ColumnDef:
        where = self.where()
        name = self.identifier()
        try:
            written, self.i = parse_type(self.tokens, self.i, self.dialect, self.source)
        except TypeSyntaxError as err:
            raise DdlError(f"column {name}: {err.what}", err.where) from None
        col = _ColumnDef(name=name, type=self.resolve_type(normalize(written, self.dialect)))
        col.where = where
        domain = self.catalog.domains.get(col.type.name) if not col.type.array else None
        if domain is not None:
            col.type, nullable, col.default = domain[0], domain[1], domain[2]
            col.nullable = nullable
        if is_serial(written, self.dialect):
            col.nullable = False
            col.serial = True
            if self.dialect == "postgres":
                col.default = Default("expression", "nextval")  # what the server records
            else:
                col.auto_increment = True
        self._column_constraints(col)
        return col

    def resolve_type(self, sql_type: SqlType) -> SqlType:
        values = self.catalog.enums.get(sql_type.name)
        if values is not None and self.dialect == "postgres":
            return SqlType("enum", values, array=sql_type.array, written=sql_type.written)
        return sql_type

    def _column_constraints(self, col: _ColumnDef) -> None:
        while not self.at_end() and self.kind() not in ("COMMA", "R_PAREN"):
            word = self.up()
            if self.accept("NOT", "NULL"):
                col.nullable = False
            elif self.accept("NULL"):
                col.nullable = True
            elif self.accept("DEFAULT"):
                col.default = self.default_expression()
            elif self.accept("AUTO_INCREMENT"):
                col.auto_increment = True
            elif self.accept("SERIAL", "DEFAULT", "VALUE"):
                col.nullable, col.auto_increment, col.serial = False, True, True
            elif self.accept("PRIMARY", "KEY") or (word == "KEY" and self.accept("KEY")):
                col.primary = True
                col.nullable = False
            elif self.accept("UNIQUE"):
                self.accept("KEY")
                col.unique = True
            elif self.accept("COMMENT"):
                col.comment = self.expect_kind("STRING", "a comment string").text
            elif self.accept("ON", "UPDATE"):
                self.default_expression()
            elif word in ("GENERATED", "AS"):
                self._generated(col)
            elif word in ("REFERENCES", "CHECK"):
                self.i += 1
                self._skip_constraint_body()
            elif self.accept("CONSTRAINT"):
                if self.up() not in ("PRIMARY", "UNIQUE", "CHECK", "REFERENCES", "NOT", "NULL"):
                    self.identifier()
            elif word in ("COLLATE", "COLUMN_FORMAT", "STORAGE", "SRID", "COMPRESSION"):
                self.i += 2
            elif word in ("VISIBLE", "INVISIBLE"):
                self.i += 1
            elif word in ("FIRST", "AFTER"):
                return  # ALTER TABLE ... ADD/MODIFY col ... FIRST | AFTER other
            else:
                raise self.error(
                    f"column {col.name}: unexpected {word or 'token'} in its definition"
                )

    def _skip_constraint_body(self) -> None:
        """The rest of a REFERENCES or CHECK clause (parentheses, names, ON DELETE ...)."""
        while not self.at_end() and self.kind() not in ("COMMA", "R_PAREN"):
            if self.kind() == "L_PAREN":
                self.skip_parens()
                continue
            ends = ("NOT", "NULL", "DEFAULT", "PRIMARY", "UNIQUE", "COMMENT", "CHECK")
            if self.up() in ends and (self.up() != "NULL" or self.up(-1) != "SET"):
                return  # the next constraint (ON DELETE SET NULL is part of this one)
            self.i += 1

    def _generated(self, col: _ColumnDef) -> None:
        if self.accept("GENERATED", "ALWAYS", "AS", "IDENTITY") or self.accept(
            "GENERATED", "BY", "DEFAULT", "AS", "IDENTITY"
        ):
            col.nullable = False  # an identity column is NOT NULL
            if self.kind() == "L_PAREN":
                self.skip_parens()
            return
        self.accept("GENERATED", "ALWAYS")
        self.expect("AS")
        if self.kind() == "L_PAREN":
            self.skip_parens()
        while self.up() in ("VIRTUAL", "STORED", "PERSISTENT"):
            self.i += 1

    def default_expression(self) -> Default:
        start = self.i
        depth = 0
        while not self.at_end():
            kind = self.kind()
            if depth == 0 and (
                kind in ("COMMA", "R_PAREN")
                or (self.i > start and self.up() in _CONSTRAINT_WORDS and self.up() != "NULL")
            ):
                break
            if depth == 0 and self.i > start and self.up() == "NULL" and self.up(-1) == "NOT":
                break
            depth += kind == "L_PAREN"
            depth -= kind == "R_PAREN"
            self.i += 1
        if self.i > start and self.up(-1) == "NOT" and self.up() == "NULL":
            self.i -= 1
        if self.i == start:
            raise self.error("DEFAULT needs a value")
        tokens = self.tokens[start : self.i]
        written = None
        if tokens[0].start >= 0 and self.text:
            written = self.text[tokens[0].start : tokens[-1].end + 1]
        return default_from_tokens(tokens, written)

    # --- indexes, types, domains -------------------------------------------------------------

    def _create_index(self) -> None:
        unique = self.accept("UNIQUE")
        self.expect("INDEX")
        self.accept("CONCURRENTLY")
        self.accept("IF", "NOT", "EXISTS")
        name = self.identifier() if self.up() != "ON" else None
        self.expect("ON")
        self.accept("ONLY")
        parts = self.qualified()
        if not unique:
            self.catalog.skipped["CREATE INDEX"] += 1
            return
        table = self._existing(parts, "CREATE UNIQUE INDEX")
        key = Key("unique", self._key_columns(), name)
        self._check_key_columns(table, key.columns)
        self._store(parts, table.but(keys=(*table.keys, key)))

    def _create_type(self) -> None:
        name = self.qualified()[-1]
        if not self.accept("AS", "ENUM"):
            self.catalog.skipped["CREATE TYPE"] += 1
            return
        self.expect_kind("L_PAREN", "( and the enum's labels")
        labels: list[str] = []
        while self.kind() != "R_PAREN":
            labels.append(self.expect_kind("STRING", "an enum label").text)
            if self.kind() == "COMMA":
                self.i += 1
        self.catalog.enums[name] = tuple(labels)

    def _alter_type(self) -> None:
        self.i += 2
        name = self.qualified()[-1]
        if name not in self.catalog.enums or not self.accept("ADD", "VALUE"):
            self.catalog.skipped["ALTER TYPE"] += 1
            return
        self.accept("IF", "NOT", "EXISTS")
        label = self.expect_kind("STRING", "the new label").text
        labels = list(self.catalog.enums[name])
        if label in labels:
            return
        if self.up() in ("BEFORE", "AFTER"):
            before = self.take().upper == "BEFORE"
            anchor = self.expect_kind("STRING", "an existing label").text
            at = labels.index(anchor) if anchor in labels else len(labels)
            labels.insert(at if before else at + 1, label)
        else:
            labels.append(label)
        self.catalog.enums[name] = tuple(labels)
        self._refresh_enum(name)

    def _refresh_enum(self, name: str) -> None:
        """Columns of an enum type take its new label list."""
        values = self.catalog.enums[name]
        for key, table in list(self.catalog.tables.items()):
            columns = tuple(
                c.but(type=SqlType("enum", values, array=c.type.array, written=c.type.written))
                if c.type.name == "enum" and c.type.written.lower().split("[")[0] == name.lower()
                else c
                for c in table.columns
            )
            self.catalog.tables[key] = table.but(columns=columns)

    def _create_domain(self) -> None:
        name = self.qualified()[-1]
        self.accept("AS")
        written, self.i = parse_type(self.tokens, self.i, self.dialect, self.source)
        col = _ColumnDef(name=name, type=self.resolve_type(normalize(written, self.dialect)))
        while not self.at_end():
            if self.accept("NOT", "NULL"):
                col.nullable = False
            elif self.accept("DEFAULT"):
                col.default = self.default_expression()
            elif self.kind() == "L_PAREN":
                self.skip_parens()
            else:
                self.i += 1
        self.catalog.domains[name] = (col.type, col.nullable, col.default)

    # --- DROP / RENAME -----------------------------------------------------------------------

    def _drop(self) -> None:
        self.i += 1
        what = self.take().upper
        if_exists = self.accept("IF", "EXISTS")
        while not self.at_end() and self.up() not in ("CASCADE", "RESTRICT"):
            parts = self.qualified()
            if what == "TABLE":
                key = self.catalog.owner_of(parts)
                if key not in self.catalog.tables and not if_exists:
                    raise DdlError(
                        f"DROP TABLE {'.'.join(parts)}: no earlier statement creates it",
                        self.where(),
                    )
                self.catalog.tables.pop(key, None)
            elif what == "TYPE":
                self.catalog.enums.pop(parts[-1], None)
            elif what == "DOMAIN":
                self.catalog.domains.pop(parts[-1], None)
            elif what == "INDEX":
                self._drop_unique_everywhere(parts[-1])
            if self.kind() == "COMMA":
                self.i += 1
            else:
                break

    def _drop_unique_everywhere(self, index: str) -> None:
        for key, table in list(self.catalog.tables.items()):
            kept = tuple(k for k in table.keys if not (k.kind == "unique" and k.name == index))
            self.catalog.tables[key] = table.but(keys=kept)

    def _rename_tables(self) -> None:
        self.i += 2
        while True:
            old = self.qualified()
            self.expect("TO")
            self._rename(old, self.qualified())
            if self.kind() != "COMMA":
                break
            self.i += 1

    def _rename(self, old: Sequence[str], new: Sequence[str]) -> None:
        table = self._existing(old, "RENAME")
        self.catalog.tables.pop(self.catalog.owner_of(old))
        owner, name = self.catalog.owner_of(new)
        database, schema = _owner_fields(self.dialect, owner)
        self.catalog.tables[(owner, name)] = table.but(database=database, schema=schema, name=name)

    # --- ALTER TABLE -------------------------------------------------------------------------

    def _alter_table(self) -> None:
        self.i += 2
        self.accept("IF", "EXISTS")
        self.accept("ONLY")
        parts = self.qualified()
        if self.up() in ("ATTACH", "DETACH"):
            self.catalog.skipped["ALTER TABLE PARTITION"] += 1
            return
        table = self._existing(parts, "ALTER TABLE")
        editor = _TableEditor(table, self)
        while not self.at_end():
            editor.action()
            if self.kind() == "COMMA":
                self.i += 1
            elif not self.at_end():
                raise self.error("expected , between ALTER TABLE actions")
        self._store(parts, editor.table, editor.renamed_to)

    def _existing(self, parts: Sequence[str], what: str) -> Table:
        found = self.catalog.tables.get(self.catalog.owner_of(parts))
        if found is None:
            raise DdlError(
                f"{what} {'.'.join(parts)}: no earlier statement creates that table "
                "(derive reads CREATE TABLE statements in file and migration order)",
                self.where(),
            )
        return found

    def _store(
        self, parts: Sequence[str], table: Table, renamed: Sequence[str] | None = None
    ) -> None:
        key = self.catalog.owner_of(parts)
        if renamed is None:
            self.catalog.tables[key] = table
            return
        self.catalog.tables[key] = table
        self._rename(parts, renamed)

    def _check_key_columns(self, table: Table, columns: Sequence[str]) -> None:
        for name in columns:
            if table.column(name) is None:
                raise DdlError(f"key column {name} is not a column of {table.name}", self.where())


def _owner_fields(dialect: Dialect, owner: str | None) -> tuple[str | None, str | None]:
    """``(database, schema)`` of a table owned by ``owner``."""
    return (None, owner) if dialect == "postgres" else (owner, None)


@dataclass(slots=True)
class _ColumnDef:
    """A column while its definition is read (the constraints may add keys)."""

    name: str
    type: SqlType
    nullable: bool = True
    default: Default | None = None
    auto_increment: bool = False
    comment: str | None = None
    primary: bool = False
    unique: bool = False
    serial: bool = False
    where: str = ""

    def column(self) -> Column:
        return Column(
            name=self.name,
            type=self.type,
            nullable=self.nullable,
            default=self.default,
            auto_increment=self.auto_increment,
            comment=self.comment,
            where=self.where,
        )


class _TableBuilder:
    def __init__(self, dialect: Dialect, owner: str | None, name: str, where: str) -> None:
        self.dialect = dialect
        self.owner = owner
        self.name = name
        self.where = where
        self.columns: list[Column] = []
        self.keys: list[Key] = []

    def add_column(self, col: _ColumnDef) -> None:
        if any(c.name.lower() == col.name.lower() for c in self.columns):
            raise DdlError(f"duplicate column {col.name} in {self.name}", col.where)
        self.columns.append(col.column())
        for key in _column_keys(self.dialect, col):
            self.add_key(key)

    def add_key(self, key: Key) -> None:
        if key.kind == "primary":
            key = Key("primary", key.columns, key.name)
            self.keys = [k for k in self.keys if k.kind != "primary"]
            self.keys.insert(0, key)
            self.columns = [
                c.but(nullable=False) if c.name in key.columns else c for c in self.columns
            ]
        else:
            self.keys.append(key)

    def build(self) -> Table:
        declared = {c.name.lower(): c.name for c in self.columns}
        keys = []
        for key in self.keys:
            for name in key.columns:
                if name.lower() not in declared:
                    raise DdlError(f"key column {name} is not a column of {self.name}", self.where)
            # MySQL compares column names case-insensitively: keys name columns as declared
            keys.append(Key(key.kind, tuple(declared[n.lower()] for n in key.columns), key.name))
        self.keys = keys
        # a primary key declared after its columns makes them NOT NULL
        primary = {n.lower() for k in self.keys if k.kind == "primary" for n in k.columns}
        columns = tuple(
            c.but(nullable=False) if c.name.lower() in primary else c for c in self.columns
        )
        database, schema = _owner_fields(self.dialect, self.owner)
        return Table(
            dialect=self.dialect,
            database=database,
            schema=schema,
            name=self.name,
            columns=columns,
            keys=tuple(self.keys),
            where=self.where,
        )


def _column_keys(dialect: Dialect, col: _ColumnDef) -> list[Key]:
    keys = []
    if col.primary:
        keys.append(Key("primary", (col.name,), None))
    if col.unique or (col.serial and dialect != "postgres"):
        keys.append(Key("unique", (col.name,), col.name))
    return keys


class _TableEditor:
    """ALTER TABLE actions applied one by one to a table."""

    def __init__(self, table: Table, stmt: _Statement) -> None:
        self.table = table
        self.s = stmt
        self.renamed_to: list[str] | None = None

    def action(self) -> None:
        s = self.s
        word = s.up()
        if word == "ADD":
            s.i += 1
            self._add()
        elif word == "DROP":
            s.i += 1
            self._drop()
        elif word in ("MODIFY", "CHANGE"):
            s.i += 1
            s.accept("COLUMN")
            old = s.identifier() if word == "CHANGE" else None
            definition = s.column_definition()
            self._replace(old or definition.name, definition)
            self._position(definition.name)
        elif word == "RENAME":
            s.i += 1
            self._rename()
        elif word == "ALTER":
            s.i += 1
            s.accept("COLUMN")
            self._alter_column(s.identifier())
        elif word == "SET" and s.up(1) == "SCHEMA":
            s.i += 2
            self.renamed_to = [s.identifier(), self.table.name]
        else:
            self._ignored_option()

    def _ignored_option(self) -> None:
        """Table options and maintenance (ENGINE=, CONVERT TO, OWNER TO, REPLICA IDENTITY ...)."""
        s = self.s
        known = {
            "ENGINE",
            "DEFAULT",
            "CHARACTER",
            "CHARSET",
            "COLLATE",
            "COMMENT",
            "AUTO_INCREMENT",
            "ALGORITHM",
            "LOCK",
            "FORCE",
            "CONVERT",
            "OWNER",
            "REPLICA",
            "ENABLE",
            "DISABLE",
            "ROW_FORMAT",
            "KEY_BLOCK_SIZE",
            "STATS_PERSISTENT",
            "CLUSTER",
            "SET",
            "RESET",
            "VALIDATE",
            "INHERIT",
            "NO",
            "OF",
            "NOT",
            "PARTITION",
            "REMOVE",
            "COALESCE",
            "TRUNCATE",
            "ANALYZE",
            "CHECK",
            "OPTIMIZE",
            "REBUILD",
            "REPAIR",
            "DISCARD",
            "IMPORT",
            "EXCHANGE",
            "REORGANIZE",
            "ORDER",
            "WITH",
            "WITHOUT",
        }
        if s.up() not in known:
            raise s.error(f"ALTER TABLE {self.table.name}: unsupported action")
        s.skip_to_item_end()
        if s.kind() == "R_PAREN":
            raise s.error("unbalanced parenthesis")

    # --- ADD ---------------------------------------------------------------------------------

    def _add(self) -> None:
        s = self.s
        constraint = s.constraint_name()
        word = s.up()
        if word in ("PRIMARY", "UNIQUE"):
            builder = self._builder()
            s.key_constraint(builder, constraint)
            self.table = builder.build()
        elif (
            word in ("INDEX", "KEY", "FULLTEXT", "SPATIAL", "FOREIGN", "CHECK", "EXCLUDE")
            or word == "PARTITION"
        ):
            s.skip_to_item_end()
        else:
            s.accept("COLUMN")
            s.accept("IF", "NOT", "EXISTS")
            if s.kind() == "L_PAREN":
                s.i += 1
                while True:
                    self._add_column(s.column_definition())
                    if s.kind() == "COMMA":
                        s.i += 1
                        continue
                    s.expect_kind("R_PAREN", ")")
                    break
                return
            definition = s.column_definition()
            self._add_column(definition)
            self._position(definition.name)

    def _builder(self) -> _TableBuilder:
        t = self.table
        owner = t.schema if t.dialect == "postgres" else t.database
        builder = _TableBuilder(t.dialect, owner, t.name, t.where)
        builder.columns = list(t.columns)
        builder.keys = list(t.keys)
        return builder

    def _add_column(self, definition: _ColumnDef) -> None:
        builder = self._builder()
        builder.add_column(definition)
        self.table = builder.build()

    def _position(self, name: str) -> None:
        s = self.s
        if s.accept("FIRST"):
            self._move(name, 0)
        elif s.accept("AFTER"):
            anchor = s.identifier()
            names = [c.name.lower() for c in self.table.columns if c.name.lower() != name.lower()]
            if anchor.lower() not in names:
                raise DdlError(f"AFTER {anchor}: no such column in {self.table.name}", s.where())
            self._move(name, names.index(anchor.lower()) + 1)

    def _move(self, name: str, index: int) -> None:
        cols = list(self.table.columns)
        moving = next(c for c in cols if c.name.lower() == name.lower())
        cols.remove(moving)
        cols.insert(index, moving)
        self.table = self.table.but(columns=tuple(cols))

    # --- DROP --------------------------------------------------------------------------------

    def _drop(self) -> None:
        s = self.s
        if s.accept("PRIMARY", "KEY"):
            self.table = self.table.but(
                keys=tuple(k for k in self.table.keys if k.kind != "primary")
            )
        elif s.up() in ("INDEX", "KEY", "CONSTRAINT"):
            s.i += 1
            s.accept("IF", "EXISTS")
            name = s.identifier()
            self.table = self.table.but(keys=tuple(k for k in self.table.keys if k.name != name))
            if s.up() in ("CASCADE", "RESTRICT"):
                s.i += 1
        elif s.up() in ("FOREIGN", "CHECK") or s.up() == "PARTITION":
            s.skip_to_item_end()
        else:
            s.accept("COLUMN")
            if_exists = s.accept("IF", "EXISTS")
            name = s.identifier()
            if s.up() in ("CASCADE", "RESTRICT"):
                s.i += 1
            self._drop_column(name, if_exists)

    def _drop_column(self, name: str, if_exists: bool) -> None:
        found = self.table.column(name)
        if found is None:
            if if_exists:
                return
            raise DdlError(
                f"DROP COLUMN {name}: no such column in {self.table.name}", self.s.where()
            )
        columns = tuple(c for c in self.table.columns if c is not found)
        keys = []
        for key in self.table.keys:
            kept = tuple(k for k in key.columns if k.lower() != found.name.lower())
            if kept:  # MySQL drops the column from the index, and the index when it is empty
                keys.append(Key(key.kind, kept, key.name))
        self.table = self.table.but(columns=columns, keys=tuple(keys))

    # --- MODIFY / CHANGE / RENAME / ALTER COLUMN ---------------------------------------------

    def _replace(self, old: str, definition: _ColumnDef) -> None:
        found = self.table.column(old)
        if found is None:
            raise DdlError(f"column {old}: no such column in {self.table.name}", self.s.where())
        new = definition.column()
        columns = tuple(new if c is found else c for c in self.table.columns)
        keys = tuple(
            Key(k.kind, tuple(new.name if c == found.name else c for c in k.columns), k.name)
            for k in self.table.keys
        )
        builder = self._builder()
        builder.columns, builder.keys = list(columns), list(keys)
        for key in _column_keys(self.table.dialect, definition):
            builder.add_key(key)
        self.table = builder.build()

    def _rename(self) -> None:
        s = self.s
        if s.accept("COLUMN") or (s.up(1) == "TO" and s.up() not in ("TO", "AS")):
            old = s.identifier()
            s.expect("TO")
            new = s.identifier()
            found = self.table.column(old)
            if found is None:
                raise DdlError(f"RENAME COLUMN {old}: no such column", s.where())
            self._replace(
                old,
                _ColumnDef(
                    new,
                    found.type,
                    found.nullable,
                    found.default,
                    found.auto_increment,
                    found.comment,
                ),
            )
        elif s.up() in ("INDEX", "KEY", "CONSTRAINT"):
            s.i += 1
            old = s.identifier()
            s.expect("TO")
            new = s.identifier()
            self.table = self.table.but(
                keys=tuple(
                    Key(k.kind, k.columns, new if k.name == old else k.name)
                    for k in self.table.keys
                )
            )
        else:
            if s.up() in ("TO", "AS"):
                s.i += 1
            self.renamed_to = s.qualified()

    def _alter_column(self, name: str) -> None:
        s = self.s
        found = self.table.column(name)
        if found is None:
            raise DdlError(f"ALTER COLUMN {name}: no such column in {self.table.name}", s.where())
        changed: Column
        if s.accept("SET", "DEFAULT"):
            changed = found.but(default=s.default_expression())
        elif s.accept("DROP", "DEFAULT"):
            changed = found.but(default=None)
        elif s.accept("SET", "NOT", "NULL"):
            changed = found.but(nullable=False)
        elif s.accept("DROP", "NOT", "NULL"):
            changed = found.but(nullable=True)
        elif s.accept("SET", "DATA", "TYPE") or s.accept("TYPE"):
            written, s.i = parse_type(s.tokens, s.i, s.dialect, s.source)
            changed = found.but(type=s.resolve_type(normalize(written, s.dialect)))
            s.skip_to_item_end()  # USING expr, COLLATE
        elif s.accept("ADD", "GENERATED"):
            s.skip_to_item_end()
            changed = found.but(nullable=False)
        elif s.up() in ("SET", "DROP", "RESET"):
            s.skip_to_item_end()  # statistics, storage, visibility, identity options
            changed = found
        else:
            raise s.error(f"ALTER COLUMN {name}: unsupported change")
        self.table = self.table.but(
            columns=tuple(changed if c is found else c for c in self.table.columns)
        )


# --- defaults ---------------------------------------------------------------------------------


def default_from_tokens(tokens: Sequence[Token], written: str | None = None) -> Default:
    """A ``DEFAULT`` expression as a literal, a function call or an expression (PostgreSQL
    casts are dropped); ``written`` is its text as written (default: the tokens joined)."""
    shown = " ".join(written.split()) if written else " ".join(t.text for t in tokens)
    return replace(_default_of(tokens), written=shown)


#: Calls that are not a function a connector could not evaluate.
_NOT_FUNCTIONS: Final = frozenset({"CAST", "ARRAY", "INTERVAL"})


def _default_of(tokens: Sequence[Token]) -> Default:
    toks = list(tokens)
    while len(toks) >= 2 and toks[0].kind == "L_PAREN" and toks[-1].kind == "R_PAREN":
        toks = toks[1:-1]
    for i, tok in enumerate(toks):  # 'x'::character varying, 0::numeric
        if tok.kind == "DCOLON":
            toks = toks[:i]
            break
    while len(toks) >= 2 and toks[0].kind == "L_PAREN" and toks[-1].kind == "R_PAREN":
        toks = toks[1:-1]
    if len(toks) == 1:
        tok = toks[0]
        if tok.kind in STRING_KINDS:
            return Default("string", tok.text)
        if tok.kind == "NUMBER":
            return Default("number", tok.text)
        if tok.upper in ("TRUE", "FALSE"):
            return Default("boolean", tok.upper.lower())
        if tok.upper == "NULL":
            return Default("null")
        if tok.kind == "BIT_STRING":
            return Default("bits", tok.text)
        if tok.kind == "HEX_STRING":
            return Default("hex", tok.text)
    if len(toks) == 2 and toks[0].kind in ("DASH", "PLUS") and toks[1].kind == "NUMBER":
        return Default("number", ("-" if toks[0].kind == "DASH" else "") + toks[1].text)
    if toks and toks[0].upper in _NOW_WORDS:
        return Default("expression", "CURRENT_TIMESTAMP")
    if toks and toks[0].upper == "NEXTVAL":
        return Default("expression", "nextval")
    call = _called(toks)
    if call is not None:
        return Default("function", call)
    return Default("expression", " ".join(t.text for t in tokens))


def _called(toks: Sequence[Token]) -> str | None:
    """The (lower-case, possibly qualified) name of a function call the tokens begin with."""
    name: list[str] = []
    i = 0
    while i < len(toks) and toks[i].is_word:
        name.append(toks[i].text)
        if i + 1 < len(toks) and toks[i + 1].kind == "DOT":
            i += 2
            continue
        break
    opens = i + 1 < len(toks) and toks[i + 1].kind == "L_PAREN"
    if not name or not opens or name[0].upper() in _NOT_FUNCTIONS:
        return None
    return ".".join(name).lower()


def parse_default_text(text: str, dialect: Dialect, where: str = "default") -> Default:
    """A default as a catalog reports it (``'abc'``, ``0``, ``nextval('s'::regclass)`` ...)."""
    return default_from_tokens(tokenize(text, dialect, where), text)
