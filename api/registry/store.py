"""The embedded registry's storage: one SQLite file, WAL, every write one transaction.

Tables: ``schemas`` (global ids; ``AUTOINCREMENT`` so an id is never handed out twice, even
after permanent deletes; the text as Avro Java writes it, the schema with its references
resolved, metadata, rule set and references), ``versions`` (subject, version -> schema id,
soft-deleted flag), ``schema_refs`` (which subject versions a schema's references name) and
``settings`` (compatibility level and mode, per subject or global under the empty subject).

:class:`RegistryStore` implements Confluent Schema Registry semantics on top of them and
raises :class:`~api.registry.errors.RegistryError` with Confluent's error codes.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final, Literal, TypeVar

from api.registry import errors as e
from api.registry.avro import (
    CanonicalSchema,
    SchemaReference,
    SchemaRequest,
    canonical_json,
    canonicalize,
    fingerprint_of,
    java_text,
)
from api.registry.errors import RegistryError

COMPATIBILITY_LEVELS: Final = (
    "BACKWARD",
    "BACKWARD_TRANSITIVE",
    "FORWARD",
    "FORWARD_TRANSITIVE",
    "FULL",
    "FULL_TRANSITIVE",
    "NONE",
)
MODES: Final = ("READWRITE", "READONLY", "READONLY_OVERRIDE", "IMPORT")
#: modes in which nothing may be written
READ_ONLY_MODES: Final = frozenset({"READONLY", "READONLY_OVERRIDE"})
DEFAULT_COMPATIBILITY: Final = "BACKWARD"
DEFAULT_MODE: Final = "READWRITE"
GLOBAL: Final = ""  # the subject under which global settings are stored
MAX_VERSION: Final = 2**31 - 1
#: the layout of the file this code writes (``PRAGMA user_version``); older files are migrated
LAYOUT: Final = 2

_SCHEMAS_DDL: Final = """
CREATE TABLE IF NOT EXISTS schemas (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    guid TEXT NOT NULL UNIQUE,
    schema_type TEXT NOT NULL,
    identity TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    schema_text TEXT NOT NULL,
    resolved_text TEXT NOT NULL,
    metadata TEXT,
    rule_set TEXT,
    refs TEXT
)"""
_DDL: Final = f"""
{_SCHEMAS_DDL};
CREATE INDEX IF NOT EXISTS schemas_by_identity ON schemas(identity);
CREATE TABLE IF NOT EXISTS versions (
    subject TEXT NOT NULL,
    version INTEGER NOT NULL,
    schema_id INTEGER NOT NULL REFERENCES schemas(id),
    deleted INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (subject, version)
);
CREATE INDEX IF NOT EXISTS versions_by_schema ON versions(schema_id);
CREATE TABLE IF NOT EXISTS schema_refs (
    schema_id INTEGER NOT NULL REFERENCES schemas(id),
    subject TEXT NOT NULL,
    version INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS refs_by_target ON schema_refs(subject, version);
CREATE TABLE IF NOT EXISTS settings (
    scope TEXT NOT NULL,
    subject TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (scope, subject)
)
"""

#: no control characters (as Confluent), no lone surrogates (bytes that were not UTF-8)
_SUBJECT_RE: Final = re.compile(r"^[^\x00-\x1f\x7f\ud800-\udfff]{1,255}$")
#: An integer of at most 19 digits (any id or version fits; longer text is no number Python
#: will convert: over 4,300 digits int() refuses it)
_INTEGER_RE: Final = re.compile(r"-?[0-9]{1,19}")
MAX_SCHEMA_ID_INT: Final = 2**31 - 1
T = TypeVar("T")


def page(items: Sequence[T], offset: int = 0, limit: int = -1) -> list[T]:
    """``offset``/``limit`` paging as Confluent applies it (a limit of 0 or less: no limit)."""
    start = max(offset, 0)
    return list(items[start:] if limit <= 0 else items[start : start + limit])


@dataclass(frozen=True, slots=True)
class StoredVersion:
    """One version of a subject, joined with its schema."""

    subject: str
    version: int
    schema_id: int
    guid: str
    schema_type: str
    schema: str
    metadata: dict[str, Any] | None
    rule_set: dict[str, Any] | None
    deleted: bool
    fingerprint: str = ""
    resolved: str = ""
    references: tuple[SchemaReference, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The version as Confluent answers it (``schemaType`` only when not AVRO)."""
        out: dict[str, Any] = {
            "subject": self.subject,
            "version": self.version,
            "id": self.schema_id,
            "guid": self.guid,
        }
        out |= schema_body(
            self.schema_type, self.schema, self.metadata, self.rule_set, self.references
        )
        if self.deleted:
            out["deleted"] = True
        return out

    @property
    def canonical(self) -> CanonicalSchema:
        return CanonicalSchema(self.schema_type, self.schema, self.fingerprint, self.resolved)


def schema_body(
    schema_type: str,
    schema: str,
    metadata: dict[str, Any] | None,
    rule_set: dict[str, Any] | None,
    references: Sequence[SchemaReference] = (),
) -> dict[str, Any]:
    """The schema part of a registry answer, as Confluent writes it (AVRO's type left out)."""
    out: dict[str, Any] = {}
    if schema_type != "AVRO":
        out["schemaType"] = schema_type
    out["schema"] = schema
    if references:
        out["references"] = [r.to_json() for r in references]
    if metadata is not None:
        out["metadata"] = metadata
    if rule_set is not None:
        out["ruleSet"] = rule_set
    return out


@dataclass(frozen=True, slots=True)
class StoredSchema:
    """A schema by global id."""

    schema_id: int
    guid: str
    schema_type: str
    schema: str
    metadata: dict[str, Any] | None
    rule_set: dict[str, Any] | None
    references: tuple[SchemaReference, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.schema_id, "guid": self.guid}
        return out | schema_body(
            self.schema_type, self.schema, self.metadata, self.rule_set, self.references
        )


@dataclass(frozen=True)
class Candidate:
    """A schema offered for registration, lookup or a compatibility test."""

    canonical: CanonicalSchema
    metadata: dict[str, Any] | None = None
    rule_set: dict[str, Any] | None = None
    references: tuple[SchemaReference, ...] = ()

    @property
    def identity(self) -> str:
        parts: list[Any] = [
            self.canonical.schema_type,
            self.canonical.fingerprint,
            canonical_json(self.metadata),
            canonical_json(self.rule_set),
        ]
        if self.references:
            parts.append([r.to_json() for r in self.references])
        return fingerprint_of(parts)


@dataclass(frozen=True)
class Registration:
    """A ``POST /subjects/{s}/versions`` body: the schema (None: the latest version's, for a
    registration that brings only ``metadata``/``ruleSet``), and the caller's id and version
    (IMPORT mode only)."""

    schema: SchemaRequest
    metadata: dict[str, Any] | None = None
    rule_set: dict[str, Any] | None = None
    schema_id: int | None = None
    version: int | None = None
    #: the parsed schema, when the router parsed it (a schema given in the request)
    candidate: Candidate | None = field(default=None, compare=False)


def check_metadata(metadata: Any) -> dict[str, Any] | None:
    """A request's ``metadata`` (properties map strings to strings); empty parts dropped."""
    if metadata is None:
        return None
    if not isinstance(metadata, dict):
        raise RegistryError(e.UNPROCESSABLE, "Field 'metadata' must be a JSON object")
    properties = metadata.get("properties")
    if properties is not None and (
        not isinstance(properties, dict)
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in properties.items())
    ):
        raise RegistryError(
            e.UNPROCESSABLE, "Field 'metadata.properties' must map strings to strings"
        )
    cleaned = {k: v for k, v in metadata.items() if v not in (None, {}, [])}
    return cleaned or None


def check_rule_set(value: Any) -> dict[str, Any] | None:
    """A request's ``ruleSet`` (a JSON object; empty means none)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise RegistryError(e.UNPROCESSABLE, "Field 'ruleSet' must be a JSON object")
    return value or None


def check_subject(subject: str) -> str:
    """A valid subject name, or 42208."""
    if not _SUBJECT_RE.match(subject):
        raise RegistryError(e.INVALID_SUBJECT, f"The specified subject '{subject}' is not valid.")
    return subject


def parse_version(text: str | int) -> int | None:
    """A version number, or None for ``latest`` / ``-1``; 42202 otherwise."""
    raw = str(text)
    if raw.lower() == "latest" or raw == "-1":
        return None
    if not _INTEGER_RE.fullmatch(raw) or not 1 <= int(raw) <= MAX_VERSION:
        raise e.invalid_version(raw)
    return int(raw)


def parse_schema_id(text: str) -> int:
    """A schema id from a URL. Text that is no 32-bit integer is no route Confluent has (HTTP
    404, error_code 404, as its JAX-RS integer parameter answers); an integer that names no
    schema (0, negative) is 40403."""
    if not _INTEGER_RE.fullmatch(text) or not -(2**31) <= int(text) <= MAX_SCHEMA_ID_INT:
        raise e.http_error(404)
    if int(text) < 1:
        raise e.schema_not_found(text)
    return int(text)


def check_level(value: Any) -> str:
    """A compatibility level name (any case), or 42203."""
    if not isinstance(value, str) or value.upper() not in COMPATIBILITY_LEVELS:
        raise e.invalid_compatibility(value)
    return value.upper()


def check_mode(value: Any) -> str:
    """A mode name (any case), or 42204."""
    if not isinstance(value, str) or value.upper() not in MODES:
        raise RegistryError(
            e.INVALID_MODE,
            f"Invalid mode {value!r}. Valid values are READWRITE, READONLY, READONLY_OVERRIDE "
            "and IMPORT",
        )
    return value.upper()


@dataclass(frozen=True)
class _SettingKind:
    """One per-subject setting: its ``settings.scope`` (also its name in messages), default,
    error code when a subject has none, and the validator of new values."""

    scope: str
    default: str
    unconfigured_code: int
    check: Callable[[Any], str]


_COMPATIBILITY: Final = _SettingKind(
    "compatibility", DEFAULT_COMPATIBILITY, e.SUBJECT_COMPATIBILITY_NOT_CONFIGURED, check_level
)
_MODE: Final = _SettingKind("mode", DEFAULT_MODE, e.SUBJECT_MODE_NOT_CONFIGURED, check_mode)


class RegistryStore:
    """Confluent-compatible Schema Registry state in one SQLite file.

    Thread-safe: one connection guarded by a lock (SQLite serializes writers anyway). Every
    write runs in one ``BEGIN IMMEDIATE`` transaction with ``synchronous=FULL``, so an answered
    registration survives a crash of the process or the machine.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(
            str(path), check_same_thread=False, isolation_level=None, timeout=30.0
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._migrate()
        self._db.execute("PRAGMA foreign_keys=ON")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def data_version(self) -> int:
        """SQLite's ``PRAGMA data_version``: it changes when another connection (another
        process) has committed to the file since this connection last looked."""
        with self._read() as db:
            return int(db.execute("PRAGMA data_version").fetchone()[0])

    # --- the file's layout ----------------------------------------------------------------------

    def _migrate(self) -> None:
        """Create the tables, or bring a file of an older layout to :data:`LAYOUT` (schemas
        were unique per identity and kept the Python library's text: ids stay, texts are
        rewritten as Avro Java writes them, the id sequence is kept so no id is reused)."""
        db = self._db
        with self._lock:
            db.execute("BEGIN IMMEDIATE")
            try:
                old = db.execute(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schemas'"
                ).fetchone()
                layout = int(db.execute("PRAGMA user_version").fetchone()[0])
                if old is not None and layout < LAYOUT:
                    self._migrate_schemas(db)
                for statement in _DDL.split(";"):
                    if statement.strip():
                        db.execute(statement)
                db.execute(f"PRAGMA user_version = {LAYOUT}")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    @staticmethod
    def _migrate_schemas(db: sqlite3.Connection) -> None:
        row = db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'schemas'").fetchone()
        sequence = int(row[0]) if row else 0
        db.execute(_SCHEMAS_DDL.replace("schemas (", "schemas_next (", 1))
        rows = db.execute(
            "SELECT id, guid, schema_type, identity, fingerprint, schema_text, metadata, rule_set "
            "FROM schemas"
        ).fetchall()
        for sid, guid, kind, identity, fingerprint, text, metadata, rule_set in rows:
            java = java_text(json.loads(text)) if kind == "AVRO" else text
            db.execute(
                "INSERT INTO schemas_next(id, guid, schema_type, identity, fingerprint, "
                "schema_text, resolved_text, metadata, rule_set) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (sid, guid, kind, identity, fingerprint, java, text, metadata, rule_set),
            )
        # foreign keys are off on this connection until the migration is done
        db.execute("DROP TABLE schemas")
        db.execute("ALTER TABLE schemas_next RENAME TO schemas")
        db.execute("DELETE FROM sqlite_sequence WHERE name = 'schemas'")
        top = db.execute("SELECT COALESCE(MAX(id), 0) FROM schemas").fetchone()[0]
        db.execute(
            "INSERT INTO sqlite_sequence(name, seq) VALUES ('schemas', ?)",
            (max(sequence, int(top)),),
        )

    # --- transactions -------------------------------------------------------------------------

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            yield self._db

    # --- settings -----------------------------------------------------------------------------

    def _setting(self, db: sqlite3.Connection, scope: str, subject: str) -> str | None:
        row = db.execute(
            "SELECT value FROM settings WHERE scope = ? AND subject = ?", (scope, subject)
        ).fetchone()
        return None if row is None else str(row[0])

    def _effective(self, db: sqlite3.Connection, scope: str, subject: str, default: str) -> str:
        """The subject's value, else the global one, else ``default`` (a global
        READONLY_OVERRIDE mode wins over every subject's mode)."""
        if scope == "mode" and self._setting(db, "mode", GLOBAL) == "READONLY_OVERRIDE":
            return "READONLY_OVERRIDE"
        for holder in (subject,) if subject == GLOBAL else (subject, GLOBAL):
            found = self._setting(db, scope, holder)
            if found:
                return found
        return default

    def _get_setting(self, kind: _SettingKind, subject: str | None, default_to_global: bool) -> str:
        """``kind``'s value for ``subject`` (its error code when unset, unless
        ``default_to_global``), or the global value when ``subject`` is None."""
        with self._read() as db:
            if subject is None or default_to_global:
                return self._effective(db, kind.scope, subject or GLOBAL, kind.default)
            if kind is _MODE and self._setting(db, "mode", GLOBAL) == "READONLY_OVERRIDE":
                return "READONLY_OVERRIDE"
            found = self._setting(db, kind.scope, subject)
        if found is not None:
            return found
        raise RegistryError(
            kind.unconfigured_code,
            f"Subject '{subject}' does not have subject-level {kind.scope} configured",
        )

    def get_compatibility(self, subject: str | None = None, default_to_global: bool = False) -> str:
        """The level of ``subject`` (40408 when unset, unless ``default_to_global``) or global."""
        return self._get_setting(_COMPATIBILITY, subject, default_to_global)

    def set_compatibility(self, level: Any, subject: str | None = None) -> str:
        value = check_level(level)
        with self._write() as db:
            self._put_setting(db, "compatibility", subject, value)
        return value

    def delete_compatibility(self, subject: str | None = None) -> str:
        """Remove a level; answers the level that was in force."""
        with self._write() as db:
            key = GLOBAL if subject is None else subject
            current = self._setting(db, "compatibility", key)
            if current is None and subject is not None:
                if not self._has_subject(db, subject, include_deleted=True):
                    raise e.subject_not_found(subject)
                current = self._effective(db, "compatibility", subject, DEFAULT_COMPATIBILITY)
            db.execute("DELETE FROM settings WHERE scope = 'compatibility' AND subject = ?", (key,))
        return current or DEFAULT_COMPATIBILITY

    def get_mode(self, subject: str | None = None, default_to_global: bool = False) -> str:
        return self._get_setting(_MODE, subject, default_to_global)

    def set_mode(self, mode: Any, subject: str | None = None, force: bool = False) -> str | None:
        """Set (``mode`` None: clear) the global or a subject's mode. IMPORT is refused (42205)
        where subjects already hold live schemas, unless ``force``."""
        value = None if mode is None else check_mode(mode)
        with self._write() as db:
            key = GLOBAL if subject is None else subject
            if value is None:
                db.execute("DELETE FROM settings WHERE scope = 'mode' AND subject = ?", (key,))
                return None
            if value == "IMPORT" and not force:
                sql = "SELECT 1 FROM versions WHERE deleted = 0"
                args: tuple[str, ...] = ()
                if subject is not None:
                    sql, args = sql + " AND subject = ?", (subject,)
                if db.execute(sql + " LIMIT 1", args).fetchone():
                    where = f"subject '{subject}'" if subject is not None else "the registry"
                    raise RegistryError(
                        e.OPERATION_NOT_PERMITTED,
                        f"Cannot import since found existing subjects in {where}; pass "
                        "force=true to switch to IMPORT mode anyway",
                    )
            self._put_setting(db, "mode", subject, value)
        return value

    def delete_mode(self, subject: str | None, recursive: bool = False) -> str:
        """Remove a subject's mode (40401 when it has none) or the global one (``recursive``:
        every subject's too); answers the mode that was in force."""
        with self._write() as db:
            key = GLOBAL if subject is None else subject
            current = self._setting(db, "mode", key)
            if current is None and subject is not None:
                raise e.subject_not_found(subject)
            if subject is None and recursive:
                db.execute("DELETE FROM settings WHERE scope = 'mode'")
            db.execute("DELETE FROM settings WHERE scope = 'mode' AND subject = ?", (key,))
        return current or DEFAULT_MODE

    def has_subject(self, subject: str, deleted: bool = False) -> bool:
        """Whether a subject has a live version (or, with ``deleted``, any version)."""
        with self._read() as db:
            return self._has_subject(db, subject, include_deleted=deleted)

    def _put_setting(
        self, db: sqlite3.Connection, scope: str, subject: str | None, value: str
    ) -> None:
        db.execute(
            "INSERT INTO settings(scope, subject, value) VALUES (?, ?, ?) "
            "ON CONFLICT(scope, subject) DO UPDATE SET value = excluded.value",
            (scope, GLOBAL if subject is None else subject, value),
        )

    def _mode_of(self, db: sqlite3.Connection, subject: str | None) -> str:
        return self._effective(db, "mode", subject or GLOBAL, DEFAULT_MODE)

    def _check_writable(self, db: sqlite3.Connection, subject: str | None) -> None:
        if self._mode_of(db, subject) in READ_ONLY_MODES:
            where = f"Subject {subject} in context ." if subject else "The registry"
            raise RegistryError(e.OPERATION_NOT_PERMITTED, f"{where} is in read-only mode")

    # --- reading ------------------------------------------------------------------------------

    _VERSION_SQL: Final = (
        "SELECT v.subject, v.version, s.id, s.guid, s.schema_type, s.schema_text, s.metadata, "
        "s.rule_set, v.deleted, s.fingerprint, s.resolved_text, s.refs "
        "FROM versions v JOIN schemas s ON s.id = v.schema_id "
    )

    @staticmethod
    def _version_of(row: tuple[Any, ...]) -> StoredVersion:
        return StoredVersion(
            subject=row[0],
            version=int(row[1]),
            schema_id=int(row[2]),
            guid=row[3],
            schema_type=row[4],
            schema=row[5],
            metadata=json.loads(row[6]) if row[6] else None,
            rule_set=json.loads(row[7]) if row[7] else None,
            deleted=bool(row[8]),
            fingerprint=row[9],
            resolved=row[10],
            references=_references_of(row[11]),
        )

    def _versions(
        self, db: sqlite3.Connection, subject: str, include_deleted: bool
    ) -> list[StoredVersion]:
        sql = self._VERSION_SQL + "WHERE v.subject = ?"
        if not include_deleted:
            sql += " AND v.deleted = 0"
        rows = db.execute(sql + " ORDER BY v.version", (subject,)).fetchall()
        return [self._version_of(r) for r in rows]

    def _has_subject(self, db: sqlite3.Connection, subject: str, include_deleted: bool) -> bool:
        sql = "SELECT 1 FROM versions WHERE subject = ?"
        if not include_deleted:
            sql += " AND deleted = 0"
        return db.execute(sql + " LIMIT 1", (subject,)).fetchone() is not None

    def subjects(
        self, prefix: str | None = None, deleted: bool = False, deleted_only: bool = False
    ) -> list[str]:
        """Subject names, sorted: with live versions; ``deleted`` adds the soft-deleted ones,
        ``deleted_only`` lists only those (every version soft-deleted)."""
        with self._read() as db:
            rows = db.execute(
                "SELECT subject, MIN(deleted) FROM versions GROUP BY subject ORDER BY subject"
            ).fetchall()
        out = []
        for subject, all_deleted in rows:
            if prefix and not subject.startswith(prefix):
                continue
            if deleted_only and not all_deleted:
                continue
            if not deleted and not deleted_only and all_deleted:
                continue
            out.append(subject)
        return out

    def versions(
        self, subject: str, deleted: bool = False, deleted_only: bool = False
    ) -> list[int]:
        """Version numbers of a subject: live; ``deleted`` adds soft-deleted ones,
        ``deleted_only`` lists only those. 40401 when the subject has none to show."""
        with self._read() as db:
            found = self._versions(db, subject, include_deleted=True)
        if deleted_only:
            if not found:
                raise e.subject_not_found(subject)
            return [v.version for v in found if v.deleted]
        shown = [v.version for v in found if deleted or not v.deleted]
        if not shown:
            raise e.subject_not_found(subject)
        return shown

    def get_version(self, subject: str, version: str | int, deleted: bool = False) -> StoredVersion:
        """One version (``latest`` for the newest live one); 40401 / 40402 / 42202."""
        number = parse_version(version)
        with self._read() as db:
            found = self._versions(db, subject, include_deleted=True)
        if not found or (not deleted and all(v.deleted for v in found)):
            raise e.subject_not_found(subject)
        visible = [v for v in found if deleted or not v.deleted]
        if number is None:
            return visible[-1]
        for v in visible:
            if v.version == number:
                return v
        raise e.version_not_found(number)

    def latest_with_metadata(
        self, subject: str, properties: dict[str, str], deleted: bool = False
    ) -> StoredVersion:
        """The newest version whose ``metadata.properties`` hold every given pair (Confluent
        7.4+ ``GET /subjects/{s}/metadata``); 40401 without the subject, 40403 when none does."""
        with self._read() as db:
            found = self._versions(db, subject, include_deleted=deleted)
        if not found:
            raise e.subject_not_found(subject)
        for version in reversed(found):
            held = (version.metadata or {}).get("properties") or {}
            if all(held.get(k) == v for k, v in properties.items()):
                return version
        raise e.schema_not_found()

    def get_schema(self, schema_id: int) -> StoredSchema:
        """A schema by global id; 40403 once no version (live or soft-deleted) uses it."""
        return self._used_schema("id", schema_id)

    def get_schema_by_guid(self, guid: str) -> StoredSchema:
        """A schema by guid; 40403 once no version (live or soft-deleted) uses it."""
        return self._used_schema("guid", guid)

    def _used_schema(self, column: Literal["id", "guid"], value: int | str) -> StoredSchema:
        with self._read() as db:
            row = db.execute(
                "SELECT s.id, s.guid, s.schema_type, s.schema_text, s.metadata, s.rule_set, s.refs "
                f"FROM schemas s WHERE s.{column} = ? AND EXISTS "
                "(SELECT 1 FROM versions v WHERE v.schema_id = s.id)",
                (value,),
            ).fetchone()
        if row is None:
            raise e.schema_not_found(value)
        return StoredSchema(
            schema_id=int(row[0]),
            guid=row[1],
            schema_type=row[2],
            schema=row[3],
            metadata=json.loads(row[4]) if row[4] else None,
            rule_set=json.loads(row[5]) if row[5] else None,
            references=_references_of(row[6]),
        )

    def schema_versions(
        self, schema_id: int, subject: str | None = None, deleted: bool = False
    ) -> list[tuple[str, int]]:
        """(subject, version) pairs using a schema id; 40403 when none."""
        self.get_schema(schema_id)
        sql = "SELECT subject, version FROM versions WHERE schema_id = ?"
        args: list[Any] = [schema_id]
        if not deleted:
            sql += " AND deleted = 0"
        if subject:
            sql += " AND subject = ?"
            args.append(subject)
        with self._read() as db:
            rows = db.execute(sql + " ORDER BY subject, version", args).fetchall()
        return [(str(s), int(v)) for s, v in rows]

    def referenced_by(self, subject: str, version: str | int) -> list[int]:
        """Ids of the schemas with a live version whose references name ``subject`` at
        ``version`` (``latest``: its newest live version)."""
        target = self.get_version(subject, version)
        with self._read() as db:
            return self._referrers(db, subject, target.version)

    @staticmethod
    def _referrers(db: sqlite3.Connection, subject: str, version: int) -> list[int]:
        rows = db.execute(
            "SELECT DISTINCT r.schema_id FROM schema_refs r WHERE r.subject = ? AND r.version = ? "
            "AND EXISTS (SELECT 1 FROM versions v WHERE v.schema_id = r.schema_id AND v.deleted = 0)"
            " ORDER BY r.schema_id",
            (subject, version),
        ).fetchall()
        return [int(r[0]) for r in rows]

    def max_schema_id(self) -> int:
        """The highest id ever handed out (0 when none)."""
        with self._read() as db:
            row = db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'schemas'").fetchone()
        return int(row[0]) if row else 0

    # --- candidates ---------------------------------------------------------------------------

    def candidate(
        self,
        request: SchemaRequest,
        metadata: dict[str, Any] | None = None,
        rule_set: dict[str, Any] | None = None,
    ) -> Candidate:
        """Parse a request's schema with the schemas its references name (42201 when a
        reference names no live version, or the schema is not valid Avro)."""
        assert request.schema is not None
        with self._read() as db:
            references, dependencies = self._resolve(db, request.references)
        canonical = canonicalize(request.schema, request.schema_type, dependencies)
        return Candidate(canonical, metadata, rule_set, references)

    def _resolve(
        self, db: sqlite3.Connection, references: Sequence[SchemaReference]
    ) -> tuple[tuple[SchemaReference, ...], tuple[str, ...]]:
        """The references with their versions pinned (-1: the latest live one) and the texts of
        every schema they need, each before the schemas that use it."""
        pinned: list[SchemaReference] = []
        texts: list[str] = []
        seen: set[int] = set()

        def visit(ref: SchemaReference, trail: tuple[int, ...]) -> SchemaReference:
            live = self._versions(db, ref.subject, include_deleted=False)
            picked = (
                live[-1:] if ref.version == -1 else [v for v in live if v.version == ref.version]
            )
            if not picked:
                version = "latest" if ref.version == -1 else ref.version
                raise e.invalid_schema(
                    f"reference {ref.name!r} names subject {ref.subject!r} version {version}, "
                    "which is not registered (or is deleted)"
                )
            target = picked[0]
            if target.schema_id in trail:
                raise e.invalid_schema(f"the references of {ref.subject!r} form a cycle")
            for inner in target.references:
                visit(inner, (*trail, target.schema_id))
            if target.schema_id not in seen:
                seen.add(target.schema_id)
                texts.append(target.schema)
            return replace(ref, version=target.version)

        for ref in references:
            pinned.append(visit(ref, ()))
        return tuple(pinned), tuple(texts)

    # --- lookup and compatibility -------------------------------------------------------------

    @staticmethod
    def _matches(version: StoredVersion, candidate: Candidate) -> bool:
        if version.schema_type != candidate.canonical.schema_type:
            return False
        if version.fingerprint != candidate.canonical.fingerprint:
            return False
        if candidate.metadata is not None and canonical_json(version.metadata) != canonical_json(
            candidate.metadata
        ):
            return False
        return candidate.rule_set is None or canonical_json(version.rule_set) == canonical_json(
            candidate.rule_set
        )

    def _find(self, versions: list[StoredVersion], candidate: Candidate) -> StoredVersion | None:
        """The newest version holding the candidate's schema: the same schema once its
        references are resolved, so a lookup with the references inlined finds it too."""
        for v in reversed(versions):
            if self._matches(v, candidate):
                return v
        return None

    def lookup(self, subject: str, candidate: Candidate, deleted: bool = False) -> StoredVersion:
        """The version of ``subject`` holding this schema (metadata compared when given)."""
        with self._read() as db:
            found = self._versions(db, subject, include_deleted=deleted)
        if not found:
            raise e.subject_not_found(subject)
        match = self._find(found, candidate)
        if match is None:
            raise e.schema_not_found()
        return match

    def test_compatibility(
        self, subject: str, candidate: Candidate, version: str | int | None
    ) -> tuple[bool, list[str]]:
        """Compatibility of a candidate with one version (``latest`` allowed; 40402 when it
        does not exist), or with the level's versions."""
        number = None if version is None else parse_version(version)
        with self._read() as db:
            live = self._versions(db, subject, include_deleted=False)
            level = self._effective(db, "compatibility", subject, DEFAULT_COMPATIBILITY)
        if version is None:
            return self._verdict(candidate, live, level)
        if number is None:
            return self._verdict(candidate, live[-1:], level)
        picked = [v for v in live if v.version == number]
        if not picked:
            raise e.version_not_found(number)
        return self._verdict(candidate, picked, level)

    @staticmethod
    def _verdict(
        candidate: Candidate, previous: list[StoredVersion], level: str
    ) -> tuple[bool, list[str]]:
        """The verdict against ``previous`` (live versions, oldest first), by the one
        :func:`~contracts.diff.verdict.schema_verdict` on the schemas with their references
        resolved (messages name real version numbers)."""
        from contracts.diff.verdict import schema_verdict

        found = schema_verdict(
            candidate.canonical.resolved, [(v.version, v.resolved) for v in previous], level
        )
        return found.compatible, list(found.messages)

    # --- writing ------------------------------------------------------------------------------

    def register(self, subject: str, request: Registration) -> StoredVersion:
        """Register a schema under a subject, Confluent-style.

        READWRITE: an identical schema already live under the subject answers its existing
        version (no compatibility check, no new version). Without metadata in the request, the
        latest version's metadata and rule set carry over; without a schema (only metadata or
        a rule set), the latest version's schema and references are used. Otherwise the schema
        must be compatible with the subject's live versions at the subject's level (409); the
        global id is reused when the same schema (with the same metadata) exists under any
        subject. A caller's ``id`` or ``version`` is 42205 (only IMPORT mode takes them).

        IMPORT: the schema is stored under the caller's id (42205 when the id holds another
        schema) and version (the next one when absent; 42205 when a live version holds another
        schema), without a compatibility check; without an id, only a schema the subject
        already holds is accepted (its version is answered).
        """
        check_subject(subject)
        with self._write() as db:
            self._check_writable(db, subject)
            live = self._versions(db, subject, include_deleted=False)
            candidate = self._registered_candidate(db, subject, request, live)
            if self._mode_of(db, subject) == "IMPORT":
                return self._import(db, subject, request, candidate, live)
            if request.schema_id is not None or request.version is not None:
                wanted = f"id {request.schema_id}" if request.schema_id is not None else "a version"
                raise RegistryError(
                    e.OPERATION_NOT_PERMITTED,
                    f"Overwrite new schema with {wanted} is not permitted: a register request "
                    "may name its id or version only in IMPORT mode",
                )
            existing = self._find(live, candidate)
            if existing is not None:
                return existing
            if live and candidate.metadata is None and candidate.rule_set is None:
                latest = live[-1]
                candidate = replace(candidate, metadata=latest.metadata, rule_set=latest.rule_set)
            level = self._effective(db, "compatibility", subject, DEFAULT_COMPATIBILITY)
            ok, messages = self._verdict(candidate, live, level)
            if not ok:
                raise _incompatible(subject, messages, live)
            schema_id, _guid = self._schema_id_for(db, candidate)
            version = self._next_version(db, subject)
            db.execute(
                "INSERT INTO versions(subject, version, schema_id, deleted) VALUES (?, ?, ?, 0)",
                (subject, version, schema_id),
            )
            return self._stored(db, subject, version)

    def _registered_candidate(
        self,
        db: sqlite3.Connection,
        subject: str,
        request: Registration,
        live: list[StoredVersion],
    ) -> Candidate:
        """The request's parsed schema, or (metadata or a rule set alone) the latest version's
        schema with the request's metadata and rule set."""
        if request.candidate is not None:
            candidate = request.candidate
            if candidate.references:  # still live? they were resolved before this transaction
                self._resolve(db, candidate.references)
            return candidate
        if request.metadata is None and request.rule_set is None:
            raise RegistryError(e.INVALID_SCHEMA, "Empty schema")
        if not live:
            raise RegistryError(
                e.INVALID_SCHEMA,
                f"Empty schema: subject '{subject}' has no version whose schema the new "
                "metadata or rule set could apply to",
            )
        latest = live[-1]
        return Candidate(latest.canonical, request.metadata, request.rule_set, latest.references)

    def _import(
        self,
        db: sqlite3.Connection,
        subject: str,
        request: Registration,
        candidate: Candidate,
        live: list[StoredVersion],
    ) -> StoredVersion:
        if request.schema_id is None:
            existing = self._find(live, candidate)
            if existing is not None:
                return existing
            raise RegistryError(
                e.OPERATION_NOT_PERMITTED,
                f"Subject {subject} is in IMPORT mode: a new schema needs its id",
            )
        schema_id = request.schema_id
        row = db.execute(
            "SELECT identity, fingerprint, schema_type FROM schemas WHERE id = ?", (schema_id,)
        ).fetchone()
        if row is not None and row[0] != candidate.identity:
            raise RegistryError(
                e.OPERATION_NOT_PERMITTED,
                f"Overwrite schema for the same ID is not permitted: id {schema_id} holds "
                "another schema (or the same schema with other metadata)",
            )
        if row is None:
            self._insert_schema(db, candidate, schema_id)
        version = request.version or self._next_version(db, subject)
        held = db.execute(
            "SELECT schema_id, deleted FROM versions WHERE subject = ? AND version = ?",
            (subject, version),
        ).fetchone()
        if held is not None and not held[1] and int(held[0]) != schema_id:
            raise RegistryError(
                e.OPERATION_NOT_PERMITTED,
                f"Overwrite schema for version {version} of subject {subject} is not permitted: "
                f"it holds schema id {held[0]}",
            )
        db.execute(
            "INSERT INTO versions(subject, version, schema_id, deleted) VALUES (?, ?, ?, 0) "
            "ON CONFLICT(subject, version) DO UPDATE SET schema_id = excluded.schema_id, "
            "deleted = 0",
            (subject, version, schema_id),
        )
        return self._stored(db, subject, version)

    def _stored(self, db: sqlite3.Connection, subject: str, version: int) -> StoredVersion:
        row = db.execute(
            self._VERSION_SQL + "WHERE v.subject = ? AND v.version = ?", (subject, version)
        ).fetchone()
        return self._version_of(row)

    @staticmethod
    def _next_version(db: sqlite3.Connection, subject: str) -> int:
        row = db.execute(
            "SELECT COALESCE(MAX(version), 0) FROM versions WHERE subject = ?", (subject,)
        ).fetchone()
        return int(row[0]) + 1

    def _schema_id_for(self, db: sqlite3.Connection, candidate: Candidate) -> tuple[int, str]:
        row = db.execute(
            "SELECT id, guid FROM schemas WHERE identity = ? ORDER BY id LIMIT 1",
            (candidate.identity,),
        ).fetchone()
        if row is not None:
            return int(row[0]), str(row[1])
        return self._insert_schema(db, candidate, None)

    @staticmethod
    def _insert_schema(
        db: sqlite3.Connection, candidate: Candidate, schema_id: int | None
    ) -> tuple[int, str]:
        guid = str(uuid.uuid4())
        refs = json.dumps([r.to_json() for r in candidate.references])
        cursor = db.execute(
            "INSERT INTO schemas(id, guid, schema_type, identity, fingerprint, schema_text, "
            "resolved_text, metadata, rule_set, refs) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                schema_id,
                guid,
                candidate.canonical.schema_type,
                candidate.identity,
                candidate.canonical.fingerprint,
                candidate.canonical.text,
                candidate.canonical.resolved,
                canonical_json(candidate.metadata),
                canonical_json(candidate.rule_set),
                refs if candidate.references else None,
            ),
        )
        assert cursor.lastrowid is not None
        new_id = int(cursor.lastrowid)
        db.executemany(
            "INSERT INTO schema_refs(schema_id, subject, version) VALUES (?, ?, ?)",
            [(new_id, r.subject, r.version) for r in candidate.references],
        )
        return new_id, guid

    def _refuse_if_referenced(self, db: sqlite3.Connection, subject: str, version: int) -> None:
        """42206 when a live version of another schema references this subject version."""
        referrers = self._referrers(db, subject, version)
        if referrers:
            raise RegistryError(
                e.REFERENCE_EXISTS,
                f"One or more references exist to the schema {{subject={subject}, "
                f"version={version}}} (schema ids {', '.join(map(str, referrers))})",
            )

    def delete_subject(self, subject: str, permanent: bool = False) -> list[int]:
        """Soft-delete every version, or (``permanent``) remove a soft-deleted subject."""
        with self._write() as db:
            self._check_writable(db, subject)
            found = self._versions(db, subject, include_deleted=True)
            if not found:
                raise e.subject_not_found(subject)
            live = [v.version for v in found if not v.deleted]
            for v in found:
                self._refuse_if_referenced(db, subject, v.version)
            if not permanent:
                if not live:
                    raise RegistryError(
                        e.SUBJECT_SOFT_DELETED,
                        f"Subject '{subject}' was soft deleted. Set permanent=true to delete "
                        "permanently",
                    )
                db.execute("UPDATE versions SET deleted = 1 WHERE subject = ?", (subject,))
                return live
            if live:
                raise RegistryError(
                    e.SUBJECT_NOT_SOFT_DELETED,
                    f"Subject '{subject}' was not deleted first before being permanently deleted",
                )
            db.execute("DELETE FROM versions WHERE subject = ?", (subject,))
            db.execute("DELETE FROM settings WHERE subject = ?", (subject,))
            return [v.version for v in found]

    def delete_version(self, subject: str, version: str | int, permanent: bool = False) -> int:
        """Soft-delete one version, or (``permanent``) remove a soft-deleted one; 42206 while a
        live schema references it."""
        number = parse_version(version)
        with self._write() as db:
            self._check_writable(db, subject)
            found = self._versions(db, subject, include_deleted=True)
            if not found:
                raise e.subject_not_found(subject)
            if number is None:
                pool = [v for v in found if not v.deleted] if not permanent else found
                if not pool:
                    raise e.subject_not_found(subject)
                target = pool[-1]
            else:
                picked = [v for v in found if v.version == number]
                if not picked:
                    raise e.version_not_found(number)
                target = picked[0]
            self._refuse_if_referenced(db, subject, target.version)
            if not permanent:
                if target.deleted:
                    raise RegistryError(
                        e.VERSION_SOFT_DELETED,
                        f"Subject '{subject}' Version {target.version} was soft deleted.Set "
                        "permanent=true to delete permanently",
                    )
                db.execute(
                    "UPDATE versions SET deleted = 1 WHERE subject = ? AND version = ?",
                    (subject, target.version),
                )
            else:
                if not target.deleted:
                    raise RegistryError(
                        e.VERSION_NOT_SOFT_DELETED,
                        f"Subject '{subject}' Version {target.version} was not deleted first "
                        "before being permanently deleted",
                    )
                db.execute(
                    "DELETE FROM versions WHERE subject = ? AND version = ?",
                    (subject, target.version),
                )
            return target.version


def _incompatible(subject: str, messages: list[str], live: list[StoredVersion]) -> RegistryError:
    """409 as Confluent words it: the reasons, then ``{oldSchemaVersion: N}``, ``{oldSchema:
    '...'}`` of the first version that refuses the schema, then the level."""
    details = list(messages)
    numbers = [int(n) for n in re.findall(r"\bversion (\d+)", " ".join(messages))]
    old = [v for v in live if v.version == numbers[0]] if numbers else []
    if old:
        last = details[-1] if details else ""
        at = len(details) - 1 if last.startswith("{compatibility") else len(details)
        details[at:at] = [
            f"{{oldSchemaVersion: {old[0].version}}}",
            f"{{oldSchema: '{old[0].schema}'}}",
        ]
    return RegistryError(
        e.INCOMPATIBLE_SCHEMA,
        "Schema being registered is incompatible with an earlier schema for subject "
        f'"{subject}", details: [{", ".join(details)}]',
    )


def _references_of(text: str | None) -> tuple[SchemaReference, ...]:
    if not text:
        return ()
    return tuple(
        SchemaReference(r["name"], r["subject"], int(r["version"])) for r in json.loads(text)
    )
