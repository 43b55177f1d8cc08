"""Write the sample topics that `cdc-contracts demo` reads (cli/demo_topics/, package data that
examples/topics/ links to).

One file per topic, grouped by format: the seed documents' own examples (cleaned into valid
JSON/CSV, see tests/fixtures/<format>/PROVENANCE.md for where each comes from) and generated
streams of a few thousand changes (seeded, so the files are reproducible)::

    .venv/bin/python examples/make_topics.py
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.datagen import (  # noqa: E402
    arcion_s3_json_messages,
    canal_messages,
    debezium_messages,
    write_jsonl,
)

TOPICS = ROOT / "cli" / "demo_topics"  # examples/topics links here; shipped in the wheel
FIXTURES = ROOT / "tests" / "fixtures"

#: (format, topic file name, fixture it is copied from)
COPIED = (
    (
        "debezium-json",
        "dbserver1.inventory.products.jsonl",
        "debezium-json/flink-debezium-data-schema-include.txt",
    ),
    ("arcion-json", "KAFKA_Connector.tpch.region.json", "arcion-json/realtime.json"),
    ("cdl-json", "cdl.public.ct_pg2hudi.jsonl", "cdl-json/seed-v1.jsonl"),
    ("cdl-debezium-json", "cdl2.public.ct_pg2hudi.jsonl", "cdl-debezium-json/seed-v2.jsonl"),
    ("arcion-s3-json", "tpch_scale_0_01.nation.json", "arcion-s3-json/snapshot-nation.json"),
    ("arcion-s3-csv", "tpch.region.csv", "arcion-s3-csv/realtime-region-header.csv"),
    ("shareplex-json", "CL_BIZ1.MIO_LOG.json", "shareplex-json/dts-examples.json"),
    ("canal-json", "inventory.products2.jsonl", "canal-json/flink-products.jsonl"),
    ("dts-avro", "shop.orders.avro", "dts-avro/orders.avro"),
    ("opencdc-json", "conduit.employees.jsonl", "opencdc-json/conduit-structured.jsonl"),
)

#: (format, topic file name, generator, number of changes)
GENERATED = (
    ("debezium-json", "dbserver1.shop.orders.jsonl", debezium_messages, 2_000),
    ("canal-json", "canal.shop.orders.jsonl", canal_messages, 3_000),
    ("arcion-s3-json", "arcion.shop.orders.jsonl", arcion_s3_json_messages, 3_000),
)


def main() -> None:
    if TOPICS.exists():
        shutil.rmtree(TOPICS)
    for fmt, name, fixture in COPIED:
        target = TOPICS / fmt / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(FIXTURES / fixture, target)
    for fmt, name, generate, count in GENERATED:
        target = TOPICS / fmt / name
        target.parent.mkdir(parents=True, exist_ok=True)
        write_jsonl(target, generate(count))
    total = sum(p.stat().st_size for p in TOPICS.rglob("*") if p.is_file())
    print(
        f"wrote {sum(1 for p in TOPICS.rglob('*') if p.is_file())} topic files, {total / 1e6:.1f} MB"
    )


if __name__ == "__main__":
    main()
