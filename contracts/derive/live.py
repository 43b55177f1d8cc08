"""Tables read from a live database: MySQL/MariaDB ``information_schema``, PostgreSQL ``pg_catalog``.

The catalog's own spelling of each type (``COLUMN_TYPE``; ``format_type``) and default
(``COLUMN_DEFAULT``; ``pg_get_expr``) go through the same parsers as DDL
(:mod:`contracts.sqltypes`, :func:`contracts.derive.ddl.parse_default_text`), so a table read
here equals the table its DDL defines. The drivers are the light ones in the ``[db]`` extra
(``psycopg`` binary, pure-Python ``PyMySQL``), imported only here.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Final
from urllib.parse import parse_qs, unquote, urlsplit

from contracts.derive.ddl import parse_default_text
from contracts.derive.model import Column, Default, Key, Table
from contracts.errors import InputError, reason_of
from contracts.sqltypes import Dialect, SqlType, normalize, parse_type_text

_MISSING_DRIVER: Final = (
    "install cdc-contracts[db] (pip install 'cdc-contracts[db]') to read live databases"
)
_SCHEMES: Final = {
    "postgresql": "postgres",
    "postgres": "postgres",
    "mysql": "mysql",
    "mariadb": "mysql",
}
_SYSTEM_DATABASES: Final = ("mysql", "information_schema", "performance_schema", "sys")


def redacted(url: str) -> str:
    """The URL without its password (for messages and reports)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return parts._replace(netloc=netloc).geturl()


def url_dialect(url: str) -> str:
    """``postgres`` or ``mysql`` from a database URL's scheme."""
    scheme = urlsplit(url).scheme.split("+")[0].lower()
    found = _SCHEMES.get(scheme)
    if found is None:
        raise InputError(
            f"unsupported database URL scheme {scheme!r} (use postgresql:// or mysql://)",
            redacted(url),
        )
    return found


def read_tables(url: str) -> tuple[Dialect, str | None, list[Table]]:
    """``(dialect, database, tables)`` of the database at ``url`` (MariaDB is detected)."""
    if url_dialect(url) == "postgres":
        return _read_postgres(url)
    return _read_mysql(url)


# --- MySQL / MariaDB --------------------------------------------------------------------------


def _mysql_args(url: str) -> dict[str, Any]:
    parts = urlsplit(url)
    query = parse_qs(parts.query)
    args: dict[str, Any] = {
        "host": parts.hostname or "localhost",
        "port": parts.port or 3306,
        "user": unquote(parts.username or "root"),
        "password": unquote(parts.password or ""),
        "charset": "utf8mb4",
    }
    if "unix_socket" in query:
        args["unix_socket"] = query["unix_socket"][0]
    return args


@contextmanager
def _connected(url: str, driver: str) -> Iterator[Any]:
    """A connection through ``driver`` (``pymysql`` or ``psycopg``), closed after; a missing
    driver or a refused connection is an :class:`InputError` without the password."""
    try:
        module = importlib.import_module(driver)
    except ImportError:
        raise InputError(_MISSING_DRIVER, "--from-db") from None
    try:
        if driver == "pymysql":
            conn = module.connect(**_mysql_args(url))
        else:
            conn = module.connect(url, autocommit=True)
    except (module.Error, OSError) as err:
        raise InputError(f"cannot connect: {reason_of(err)}", redacted(url)) from None
    try:
        yield conn
    finally:
        conn.close()


def _read_mysql(url: str) -> tuple[Dialect, str | None, list[Table]]:
    database = urlsplit(url).path.lstrip("/") or None
    with _connected(url, "pymysql") as conn, conn.cursor() as cur:
        cur.execute("SELECT VERSION()")
        dialect: Dialect = "mariadb" if "mariadb" in str(cur.fetchone()[0]).lower() else "mysql"
        if database is not None:
            names = [database]
        else:
            cur.execute("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA ORDER BY SCHEMA_NAME")
            names = [r[0] for r in cur.fetchall() if r[0] not in _SYSTEM_DATABASES]
        tables = []
        for db in names:
            cur.execute(
                "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s "
                "AND TABLE_TYPE = 'BASE TABLE' ORDER BY CREATE_TIME, TABLE_NAME",
                (db,),
            )
            for (name,) in cur.fetchall():
                tables.append(_mysql_table(cur, dialect, db, name, url))
    return dialect, database, tables


def _mysql_table(cur: Any, dialect: Dialect, db: str, name: str, url: str) -> Table:
    where = f"{redacted(url)} {db}.{name}"
    cur.execute(
        "SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT, EXTRA, COLUMN_COMMENT "
        "FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s "
        "ORDER BY ORDINAL_POSITION",
        (db, name),
    )
    columns = []
    for col, col_type, nullable, default, extra, comment in cur.fetchall():
        sql_type = normalize(parse_type_text(col_type, dialect, f"{where}.{col}"), dialect)
        columns.append(
            Column(
                name=col,
                type=sql_type,
                nullable=nullable == "YES",
                default=_mysql_default(default, extra or "", dialect),
                auto_increment="auto_increment" in (extra or "").lower(),
                comment=comment or None,
                where=f"{where}.{col}",
            )
        )
    cur.execute(f"SHOW INDEX FROM `{db}`.`{name}`")
    fields = [d[0].lower() for d in cur.description]
    rows = [dict(zip(fields, r, strict=True)) for r in cur.fetchall()]
    return Table(dialect, db, None, name, tuple(columns), _mysql_keys(rows), where)


def _mysql_default(value: str | None, extra: str, dialect: Dialect) -> Default | None:
    """MariaDB reports defaults as SQL (``'abc'``, ``NULL``, ``current_timestamp()``); MySQL as
    the bare literal, marking expressions ``DEFAULT_GENERATED``."""
    if value is None:
        return None
    if dialect == "mariadb" or "default_generated" in extra.lower():
        return parse_default_text(value, dialect)
    if value.upper().startswith("CURRENT_TIMESTAMP"):
        return Default("expression", "CURRENT_TIMESTAMP")
    return Default("string", value)


def _mysql_keys(rows: Sequence[dict[str, Any]]) -> tuple[Key, ...]:
    keys: dict[str, list[str]] = {}
    unique: dict[str, bool] = {}
    for row in rows:  # SHOW INDEX lists PRIMARY first, then indexes in definition order
        index = row["key_name"]
        keys.setdefault(index, []).append(row["column_name"])
        unique[index] = not int(row["non_unique"])
    out = []
    for index, cols in keys.items():
        if index == "PRIMARY":
            out.append(Key("primary", tuple(cols), None))
        elif unique[index]:
            out.append(Key("unique", tuple(cols), index))
    return tuple(out)


# --- PostgreSQL -------------------------------------------------------------------------------

_PG_TABLES: Final = """
SELECT c.oid, n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition
  AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%%'
  AND n.nspname NOT LIKE 'pg_temp%%'
ORDER BY c.oid
"""
_PG_COLUMNS: Final = """
SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
       pg_get_expr(d.adbin, d.adrelid), t.typtype, t.typnotnull,
       format_type(t.typbasetype, t.typtypmod), a.atttypid, t.typelem, a.attndims
FROM pg_attribute a
JOIN pg_type t ON t.oid = a.atttypid
LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE a.attrelid = %s AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum
"""
_PG_ENUM: Final = "SELECT enumlabel FROM pg_enum WHERE enumtypid = %s ORDER BY enumsortorder"
_PG_TYPTYPE: Final = "SELECT typtype FROM pg_type WHERE oid = %s"
_PG_KEYS: Final = """
SELECT con.contype, con.conname, array_agg(a.attname ORDER BY k.ord)
FROM pg_constraint con
CROSS JOIN LATERAL unnest(con.conkey) WITH ORDINALITY AS k(attnum, ord)
JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum
WHERE con.conrelid = %s AND con.contype IN ('p', 'u')
GROUP BY con.oid, con.contype, con.conname
ORDER BY con.contype = 'p' DESC, con.oid
"""
_PG_UNIQUE_INDEXES: Final = """
SELECT i.relname, array_agg(a.attname ORDER BY k.ord)
FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY AS k(attnum, ord)
JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum
WHERE x.indrelid = %s AND x.indisunique AND NOT x.indisprimary
  AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)
GROUP BY x.indexrelid, i.relname ORDER BY x.indexrelid
"""


def _read_postgres(url: str) -> tuple[Dialect, str | None, list[Table]]:
    database = urlsplit(url).path.lstrip("/") or None
    with _connected(url, "psycopg") as conn, conn.cursor() as cur:
        cur.execute(_PG_TABLES)
        found = cur.fetchall()
        tables = [_pg_table(cur, oid, schema, name, url) for oid, schema, name in found]
    return "postgres", database, tables


def _pg_table(cur: Any, oid: int, schema: str, name: str, url: str) -> Table:
    where = f"{redacted(url)} {schema}.{name}"
    cur.execute(_PG_COLUMNS, (oid,))
    columns = []
    for row in cur.fetchall():
        attname, formatted, notnull, default, typtype, typnotnull, base, typid, elem, dims = row
        at = f"{where}.{attname}"
        sql_type = _pg_type(cur, formatted, typtype, base, typid, elem, dims, at)
        columns.append(
            Column(
                name=attname,
                type=sql_type,
                nullable=not (notnull or (typtype == "d" and typnotnull)),
                default=parse_default_text(default, "postgres", at) if default else None,
                where=at,
            )
        )
    cur.execute(_PG_KEYS, (oid,))
    keys = [Key("primary" if t == "p" else "unique", tuple(c), n) for t, n, c in cur.fetchall()]
    cur.execute(_PG_UNIQUE_INDEXES, (oid,))
    keys += [Key("unique", tuple(cols), index) for index, cols in cur.fetchall()]
    return Table("postgres", None, schema, name, tuple(columns), tuple(keys), where)


def _pg_type(
    cur: Any, formatted: str, typtype: str, base: str, typid: int, elem: int, dims: int, at: str
) -> SqlType:
    """The column type: enums resolved to their labels, domains to their base type."""
    if typtype == "e":
        cur.execute(_PG_ENUM, (typid,))
        return SqlType("enum", tuple(r[0] for r in cur.fetchall()), written=formatted)
    if typtype == "d":
        return normalize(parse_type_text(base, "postgres", at), "postgres")
    if elem and formatted.endswith("[]"):
        cur.execute(_PG_TYPTYPE, (elem,))
        found = cur.fetchone()
        if found is not None and found[0] == "e":
            cur.execute(_PG_ENUM, (elem,))
            labels = tuple(r[0] for r in cur.fetchall())
            return SqlType("enum", labels, array=max(dims, 1), written=formatted)
    return normalize(parse_type_text(formatted, "postgres", at), "postgres")
