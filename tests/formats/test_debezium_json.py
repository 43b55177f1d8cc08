"""debezium-json: real Debezium MySQL output (Flink), its payload-only form, a PostgreSQL kcat dump."""

from __future__ import annotations

import copy
import datetime as dt
import decimal
import json

import pytest

from contracts.contract import load_contract, parse_contract
from contracts.errors import ContractFileError, DecodeError, InputError
from contracts.events import ChangeEvent, ControlRecord
from contracts.formats import candidates, get_format
from contracts.formats.base import InferOptions, Message
from contracts.schema import parse_connect

from .spec import FormatSpec

FLINK = "flink-debezium-data-schema-include.txt"
NO_SCHEMA = "flink-schemas-disabled.jsonl"
PG = "postgres-orders.kcat.jsonl"


class TestDebeziumJson(FormatSpec):
    format_name = "debezium-json"

    def first(self, name: str = FLINK) -> dict:
        return copy.deepcopy(self.messages(name)[0].value)

    # --- detect -----------------------------------------------------------------------------

    @pytest.mark.parametrize("sample", [FLINK, NO_SCHEMA, PG])
    def test_detects(self, sample: str) -> None:
        self.assert_detects(sample)

    def test_does_not_claim_cdl_or_arcion(self) -> None:
        for fmt, sample in (
            ("cdl-debezium-json", "seed-v2.jsonl"),
            ("cdl-json", "seed-v1.jsonl"),
            ("arcion-json", "realtime.json"),
        ):
            spec = FormatSpec()
            spec.format_name = fmt
            for m in spec.messages(sample):
                if m.value is not None:
                    assert not self.fmt.detect(m), (fmt, m.where)
                    assert candidates(Message(m.value)) == [fmt]

    # --- infer / derive ---------------------------------------------------------------------

    def test_infers_flink(self) -> None:
        result = self.assert_infers(FLINK, "flink.expected.yaml")
        assert [h.messages for h in result.history] == [16]
        assert result.warnings == ()

    def test_infers_payload_only_conservatively(self) -> None:
        result = self.assert_infers(NO_SCHEMA, "flink-schemas-disabled.expected.yaml")
        assert result.contract.option("schemas_enable") is False
        assert all(c["optional"] for c in result.contract.columns)
        assert any("no embedded schema" in w for w in result.warnings)

    def test_infers_postgres_with_history_key_and_controls(self) -> None:
        result = self.assert_infers(PG, "postgres-orders.expected.yaml")
        assert [(h.version, h.messages, h.columns[-1]) for h in result.history] == [
            (1, 2, "updated_at"),
            (2, 3, "note"),
        ]
        assert result.controls == {"message": 1, "tombstone": 1}
        assert result.contract.key == ("id",) and result.contract.topic == "pgserver1.public.orders"

    @pytest.mark.parametrize(
        ("sample", "contract"),
        [(FLINK, "flink.expected.yaml"), (PG, "postgres-orders.expected.yaml")],
    )
    def test_derives_the_embedded_schemas(self, sample: str, contract: str) -> None:
        rows = [m for m in self.messages(sample) if m.value is not None]
        last = [m for m in rows if m.value["payload"].get("op") not in ("m", "t")][-1]
        key = last.key["schema"] if isinstance(last.key, dict) else None
        self.assert_derives(contract, key, parse_connect(last.value["schema"]).to_json())

    def test_derives_default_names_from_server_name(self) -> None:
        text = self.fixture("flink.expected.yaml").read_text()
        for line in (
            "  envelope_name: dbserver1.inventory.products.Envelope\n",
            "  row_name: dbserver1.inventory.products.Value\n",
        ):
            text = text.replace(line, "")
        bare = parse_contract(text.replace("columns:", "key: [id]\ncolumns:", 1))
        derived = self.fmt.derive(bare)
        assert derived.value.name == "dbserver1.inventory.products.Envelope"
        assert derived.value.require_field("after").name == "dbserver1.inventory.products.Value"
        assert derived.key is not None and derived.key.name == "dbserver1.inventory.products.Key"

    def test_derive_needs_the_source_block(self) -> None:
        text = self.fixture("flink.expected.yaml").read_text()
        start, end = text.index("  source:"), text.index("  transaction:")
        with pytest.raises(ContractFileError, match=r"options\.source"):
            self.fmt.derive(parse_contract(text[:start] + text[end:]))

    # --- normalize --------------------------------------------------------------------------

    def test_normalizes_flink(self) -> None:
        events = self.assert_normalizes(FLINK, "flink.events.jsonl")
        assert [e.op for e in events].count("u") == 4 and events[-1].op == "d"

    def test_normalizes_payload_only_like_the_schema_form(self) -> None:
        self.assert_normalizes(NO_SCHEMA, "flink.events.jsonl", contract="flink.expected.yaml")
        raw = self.assert_normalizes(NO_SCHEMA, "flink-schemas-disabled.events.jsonl")
        assert raw[0].after == {
            "id": 101,
            "name": "scooter",
            "description": "Small 2-wheel scooter",
            "weight": 3.140000104904175,
        }

    def test_normalizes_postgres_typed_values(self) -> None:
        events = self.assert_normalizes(PG, "postgres-orders.events.jsonl")
        update = events[2]
        assert update.after is not None and update.before is not None
        assert update.after["amount"] == decimal.Decimal("-5.00")
        assert update.after["created_at"] == dt.datetime(2024, 2, 4, 11, 30, 15, tzinfo=dt.UTC)
        assert update.after["order_date"] == dt.date(2024, 2, 4)
        assert update.after["updated_at"].utcoffset() == dt.timedelta(hours=1)
        assert update.position == {"lsn": 24024800, "txId": 775}
        assert [e.op for e in events] == ["r", "c", "u", "d", "t"]

    def test_tombstones_and_messages_are_control_records(self) -> None:
        out = [r for m in self.messages(PG) for r in self.fmt.normalize(m)]
        controls = [r for r in out if isinstance(r, ControlRecord)]
        assert [(c.kind, c.key) for c in controls] == [("tombstone", {"id": 1}), ("message", None)]

    def test_ts_us_and_ns_stand_in_for_a_missing_ts_ms(self) -> None:
        value = json.loads(self.fixture(PG).read_text().splitlines()[1])["payload"]
        doc = json.loads(value)
        doc["payload"]["ts_ms"] = None
        (event,) = self.fmt.normalize(Message(doc, where="m"))
        assert isinstance(event, ChangeEvent) and event.ts_ms == 1707048015555

    # --- validate ---------------------------------------------------------------------------

    @pytest.mark.parametrize(
        ("sample", "contract"),
        [
            (FLINK, "flink.expected.yaml"),
            (NO_SCHEMA, "flink.expected.yaml"),
            (NO_SCHEMA, "flink-schemas-disabled.expected.yaml"),
        ],
    )
    def test_validates(self, sample: str, contract: str) -> None:
        self.assert_validates(sample, contract)

    def test_old_schema_versions_are_reported_against_the_latest(self) -> None:
        contract = load_contract(self.fixture("postgres-orders.expected.yaml"))
        first = self.messages(PG)[0]
        problems = {(v.path, v.kind) for v in self.fmt.validate(first, contract)}
        assert problems == {
            ("$.schema.fields[0].fields", "missing-column"),
            ("$.schema.fields[1].fields", "missing-column"),
            ("$.payload.after.note", "missing-column"),
        }

    def test_reports_schema_drift_and_bad_values_with_paths(self) -> None:
        contract = load_contract(self.fixture("flink.expected.yaml"))
        doc = self.first()
        after = doc["schema"]["fields"][1]
        after["fields"][3]["type"] = "float"
        after["fields"].append({"type": "string", "optional": True, "field": "color"})
        doc["schema"]["fields"][2]["fields"].pop()
        doc["payload"]["after"].update(id="101", color="red")
        del doc["payload"]["after"]["name"]
        got = {(v.path, v.kind) for v in self.fmt.validate(Message(doc, where="f:1"), contract)}
        assert got == {
            ("$.schema.fields[1].fields[3]", "wrong-type"),
            ("$.schema.fields[1].fields[4]", "extra-column"),
            ("$.schema.fields[2]", "schema-drift"),
            ("$.payload.after.id", "wrong-type"),
            ("$.payload.after.name", "missing-column"),
            ("$.payload.after.color", "extra-column"),
        }

    def test_reports_undecodable_values(self) -> None:
        contract = load_contract(self.fixture("postgres-orders.expected.yaml"))
        doc = json.loads(json.loads(self.fixture(PG).read_text().splitlines()[2])["payload"])
        doc["payload"]["after"]["amount"] = "%%%not base64"
        doc["payload"]["after"]["updated_at"] = "yesterday"
        got = [(v.path, v.kind) for v in self.fmt.validate(Message(doc, where="f:3"), contract)]
        assert got == [
            ("$.payload.after.amount", "undecodable"),
            ("$.payload.after.updated_at", "undecodable"),
        ]
        with pytest.raises(DecodeError) as err:
            self.fmt.normalize(Message(doc, where="f:3"))
        assert err.value.where == "f:3 $.payload.after.amount"

    # --- bad input --------------------------------------------------------------------------

    def test_unknown_op_code(self) -> None:
        doc = self.first()
        doc["payload"]["op"] = "x"
        with pytest.raises(DecodeError, match="unknown op code 'x'") as err:
            self.fmt.normalize(Message(doc, where="in.json:4"))
        assert err.value.where == "in.json:4 $.payload.op"
        (v,) = self.fmt.validate(
            Message(doc, where="in.json:4"), load_contract(self.fixture("flink.expected.yaml"))
        )
        assert (v.path, v.kind) == ("$.payload.op", "envelope")

    @pytest.mark.parametrize(
        ("mutate", "error", "where"),
        [
            (
                lambda d: d["schema"]["fields"][0].update(type="decimal"),
                InputError,
                "$.schema.fields[0].type",
            ),
            (lambda d: d.update(payload=[1]), InputError, "$.payload"),
            (lambda d: d["payload"].update(source="mysql"), InputError, "$.payload.source"),
            (lambda d: d["payload"]["after"].update(id=2**40), DecodeError, "$.payload.after.id"),
            (lambda d: d["payload"].update(ts_ms="soon"), DecodeError, "$.payload.ts_ms"),
        ],
    )
    def test_bad_messages_raise_located_errors(self, mutate, error, where) -> None:  # type: ignore[no-untyped-def]
        doc = self.first()
        mutate(doc)
        with pytest.raises(error) as err:
            self.fmt.normalize(Message(doc, where="x.json:9"))
        assert err.value.where == f"x.json:9 {where}"

    def test_not_an_object(self) -> None:
        with pytest.raises(InputError, match="JSON object"):
            self.fmt.normalize(Message([1, 2], where="x:1"))
        with pytest.raises(InputError, match="no debezium-json row change"):
            self.fmt.infer([Message(None)], InferOptions())

    def test_more_than_one_table(self) -> None:
        other = self.first()
        other["payload"]["source"]["table"] = "customers"
        with pytest.raises(InputError, match="more than one table"):
            self.fmt.infer([Message(self.first()), Message(other, where="f:2")], InferOptions())

    def test_format_is_registered(self) -> None:
        assert get_format("debezium-json") is self.fmt
