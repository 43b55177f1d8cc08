"""The embedded registry's storage: one SQLite file, WAL, every write one transaction.

Tables: ``schemas`` (global ids; ``AUTOINCREMENT`` so an id is never handed out twice, even
after permanent deletes), ``versions`` (subject, version -> schema id, soft-deleted flag) and
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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from api.registry import errors as e
from api.registry.avro import CanonicalSchema, canonical_json, canonicalize, fingerprint_of
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
MODES: Final = ("READWRITE", "READONLY")
DEFAULT_COMPATIBILITY: Final = "BACKWARD"
DEFAULT_MODE: Final = "READWRITE"
GLOBAL: Final = ""  # the subject under which global settings are stored
MAX_VERSION: Final = 2**31 - 1

_SCHEMA_DDL: Final = """
CREATE TABLE IF NOT EXISTS schemas (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    guid TEXT NOT NULL UNIQUE,
    schema_type TEXT NOT NULL,
    identity TEXT NOT NULL UNIQUE,
    fingerprint TEXT NOT NULL,
    schema_text TEXT NOT NULL,
    metadata TEXT,
    rule_set TEXT
);
CREATE TABLE IF NOT EXISTS versions (
    subject TEXT NOT NULL,
    version INTEGER NOT NULL,
    schema_id INTEGER NOT NULL REFERENCES schemas(id),
    deleted INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (subject, version)
);
CREATE INDEX IF NOT EXISTS versions_by_schema ON versions(schema_id);
CREATE TABLE IF NOT EXISTS settings (
    scope TEXT NOT NULL,
    subject TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (scope, subject)
);
"""

#: no control characters (as Confluent), no lone surrogates (bytes that were not UTF-8)
_SUBJECT_RE: Final = re.compile(r"^[^\x00-\x1f\x7f\ud800-\udfff]{1,255}$")
#: An integer of at most 19 digits (any id or version fits; longer text is no number Python
#: will convert: over 4,300 digits int() refuses it)
_INTEGER_RE: Final = re.compile(r"-?[0-9]{1,19}")
MAX_SCHEMA_ID: Final = 2**63 - 1


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

    def to_json(self) -> dict[str, Any]:
        """The version as Confluent answers it (``schemaType`` only when not AVRO)."""
        out: dict[str, Any] = {
            "subject": self.subject,
            "version": self.version,
            "id": self.schema_id,
            "guid": self.guid,
        }
        return out | schema_body(self.schema_type, self.schema, self.metadata, self.rule_set)


def schema_body(
    schema_type: str,
    schema: str,
    metadata: dict[str, Any] | None,
    rule_set: dict[str, Any] | None,
) -> dict[str, Any]:
    """The schema part of a registry answer, as Confluent writes it (AVRO's type left out)."""
    out: dict[str, Any] = {}
    if schema_type != "AVRO":
        out["schemaType"] = schema_type
    out["schema"] = schema
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

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.schema_id, "guid": self.guid}
        return out | schema_body(self.schema_type, self.schema, self.metadata, self.rule_set)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A schema offered for registration, lookup or a compatibility test."""

    canonical: CanonicalSchema
    metadata: dict[str, Any] | None = None
    rule_set: dict[str, Any] | None = None

    @property
    def identity(self) -> str:
        return fingerprint_of(
            [
                self.canonical.schema_type,
                self.canonical.fingerprint,
                canonical_json(self.metadata),
                canonical_json(self.rule_set),
            ]
        )


def make_candidate(
    schema: str,
    schema_type: str = "AVRO",
    metadata: Any = None,
    rule_set: Any = None,
) -> Candidate:
    """Parse and check a schema with its optional metadata and rule set."""
    return Candidate(
        canonicalize(schema, schema_type), _check_metadata(metadata), _check_object(rule_set)
    )


def _check_metadata(metadata: Any) -> dict[str, Any] | None:
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


def _check_object(value: Any) -> dict[str, Any] | None:
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
    """A schema id from a URL; anything that cannot be one (not a number, out of range) is a
    schema that does not exist (40403), as for Confluent."""
    if not _INTEGER_RE.fullmatch(text) or not 1 <= int(text) <= MAX_SCHEMA_ID:
        raise e.schema_not_found(text)
    return int(text)


def check_level(value: Any) -> str:
    """A compatibility level name (any case), or 42203."""
    if not isinstance(value, str) or value.upper() not in COMPATIBILITY_LEVELS:
        raise e.invalid_compatibility(value)
    return value.upper()


def check_mode(value: Any) -> str:
    if not isinstance(value, str) or value.upper() not in MODES:
        raise RegistryError(
            e.INVALID_MODE,
            f"Invalid mode {value!r}. Valid values are READWRITE and READONLY",
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
        self._db.execute("PRAGMA foreign_keys=ON")
        with self._write() as db:
            for statement in _SCHEMA_DDL.split(";"):
                if statement.strip():
                    db.execute(statement)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def data_version(self) -> int:
        """SQLite's ``PRAGMA data_version``: it changes when another connection (another
        process) has committed to the file since this connection last looked."""
        with self._read() as db:
            return int(db.execute("PRAGMA data_version").fetchone()[0])

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
        """The subject's value, else the global one, else ``default``."""
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
            found = self._setting(db, kind.scope, subject)
        if found is not None:
            return found
        raise RegistryError(
            kind.unconfigured_code,
            f"Subject '{subject}' does not have subject-level {kind.scope} configured",
        )

    def _set_setting(self, kind: _SettingKind, raw: Any, subject: str | None) -> str:
        value = kind.check(raw)
        with self._write() as db:
            self._put_setting(db, kind.scope, subject, value)
        return value

    def get_compatibility(self, subject: str | None = None, default_to_global: bool = False) -> str:
        """The level of ``subject`` (40408 when unset, unless ``default_to_global``) or global."""
        return self._get_setting(_COMPATIBILITY, subject, default_to_global)

    def set_compatibility(self, level: Any, subject: str | None = None) -> str:
        return self._set_setting(_COMPATIBILITY, level, subject)

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

    def set_mode(self, mode: Any, subject: str | None = None) -> str:
        return self._set_setting(_MODE, mode, subject)

    def delete_mode(self, subject: str) -> str:
        with self._write() as db:
            current = self._effective(db, "mode", subject, DEFAULT_MODE)
            db.execute("DELETE FROM settings WHERE scope = 'mode' AND subject = ?", (subject,))
        return current

    def _put_setting(
        self, db: sqlite3.Connection, scope: str, subject: str | None, value: str
    ) -> None:
        db.execute(
            "INSERT INTO settings(scope, subject, value) VALUES (?, ?, ?) "
            "ON CONFLICT(scope, subject) DO UPDATE SET value = excluded.value",
            (scope, GLOBAL if subject is None else subject, value),
        )

    def _check_writable(self, db: sqlite3.Connection, subject: str | None) -> None:
        mode = self._effective(db, "mode", subject or GLOBAL, DEFAULT_MODE)
        if mode == "READONLY":
            where = f"Subject {subject}" if subject else "The registry"
            raise RegistryError(e.OPERATION_NOT_PERMITTED, f"{where} is in read-only mode")

    # --- reading ------------------------------------------------------------------------------

    _VERSION_SQL: Final = (
        "SELECT v.subject, v.version, s.id, s.guid, s.schema_type, s.schema_text, s.metadata, "
        "s.rule_set, v.deleted, s.fingerprint FROM versions v JOIN schemas s ON s.id = v.schema_id "
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
        """Subject names, sorted; soft-deleted ones only with ``deleted``/``deleted_only``."""
        with self._read() as db:
            rows = db.execute(
                "SELECT subject, MIN(deleted) FROM versions GROUP BY subject ORDER BY subject"
            ).fetchall()
        out = []
        for subject, all_deleted in rows:
            if prefix and not subject.startswith(prefix):
                continue
            if deleted_only and not all_deleted:
                # a subject with live versions may still hold soft-deleted ones
                with self._read() as db:
                    if not db.execute(
                        "SELECT 1 FROM versions WHERE subject = ? AND deleted = 1 LIMIT 1",
                        (subject,),
                    ).fetchone():
                        continue
            elif not deleted and not deleted_only and all_deleted:
                continue
            out.append(subject)
        return out

    def versions(self, subject: str, deleted: bool = False) -> list[int]:
        with self._read() as db:
            found = self._versions(db, subject, include_deleted=deleted)
        if not found:
            raise e.subject_not_found(subject)
        return [v.version for v in found]

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
                "SELECT s.id, s.guid, s.schema_type, s.schema_text, s.metadata, s.rule_set "
                f"FROM schemas s WHERE s.{column} = ? AND EXISTS "
                "(SELECT 1 FROM versions v WHERE v.schema_id = s.id)",
                (value,),
            ).fetchone()
        if row is None:
            raise e.schema_not_found(value)
        return self._schema_of(row)

    @staticmethod
    def _schema_of(row: tuple[Any, ...]) -> StoredSchema:
        return StoredSchema(
            schema_id=int(row[0]),
            guid=row[1],
            schema_type=row[2],
            schema=row[3],
            metadata=json.loads(row[4]) if row[4] else None,
            rule_set=json.loads(row[5]) if row[5] else None,
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

    def max_schema_id(self) -> int:
        """The highest id ever handed out (0 when none)."""
        with self._read() as db:
            row = db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'schemas'").fetchone()
        return int(row[0]) if row else 0

    # --- lookup and compatibility -------------------------------------------------------------

    @staticmethod
    def _matches(version: StoredVersion, candidate: Candidate, fingerprint: str) -> bool:
        if version.schema_type != candidate.canonical.schema_type:
            return False
        if version.fingerprint != fingerprint:
            return False
        if candidate.metadata is not None and canonical_json(version.metadata) != canonical_json(
            candidate.metadata
        ):
            return False
        return candidate.rule_set is None or canonical_json(version.rule_set) == canonical_json(
            candidate.rule_set
        )

    def _find(self, versions: list[StoredVersion], candidate: Candidate) -> StoredVersion | None:
        fingerprint = candidate.canonical.fingerprint
        for v in reversed(versions):
            if self._matches(v, candidate, fingerprint):
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
        """Compatibility of a candidate with one version, or with the level's versions."""
        with self._read() as db:
            live = self._versions(db, subject, include_deleted=False)
            level = self._effective(db, "compatibility", subject, DEFAULT_COMPATIBILITY)
        if version is None:
            return self._verdict(candidate, live, level)
        number = parse_version(version)
        if not live:
            if number is None:
                return True, []
            raise e.subject_not_found(subject)
        if number is None:
            against = live[-1]
        else:
            picked = [v for v in live if v.version == number]
            if not picked:
                raise e.version_not_found(number)
            against = picked[0]
        return self._verdict(candidate, [against], level)

    @staticmethod
    def _verdict(
        candidate: Candidate, previous: list[StoredVersion], level: str
    ) -> tuple[bool, list[str]]:
        """The verdict against ``previous`` (live versions, oldest first), by the one
        :func:`~contracts.diff.verdict.schema_verdict` (messages name real version numbers)."""
        from contracts.diff.verdict import schema_verdict

        found = schema_verdict(
            candidate.canonical.text, [(v.version, v.schema) for v in previous], level
        )
        return found.compatible, list(found.messages)

    # --- writing ------------------------------------------------------------------------------

    def register(self, subject: str, candidate: Candidate) -> StoredVersion:
        """Register a schema under a subject, Confluent-style.

        An identical schema already live under the subject answers its existing version (no
        compatibility check, no new version). Without metadata in the request, the latest
        version's metadata and rule set carry over. Otherwise the schema must be compatible
        with the subject's live versions at the subject's level (409 otherwise); the global id
        is reused when the same schema (with the same metadata) exists under any subject.
        """
        check_subject(subject)
        with self._write() as db:
            self._check_writable(db, subject)
            live = self._versions(db, subject, include_deleted=False)
            existing = self._find(live, candidate)
            if existing is not None:
                return existing
            if live and candidate.metadata is None and candidate.rule_set is None:
                latest = live[-1]
                candidate = Candidate(candidate.canonical, latest.metadata, latest.rule_set)
            level = self._effective(db, "compatibility", subject, DEFAULT_COMPATIBILITY)
            ok, messages = self._verdict(candidate, live, level)
            if not ok:
                raise RegistryError(
                    e.INCOMPATIBLE_SCHEMA,
                    f"Schema being registered is incompatible with an earlier schema for "
                    f'subject "{subject}", details: [{"; ".join(messages)}]',
                )
            schema_id, guid = self._schema_id_for(db, candidate)
            row = db.execute(
                "SELECT COALESCE(MAX(version), 0) FROM versions WHERE subject = ?", (subject,)
            ).fetchone()
            version = int(row[0]) + 1
            db.execute(
                "INSERT INTO versions(subject, version, schema_id, deleted) VALUES (?, ?, ?, 0)",
                (subject, version, schema_id),
            )
        return StoredVersion(
            subject=subject,
            version=version,
            schema_id=schema_id,
            guid=guid,
            schema_type=candidate.canonical.schema_type,
            schema=self._stored_text(schema_id, candidate),
            metadata=candidate.metadata,
            rule_set=candidate.rule_set,
            deleted=False,
            fingerprint=candidate.canonical.fingerprint,
        )

    def _stored_text(self, schema_id: int, candidate: Candidate) -> str:
        with self._read() as db:
            row = db.execute(
                "SELECT schema_text FROM schemas WHERE id = ?", (schema_id,)
            ).fetchone()
        return str(row[0]) if row else candidate.canonical.text

    def _schema_id_for(self, db: sqlite3.Connection, candidate: Candidate) -> tuple[int, str]:
        identity = candidate.identity
        row = db.execute("SELECT id, guid FROM schemas WHERE identity = ?", (identity,)).fetchone()
        if row is not None:
            return int(row[0]), str(row[1])
        guid = str(uuid.uuid4())
        cursor = db.execute(
            "INSERT INTO schemas(guid, schema_type, identity, fingerprint, schema_text, metadata, "
            "rule_set) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                guid,
                candidate.canonical.schema_type,
                identity,
                candidate.canonical.fingerprint,
                candidate.canonical.text,
                canonical_json(candidate.metadata),
                canonical_json(candidate.rule_set),
            ),
        )
        assert cursor.lastrowid is not None
        return int(cursor.lastrowid), guid

    def delete_subject(self, subject: str, permanent: bool = False) -> list[int]:
        """Soft-delete every version, or (``permanent``) remove a soft-deleted subject."""
        with self._write() as db:
            self._check_writable(db, subject)
            found = self._versions(db, subject, include_deleted=True)
            if not found:
                raise e.subject_not_found(subject)
            live = [v.version for v in found if not v.deleted]
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
        """Soft-delete one version, or (``permanent``) remove a soft-deleted one."""
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
            if not permanent:
                if target.deleted:
                    raise RegistryError(
                        e.VERSION_SOFT_DELETED,
                        f"Subject '{subject}' Version {target.version} was soft deleted. Set "
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
