"""SQL column types as MySQL, MariaDB and PostgreSQL report them: one parser, the alias tables.

A column type reaches this project as text in three places: a ``CREATE TABLE`` in a migration,
a live database's catalog (MySQL's ``information_schema.COLUMNS.COLUMN_TYPE``, PostgreSQL's
``format_type``), and Canal's ``mysqlType`` field. :func:`parse_type` reads all of them with the
same grammar (over sqlglot's tokens, which know each dialect's quoting and comments) and
:func:`normalize` applies what the database itself does to a declared type before it reports it
(``BOOL`` is stored as ``tinyint(1)``, ``SERIAL`` as ``bigint unsigned``, ``FLOAT(25)`` as
``double``, ``DECIMAL(8)`` as ``decimal(8,0)``, ``int4`` is ``integer`` ...). The alias tables are
data: add a spelling there, never a branch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from contracts.errors import InputError

Dialect = Literal["mysql", "mariadb", "postgres"]
DIALECTS: Final[tuple[Dialect, ...]] = ("mysql", "mariadb", "postgres")

#: sqlglot's name for each dialect's tokenizer.
_SQLGLOT_DIALECT: Final[Mapping[Dialect, str]] = {
    "mysql": "mysql",
    "mariadb": "mysql",
    "postgres": "postgres",
}


@dataclass(frozen=True, slots=True)
class Token:
    """One SQL token: its sqlglot kind (``VAR``, ``STRING``, ``L_PAREN`` ...), text and line;
    ``start``/``end`` locate it in the text given to :func:`tokenize` (-1: not known)."""

    kind: str
    text: str
    line: int
    start: int = field(default=-1, compare=False)
    end: int = field(default=-1, compare=False)

    @property
    def upper(self) -> str:
        return self.text.upper()

    @property
    def is_word(self) -> bool:
        return self.kind not in _NOT_WORDS


#: Token kinds that are never part of a name or a keyword.
_NOT_WORDS: Final = frozenset(
    {
        "STRING",
        "NATIONAL_STRING",
        "BYTE_STRING",
        "HEX_STRING",
        "BIT_STRING",
        "HEREDOC_STRING",
        "RAW_STRING",
        "NUMBER",
        "L_PAREN",
        "R_PAREN",
        "L_BRACKET",
        "R_BRACKET",
        "COMMA",
        "SEMICOLON",
        "DOT",
        "EQ",
        "DCOLON",
        "PLUS",
        "DASH",
        "STAR",
        "SLASH",
        "PARAMETER",
        "COLON",
    }
)

#: Statements sqlglot's tokenizer returns as a keyword plus the raw rest of the statement.
_COMMANDS: Final = frozenset({"RENAME"})

#: String-literal token kinds.
STRING_KINDS: Final = frozenset(
    {"STRING", "NATIONAL_STRING", "BYTE_STRING", "HEREDOC_STRING", "RAW_STRING"}
)


def tokenize(
    text: str, dialect: Dialect, source: str = "sql", first_line: int = 1, offset: int = 0
) -> list[Token]:
    """The tokens of SQL ``text`` (comments dropped); a lexical error names ``source:line``.

    A token's ``start``/``end`` are character offsets in ``text``, plus ``offset``."""
    from sqlglot.dialects.dialect import Dialect as SqlglotDialect
    from sqlglot.errors import TokenError

    tokenizer = SqlglotDialect.get_or_raise(_SQLGLOT_DIALECT[dialect])
    try:
        raw = tokenizer.tokenize(text)
    except TokenError as err:
        line = _error_line(str(err))
        where = f"{source}:{first_line + line - 1}" if line else source
        raise InputError(f"cannot read the SQL: {str(err).splitlines()[0]}", where) from None
    out: list[Token] = []
    for t in raw:
        kind, line = t.token_type.name, first_line + t.line - 1
        if kind == "STRING" and out and out[-1].kind in _COMMANDS:
            # sqlglot keeps the rest of a command statement (RENAME TABLE a TO b) as one
            # string: read it as the tokens it is
            out.extend(tokenize(t.text, dialect, source, out[-1].line, offset + t.start))
        elif kind not in _NOT_WORDS and kind != "IDENTIFIER" and " " in t.text.strip():
            # sqlglot merges some phrases (PRIMARY KEY, DOUBLE PRECISION): one token per word
            start, end = offset + t.start, offset + t.end
            out.extend(Token("VAR", word, line, start, end) for word in t.text.split())
        else:
            out.append(Token(kind, t.text, line, offset + t.start, offset + t.end))
    return out


def _error_line(message: str) -> int | None:
    marker = "Line "
    at = message.find(marker)
    if at < 0:
        return None
    digits = ""
    for ch in message[at + len(marker) :]:
        if not ch.isdigit():
            break
        digits += ch
    return int(digits) if digits else None


# --- the type model ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SqlType:
    """A column type after the database's own normalization.

    ``name`` is the canonical lower-case type name (``int``, ``decimal``, ``character varying``,
    ``timestamptz``, an enum type's name ...); ``args`` the numbers in parentheses (length,
    precision, scale) or, for ``enum``/``set``, the allowed values; ``array`` the number of
    PostgreSQL array dimensions. ``written`` keeps the declaration as written (Canal spells
    ``mysqlType`` from it); it takes no part in equality.
    """

    name: str
    args: tuple[str, ...] = ()
    unsigned: bool = False
    zerofill: bool = False
    array: int = 0
    written: str = field(default="", compare=False)

    def number(self, index: int) -> int | None:
        """Argument ``index`` as an integer (None when absent or not a number)."""
        if index < len(self.args) and self.args[index].lstrip("-").isdigit():
            return int(self.args[index])
        return None

    @property
    def length(self) -> int | None:
        """The first argument: a length, a precision or a fractional-seconds precision."""
        return self.number(0)

    @property
    def scale(self) -> int | None:
        return self.number(1)

    def element(self) -> SqlType:
        """The element type of an array type (itself when not an array)."""
        return SqlType(self.name, self.args, self.unsigned, self.zerofill, 0, self.written)

    def spelled(self) -> str:
        """The canonical text: ``decimal(8,3) unsigned``, ``enum('a','b')``, ``integer[]``."""
        text = self.name
        if self.args:
            if self.name in ("enum", "set"):
                text += "(" + ",".join(_quote(a) for a in self.args) + ")"
            else:
                text += "(" + ",".join(self.args) + ")"
        if self.unsigned:
            text += " unsigned"
        if self.zerofill:
            text += " zerofill"
        return text + "[]" * self.array


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


@dataclass(frozen=True, slots=True)
class WrittenType:
    """A type as declared, before normalization: its words, arguments and modifiers."""

    words: tuple[str, ...]
    args: tuple[str, ...]
    modifiers: tuple[str, ...]
    array: int
    quoted_args: bool

    @property
    def base(self) -> str:
        return " ".join(w.lower() for w in self.words)

    def text(self) -> str:
        """The declaration re-spelled: words upper-case as written, modifiers lower-case."""
        out = " ".join(self.words)
        if self.args:
            shown = [_quote(a) for a in self.args] if self.quoted_args else list(self.args)
            out += "(" + ",".join(shown) + ")"
        for modifier in self.modifiers:
            out += " " + modifier.lower()
        return out + "[]" * self.array


# --- parsing ----------------------------------------------------------------------------------

#: Words that begin a column's constraints (so they end its type, and a DEFAULT expression).
CONSTRAINT_WORDS: Final = frozenset(
    {
        "NOT",
        "NULL",
        "DEFAULT",
        "AUTO_INCREMENT",
        "PRIMARY",
        "KEY",
        "UNIQUE",
        "COMMENT",
        "ON",
        "GENERATED",
        "AS",
        "REFERENCES",
        "CHECK",
        "CONSTRAINT",
        "COLLATE",
        "VISIBLE",
        "INVISIBLE",
        "COLUMN_FORMAT",
        "STORAGE",
        "SRID",
        "FIRST",
        "AFTER",
        "ENGINE_ATTRIBUTE",
        "SECONDARY_ENGINE_ATTRIBUTE",
        "COMPRESSION",
        "PERSISTENT",
        "VIRTUAL",
        "STORED",
    }
)
#: Modifiers that may follow a type's name or arguments.
_MODIFIERS: Final = frozenset({"UNSIGNED", "SIGNED", "ZEROFILL"})
#: MySQL string-type attributes that say nothing about the type (character set, collation).
_CHARSET_WORDS: Final = frozenset({"CHARACTER", "CHARSET", "CHAR"})
_ATTRIBUTE_WORDS: Final = frozenset({"BINARY", "ASCII", "UNICODE", "BYTE"})


class TypeSyntaxError(InputError):
    """A column type that cannot be read."""


def parse_type(
    tokens: Sequence[Token], pos: int, dialect: Dialect, where: str = "sql"
) -> tuple[WrittenType, int]:
    """Read one column type starting at ``tokens[pos]``; returns it and the position after it."""
    words: list[str] = []
    args: list[str] = []
    modifiers: list[str] = []
    quoted = False
    array = 0
    i = pos
    n = len(tokens)
    while i < n:
        tok = tokens[i]
        up = tok.upper
        if tok.kind == "L_PAREN" and words and not args:
            args, quoted, i = _type_args(tokens, i, where)
        elif tok.kind == "L_BRACKET":
            i = _skip_brackets(tokens, i, where)
            array += 1
        elif not tok.is_word or up in CONSTRAINT_WORDS:
            break
        elif up == "ARRAY" and words:
            array += 1
            i += 1
        elif up in ("WITH", "WITHOUT") and _upper_at(tokens, i + 1, i + 2) == "TIME ZONE":
            modifiers.append(f"{tok.text} time zone")
            i += 3
        elif up == "CHARSET" or (
            words and up in _CHARSET_WORDS and _upper_at(tokens, i + 1) == "SET"
        ):
            i = _skip_charset(tokens, i)
        elif words and up in _ATTRIBUTE_WORDS and dialect != "postgres":
            i += 1
        elif up in _MODIFIERS:
            modifiers.append(tok.text)
            i += 1
        elif args or (words and not _continues(words, tok.text)):
            break  # a word that is not part of the type: the constraints begin
        else:
            words.extend(tok.text.split())
            i += 1
    if not words:
        shown = tokens[pos].text if pos < n else "the end of the statement"
        line = tokens[pos].line if pos < n else (tokens[-1].line if tokens else 1)
        raise TypeSyntaxError(f"expected a column type, found {shown!r}", f"{where}:{line}")
    return WrittenType(tuple(words), tuple(args), tuple(modifiers), array, quoted), i


def _continues(words: Sequence[str], word: str) -> bool:
    """Whether ``word`` continues a multi-word type name (``DOUBLE PRECISION``)."""
    phrase = " ".join([*words, *word.split()]).lower()
    return any(name == phrase or name.startswith(phrase + " ") for name in _MULTI_WORD)


def _upper_at(tokens: Sequence[Token], *positions: int) -> str:
    return " ".join(tokens[p].upper for p in positions if p < len(tokens))


def _skip_charset(tokens: Sequence[Token], i: int) -> int:
    i += 2 if tokens[i].upper != "CHARSET" else 1
    return i + 1 if i < len(tokens) else i


def _skip_brackets(tokens: Sequence[Token], i: int, where: str) -> int:
    depth = 0
    while i < len(tokens):
        kind = tokens[i].kind
        depth += kind == "L_BRACKET"
        depth -= kind == "R_BRACKET"
        i += 1
        if depth == 0:
            return i
    raise TypeSyntaxError("an array bracket is not closed", f"{where}:{tokens[-1].line}")


def _type_args(tokens: Sequence[Token], i: int, where: str) -> tuple[list[str], bool, int]:
    """``(10, 2)`` or ``('a', 'b')`` (or PostGIS's ``(POINT, 4326)``) → texts, quoted?, next."""
    args: list[str] = []
    quoted = False
    i += 1
    current: list[str] = []
    while i < len(tokens):
        tok = tokens[i]
        if tok.kind == "R_PAREN":
            if current:
                args.append("".join(current))
            return args, quoted, i + 1
        if tok.kind == "COMMA":
            args.append("".join(current))
            current = []
        elif tok.kind in STRING_KINDS:
            quoted = True
            current.append(tok.text)
        else:
            current.append(tok.text)
        i += 1
    raise TypeSyntaxError("a type's parenthesis is not closed", f"{where}:{tokens[-1].line}")


def parse_type_text(text: str, dialect: Dialect, where: str = "type") -> WrittenType:
    """A type given alone as text (a catalog's ``COLUMN_TYPE``, Canal's ``mysqlType``)."""
    tokens = tokenize(text, dialect, where)
    written, end = parse_type(tokens, 0, dialect, where)
    if end != len(tokens):
        raise TypeSyntaxError(f"unexpected {tokens[end].text!r} after the type {text!r}", where)
    return written


# --- normalization (what the database stores for a declared type) ------------------------------

#: MySQL/MariaDB spellings → the name the server reports (``SHOW CREATE TABLE``, COLUMN_TYPE).
#: Source: MySQL 8.0 Reference Manual, "Using Data Types from Other Database Engines" and the
#: numeric/string type pages; the same synonyms Debezium's MySQL DDL grammar accepts.
MYSQL_TYPE_ALIASES: Final[Mapping[str, str]] = {
    "integer": "int",
    "int1": "tinyint",
    "int2": "smallint",
    "int3": "mediumint",
    "middleint": "mediumint",
    "int4": "int",
    "int8": "bigint",
    "bool": "tinyint",
    "boolean": "tinyint",
    "dec": "decimal",
    "numeric": "decimal",
    "fixed": "decimal",
    "real": "double",
    "double precision": "double",
    "float4": "float",
    "float8": "double",
    "character": "char",
    "nchar": "char",
    "national char": "char",
    "national character": "char",
    "character varying": "varchar",
    "char varying": "varchar",
    "varcharacter": "varchar",
    "nvarchar": "varchar",
    "national varchar": "varchar",
    "national character varying": "varchar",
    "nchar varchar": "varchar",
    "nchar varying": "varchar",
    "long varbinary": "mediumblob",
    "long varchar": "mediumtext",
    "long": "mediumtext",
    "geomcollection": "geometrycollection",
    "serial": "bigint",
}
#: Aliases that also fix the arguments (``BOOL`` is ``tinyint(1)``).
_MYSQL_FIXED_ARGS: Final[Mapping[str, tuple[str, ...]]] = {"bool": ("1",), "boolean": ("1",)}
#: Aliases that imply UNSIGNED.
_MYSQL_UNSIGNED: Final = frozenset({"serial"})
#: MariaDB stores JSON as LONGTEXT (with a json_valid check): a MariaDB catalog reports longtext.
MARIADB_TYPE_ALIASES: Final[Mapping[str, str]] = {**MYSQL_TYPE_ALIASES, "json": "longtext"}

#: PostgreSQL spellings → the canonical names used here (``format_type`` output, shortened for
#: the ``with time zone`` types).
POSTGRES_TYPE_ALIASES: Final[Mapping[str, str]] = {
    "int": "integer",
    "int4": "integer",
    "serial": "integer",
    "serial4": "integer",
    "int2": "smallint",
    "smallserial": "smallint",
    "serial2": "smallint",
    "int8": "bigint",
    "bigserial": "bigint",
    "serial8": "bigint",
    "float4": "real",
    "float8": "double precision",
    "decimal": "numeric",
    "bool": "boolean",
    "varchar": "character varying",
    "char": "character",
    "bpchar": "character",
    "varbit": "bit varying",
    "timestamp without time zone": "timestamp",
    "timestamp with time zone": "timestamptz",
    "time without time zone": "time",
    "time with time zone": "timetz",
}
#: PostgreSQL serial types: ``NOT NULL DEFAULT nextval(...)`` on an integer column.
POSTGRES_SERIALS: Final = frozenset(
    {"serial", "serial2", "serial4", "serial8", "smallserial", "bigserial"}
)


_INTERVAL_FIELDS: Final = (
    "year", "month", "day", "hour", "minute", "second", "year to month", "day to hour",
    "day to minute", "day to second", "hour to minute", "hour to second", "minute to second",
)  # fmt: skip
#: Type names of more than one word (a word after a one-word type begins the constraints).
_MULTI_WORD: Final = frozenset(
    [n for n in (*MYSQL_TYPE_ALIASES, *POSTGRES_TYPE_ALIASES) if " " in n]
    + ["double precision", "character varying", "bit varying", "national character varying"]
    + [f"interval {f}" for f in _INTERVAL_FIELDS]
)


def is_serial(written: WrittenType, dialect: Dialect) -> bool:
    """Whether the declared type is a ``SERIAL`` shorthand (implies NOT NULL and more)."""
    if dialect == "postgres":
        return written.base in POSTGRES_SERIALS and not written.array
    return written.base == "serial"


def normalize(written: WrittenType, dialect: Dialect) -> SqlType:
    """The type the database reports for a declared one."""
    if dialect == "postgres":
        return _normalize_postgres(written)
    return _normalize_mysql(written, dialect)


def _normalize_mysql(written: WrittenType, dialect: Dialect) -> SqlType:
    base = written.base
    aliases = MARIADB_TYPE_ALIASES if dialect == "mariadb" else MYSQL_TYPE_ALIASES
    name = aliases.get(base, base)
    args = _MYSQL_FIXED_ARGS.get(base, written.args)
    mods = {m.upper() for m in written.modifiers}
    unsigned = "UNSIGNED" in mods or "ZEROFILL" in mods or base in _MYSQL_UNSIGNED
    if name == "float" and len(args) == 1:
        # FLOAT(p) only picks the storage size: p <= 24 is FLOAT, 25..53 is DOUBLE (no M,D kept)
        precision = int(args[0]) if args[0].isdigit() else 0
        name, args = ("double", ()) if precision > 24 else ("float", ())
    elif name == "decimal":
        args = _decimal_args(args, default_precision="10")
    elif name in ("bit", "char", "binary") and not args:
        args = ("1",)
    return SqlType(
        name=name,
        args=tuple(args),
        unsigned=unsigned,
        zerofill="ZEROFILL" in mods,
        written=written.text(),
    )


def _decimal_args(args: Sequence[str], default_precision: str | None) -> tuple[str, ...]:
    if not args:
        return (default_precision, "0") if default_precision is not None else ()
    if len(args) == 1:
        return (args[0], "0")
    return tuple(args)


def _normalize_postgres(written: WrittenType) -> SqlType:
    base = written.base
    zone = [m.lower() for m in written.modifiers if m.lower().endswith("time zone")]
    if zone and base in ("timestamp", "time"):
        base = f"{base} {zone[-1]}"
    if base.startswith("interval"):
        base = "interval"  # interval fields (YEAR TO MONTH ...) do not change the type
    name = POSTGRES_TYPE_ALIASES.get(base, base)
    args = written.args
    if base == "float":
        # float(p): p <= 24 is real, otherwise (and without p) double precision
        precision = int(args[0]) if args and args[0].isdigit() else 53
        name, args = ("real", ()) if precision <= 24 else ("double precision", ())
    elif name == "numeric":
        args = _decimal_args(args, default_precision=None)
    elif name in ("bit", "character") and not args:
        args = ("1",)
    return SqlType(name=name, args=tuple(args), array=written.array, written=written.text())
