"""Derive benchmark: contracts from a migrations directory (200 Flyway files, 100 tables).

Run: ``.venv/bin/python -m benchmarks.derive_bench``. The baseline, measured in the same run
after warm-up, is sqlglot's tokenizer alone over the same files (what reading the SQL costs
before any statement is applied); derive's ratio to it is what applying the DDL and typing the
columns add.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from contracts.derive import DeriveRequest, derive_from_ddl
from contracts.sqltypes import tokenize

TYPES = (
    "BIGINT NOT NULL",
    "INT UNSIGNED",
    "DECIMAL(12,2) NOT NULL DEFAULT 0.00",
    "VARCHAR(200)",
    "DATETIME(6)",
    "TIMESTAMP NULL DEFAULT CURRENT_TIMESTAMP",
    "ENUM('a','b','c') NOT NULL DEFAULT 'a'",
    "JSON",
    "TINYINT(1) NOT NULL DEFAULT 0",
    "BLOB",
)


def write_migrations(root: Path, tables: int = 100, columns: int = 30, alters: int = 199) -> int:
    """V1 creates the tables; V2.. each alter one table. Returns the number of columns."""
    lines = ["CREATE DATABASE bench;", "USE bench;"]
    for t in range(tables):
        cols = [f"  c{c} {TYPES[c % len(TYPES)]}" for c in range(columns)]
        lines.append(f"CREATE TABLE t{t} (\n" + ",\n".join(cols) + ",\n  PRIMARY KEY (c0)\n);")
    (root / "V1__create.sql").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for v in range(alters):
        table = v % tables
        text = (
            f"ALTER TABLE bench.t{table} ADD COLUMN extra{v} VARCHAR(50) AFTER c1, "
            f"MODIFY c3 VARCHAR(255);\n"
        )
        (root / f"V{v + 2}__alter_{v}.sql").write_text(text, encoding="utf-8")
    return tables * columns + alters


def best(fn: Callable[[], object], runs: int = 5) -> float:
    """The fastest of ``runs`` timed calls, after one warm-up call."""
    fn()  # warm-up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        columns = write_migrations(root)
        files = sorted(root.glob("*.sql"))
        texts = [f.read_text(encoding="utf-8") for f in files]
        size = sum(len(t) for t in texts)
        request = DeriveRequest("debezium-json", "mysql", "bench")

        def tokenize_all() -> None:
            for text in texts:
                tokenize(text, "mysql")

        def derive() -> None:
            result = derive_from_ddl(root, request)
            assert len(result.contracts) == 100

        base = best(tokenize_all)
        took = best(derive)
        print(f"migrations: {len(files)} files, {size / 1e6:.2f} MB, 100 tables, {columns} columns")
        print(f"baseline sqlglot tokenize            {base * 1000:8.1f} ms")
        print(
            f"derive --from-ddl (debezium-json)     {took * 1000:8.1f} ms   "
            f"{100 / took:8.0f} tables/s   {columns / took:8.0f} columns/s   "
            f"{took / base:.2f}x the tokenizer"
        )


if __name__ == "__main__":
    main()
