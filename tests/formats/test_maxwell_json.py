"""maxwell-json: Flink's maxwell-data.txt (with MaxwellJsonSerDerTest's changelog), Paimon's
samples and the examples of Maxwell's own docs."""

from __future__ import annotations

import pytest

from contracts.contract import load_contract, parse_contract
from contracts.errors import InputError
from contracts.events import ChangeEvent, ControlRecord
from contracts.formats.base import InferOptions, Message

from .spec import FormatSpec

SAMPLES = [
    ("flink-maxwell-data", "txt"),
    ("maxwell-docs-bootstrap", "jsonl"),
    ("maxwell-docs-insert-ddl", "jsonl"),
    ("maxwell-bootstrap-insert", "jsonl"),
    ("paimon-schemaevolution-2", "jsonl"),
]

#: MaxwellJsonSerDerTest.testSerializationDeserialization's expected changelog: a Flink row
#: kind and (id, name, description, weight); an update is its -U and +U rows.
FLINK_CHANGELOG = """
+I 101 scooter|Small 2-wheel scooter|3.14
+I 102 car battery|12V car battery|8.1
+I 103 12-pack drill bits|12-pack of drill bits with sizes ranging from #40 to #3|0.8
+I 104 hammer|12oz carpenter's hammer|0.75
+I 105 hammer|14oz carpenter's hammer|0.875
+I 106 hammer|16oz carpenter's hammer|1.0
+I 107 rocks|box of assorted rocks|5.3
+I 108 jacket|water resistent black wind breaker|0.1
+I 109 spare tire|24 inch spare tire|22.2
-U 106 hammer|16oz carpenter's hammer|1.0
+U 106 hammer|18oz carpenter hammer|1.0
-U 107 rocks|box of assorted rocks|5.3
+U 107 rocks|box of assorted rocks|5.1
+I 110 jacket|water resistent white wind breaker|0.2
+I 111 scooter|Big 2-wheel scooter |5.18
-U 110 jacket|water resistent white wind breaker|0.2
+U 110 jacket|new water resistent white wind breaker|0.5
-U 111 scooter|Big 2-wheel scooter |5.18
+U 111 scooter|Big 2-wheel scooter |5.17
-D 111 scooter|Big 2-wheel scooter |5.17
-U 101 scooter|Small 2-wheel scooter|3.14
+U 101 scooter|Small 2-wheel scooter|5.17
-U 102 car battery|12V car battery|8.1
+U 102 car battery|12V car battery|5.17
-D 102 car battery|12V car battery|5.17
-D 103 12-pack drill bits|12-pack of drill bits with sizes ranging from #40 to #3|0.8
"""


def changelog(events: list[ChangeEvent]) -> list[str]:
    """Events as Flink's changelog rows (RowKind and the four columns)."""
    out = []
    for e in events:
        rows = {"c": [("+I", e.after)], "d": [("-D", e.before)]}.get(
            e.op, [("-U", e.before), ("+U", e.after)]
        )
        for kind, row in rows:
            assert row is not None
            out.append(f"{kind} {row['id']} {row['name']}|{row['description']}|{row['weight']}")
    return out


class TestMaxwellJson(FormatSpec):
    format_name = "maxwell-json"

    @pytest.mark.parametrize(("sample", "ext"), SAMPLES)
    def test_samples(self, sample: str, ext: str) -> None:
        self.assert_detects(f"{sample}.{ext}")
        contract = f"{sample}.expected.yaml"
        self.assert_infers(f"{sample}.{ext}", contract)
        self.assert_normalizes(f"{sample}.{ext}", f"{sample}.events.jsonl", contract)
        self.assert_validates(f"{sample}.{ext}", contract)

    def test_flink_changelog(self) -> None:
        events = self.assert_normalizes(
            "flink-maxwell-data.txt",
            "flink-maxwell-data.events.jsonl",
            "flink-maxwell-data.expected.yaml",
        )
        assert changelog(events) == FLINK_CHANGELOG.strip().splitlines()
        # testDeserializationWithMetadata: ts (seconds) 1596684883 is 1596684883000 ms
        first = events[0]
        assert first.source_ts_ms == 1596684883000 and first.ts_ms is None
        assert first.table.database == "test" and first.table.name == "product"
        assert first.key == {"id": 101}
        assert first.position == {"xid": 7125, "xoffset": 0}
        assert events[8].position == {"xid": 7125, "commit": True}

    def test_inferred_from_values(self) -> None:
        contract = load_contract(self.fixture("flink-maxwell-data.expected.yaml"))
        assert contract.key == ("id",)
        types = {c["field"]: c["type"] for c in contract.columns}
        assert types == {
            "id": "int64",
            "name": "string",
            "description": "string",
            "weight": "double",
        }

    def test_partial_old_is_overlaid_on_data(self) -> None:
        c = load_contract(self.fixture("flink-maxwell-data.expected.yaml"))
        update = self.messages("flink-maxwell-data.txt")[13]
        (event,) = self.fmt.normalize(update, c)
        assert isinstance(event, ChangeEvent) and event.op == "u"
        assert event.before == {
            "id": 110,
            "name": "jacket",
            "description": "water resistent white wind breaker",
            "weight": 0.2,
        }

    def test_controls_and_bootstrap(self) -> None:
        result = self.fmt.infer(self.messages("maxwell-bootstrap-insert.jsonl"), InferOptions())
        assert result.controls == {"other": 2}
        out = [
            n
            for m in self.messages("maxwell-bootstrap-insert.jsonl")
            for n in self.fmt.normalize(m)
        ]
        assert [n.reason for n in out if isinstance(n, ControlRecord)] == [
            "bootstrap-start",
            "bootstrap-complete",
        ]
        assert [n.op for n in out if isinstance(n, ChangeEvent)] == ["r", "r", "u", "u"]
        ddl = self.messages("maxwell-docs-insert-ddl.jsonl")[1]
        (record,) = self.fmt.normalize(ddl)
        assert isinstance(record, ControlRecord) and record.kind == "ddl"

    def test_bad_messages_are_located(self) -> None:
        c = load_contract(self.fixture("flink-maxwell-data.expected.yaml"))
        doc = self.messages("flink-maxwell-data.txt")[0].value
        with pytest.raises(InputError, match="unknown type 'upsert'") as err:
            self.fmt.normalize(Message({**doc, "type": "upsert"}, where="f:1"), c)
        assert err.value.where == "f:1 $.type"
        with pytest.raises(InputError, match="needs its after image") as err:
            self.fmt.normalize(Message({**doc, "data": None}, where="f:2"), c)
        assert err.value.where == "f:2 $.data"
        (violation,) = self.fmt.validate(
            Message({**doc, "data": {**doc["data"], "id": "x"}}, where="f:3"), c
        )
        assert violation.path == "$.data.id"

    def test_control_records_and_tombstones_read_as_spark_reads_them(self) -> None:
        # tests/parity/fixtures/maxwell-json-control-*.json: a control record's table is read as
        # far as it can be; its time must be an integer; a null value is a tombstone
        ddl = self.messages("maxwell-docs-insert-ddl.jsonl")[1].value
        (record,) = self.fmt.normalize(Message({**ddl, "database": ["shop"]}))
        assert isinstance(record, ControlRecord) and record.kind == "ddl"
        with pytest.raises(InputError, match="expected an integer") as err:
            self.fmt.normalize(Message({**ddl, "ts": 1.5}, where="f:1"))
        assert err.value.where == "f:1 $.ts"
        (record,) = self.fmt.normalize(Message(None))
        assert isinstance(record, ControlRecord) and record.kind == "tombstone"

    def test_derive_envelope(self) -> None:
        derived = self.fmt.derive(load_contract(self.fixture("flink-maxwell-data.expected.yaml")))
        assert derived.key is None
        fields = [f["field"] for f in derived.value.to_json()["fields"]]
        assert fields[:4] == ["database", "table", "type", "ts"]
        assert {"data", "old", "xid", "xoffset", "commit", "primary_key_columns"} <= set(fields)

    def test_json_numbers_go_through_the_column_text_rule(self) -> None:
        # tests/parity/fixtures/maxwell-json-json-number-through-the-column-text-rule.json:
        # Spark reads a number token's text with the column's text rule, and so must Python
        # (an int16 held 70000 and a timestamp column kept the bare number 5 before)
        c = parse_contract(NUMBERS_CONTRACT)
        row = {"id": 1, "quantity": 7, "weight": 2.5, "at": "2026-11-27 09:30:00.123456"}
        doc = {"database": "shop", "table": "orders", "type": "insert", "ts": 1, "data": row}
        (event,) = self.fmt.normalize(Message(doc), c)
        assert isinstance(event, ChangeEvent) and event.after is not None
        assert event.after["at"].isoformat() == "2026-11-27T09:30:00.123456+00:00"
        bad = {"quantity": 70000, "at": 5, "weight": 1e50}
        for column, value in bad.items():
            message = Message({**doc, "data": {**row, column: value}}, where="f:1")
            with pytest.raises(InputError) as err:
                self.fmt.normalize(message, c)
            assert err.value.where == f"f:1 $.data.{column}"


NUMBERS_CONTRACT = """
name: numbers
format: maxwell-json
table: {database: shop, name: orders}
key: [id]
columns:
  - {field: id, type: int64, optional: false}
  - {field: quantity, type: int16, optional: true}
  - {field: weight, type: float, optional: true}
  - {field: at, type: int64, optional: true, name: io.debezium.time.MicroTimestamp, version: 1}
"""
