"""dts-avro: Alibaba DTS Avro Records (synthetic fixtures written by make_fixtures.py)."""

from __future__ import annotations

import datetime as dt
import decimal
import json

import pytest

from contracts.contract import load_contract
from contracts.errors import DecodeError, InputError
from contracts.events import ChangeEvent, ControlRecord
from contracts.formats.base import InferOptions, Message
from contracts.formats.dts_avro import fit_value, record_connect_schema, split_records
from contracts.schema import primitive

from .spec import FormatSpec

SAMPLES = ("orders.bin", "orders.confluent.bin", "orders.avro")


class TestDtsAvro(FormatSpec):
    format_name = "dts-avro"

    @pytest.mark.parametrize("sample", [*SAMPLES, "items-pg.bin"])
    def test_detects_every_framing(self, sample: str) -> None:
        self.assert_detects(sample)

    @pytest.mark.parametrize("sample", SAMPLES)
    def test_every_framing_reads_the_same_records(self, sample: str) -> None:
        plain = [m.value for m in self.messages("orders.bin")]
        assert [m.value for m in self.messages(sample)] == plain
        assert len(plain) == 10

    def test_where_names_offset_or_index(self) -> None:
        assert self.messages("orders.bin")[1].where.endswith("orders.bin@176")
        assert self.messages("orders.avro")[1].where.endswith("orders.avro#2")
        assert self.messages("orders.confluent.bin")[0].meta["schema_id"] == 7

    @pytest.mark.parametrize("sample", SAMPLES)
    def test_infers_latest_schema_with_history(self, sample: str) -> None:
        result = self.assert_infers(sample, "orders.expected.yaml")
        assert [len(v.columns) for v in result.history] == [22, 23]
        assert [v.messages for v in result.history] == [4, 1]
        assert result.controls == {"ddl": 2, "heartbeat": 1, "transaction": 2}

    def test_infers_from_value_kinds_for_other_sources(self) -> None:
        self.assert_infers("items-pg.bin", "items-pg.expected.yaml")

    def test_infer_options_name_and_topic(self) -> None:
        result = self.fmt.infer(
            self.messages("orders.bin"), InferOptions(name="orders", topic="dts_shop")
        )
        assert (result.contract.name, result.contract.topic) == ("orders", "dts_shop")

    def test_derives_the_fixed_record_schema(self) -> None:
        want = json.loads(self.fixture("record.connect.json").read_text())
        self.assert_derives("orders.expected.yaml", None, want)
        record = record_connect_schema()
        assert record.name == "com.alibaba.dts.formats.avro.Record"
        images = record.require_field("afterImages")
        assert images.optional and images.name == "io.confluent.connect.avro.Union"
        items = images.require_field("array").items
        assert items is not None
        assert "TimestampWithTimeZone" in items.field_names()

    @pytest.mark.parametrize("sample", SAMPLES)
    def test_normalizes(self, sample: str) -> None:
        self.assert_normalizes(sample, "orders.events.jsonl", "orders.expected.yaml")

    def test_normalizes_without_contract_to_same_typed_values(self) -> None:
        events = self.assert_normalizes("orders.bin", "orders.events.jsonl")
        insert = events[0]
        assert insert.after is not None
        assert insert.after["amount"] == decimal.Decimal("199.90")
        assert insert.after["created_at"] == dt.datetime(
            2026, 11, 20, 9, 30, 1, 123456, tzinfo=dt.UTC
        )
        assert insert.after["ship_date"] == dt.date(2026, 12, 2)
        assert insert.after["sku"] == b"\xde\xad\x01"
        assert insert.source_ts_ms == 1795771803000 and insert.ts_ms == 1795771803050
        assert insert.position["sourcePosition"] == "72450@78"

    def test_zoned_geometry_and_empty_objects(self) -> None:
        events = self.assert_normalizes(
            "items-pg.bin", "items-pg.events.jsonl", "items-pg.expected.yaml"
        )
        after = events[1].after
        assert after is not None
        assert after["valid_from"].utcoffset() == dt.timedelta(hours=8)
        assert after["retired"] is None and "ratio" not in after  # EmptyObject NULL / NONE

    def test_control_records_are_not_row_changes(self) -> None:
        out = [e for m in self.messages("orders.bin") for e in self.fmt.normalize(m)]
        controls = [e for e in out if isinstance(e, ControlRecord)]
        assert [c.kind for c in controls] == [
            "ddl",
            "transaction",
            "transaction",
            "heartbeat",
            "ddl",
        ]
        assert sum(isinstance(e, ChangeEvent) for e in out) == 5

    @pytest.mark.parametrize("sample", SAMPLES)
    def test_validates_own_contract(self, sample: str) -> None:
        self.assert_validates(sample, "orders.expected.yaml")

    def test_validate_reports_paths(self) -> None:
        contract = load_contract(self.fixture("orders.expected.yaml"))
        problems = [
            v for m in self.messages("bad/bad-values.bin") for v in self.fmt.validate(m, contract)
        ]
        got = [(v.where.rsplit("/", 1)[-1], v.path, v.kind) for v in problems]
        assert got == [
            ("bad-values.bin@0", "$.afterImages[1]", "undecodable"),
            ("bad-values.bin@1352", "$.afterImages[6]", "undecodable"),
        ]

    def test_validate_reports_drift_against_another_table(self) -> None:
        contract = load_contract(self.fixture("items-pg.expected.yaml"))
        insert = self.messages("orders.bin")[2]
        kinds = {v.kind for v in self.fmt.validate(insert, contract)}
        assert kinds == {"envelope", "extra-column", "missing-column"}

    def test_normalize_bad_value_names_path(self) -> None:
        bad = self.messages("bad/bad-values.bin")[0]
        with pytest.raises(DecodeError) as err:
            self.fmt.normalize(bad)
        assert err.value.where is not None and err.value.where.endswith("$.afterImages[1]")
        assert "customer_id" in err.value.what

    def test_truncated_stream_is_an_input_error(self) -> None:
        with pytest.raises(InputError) as err:
            self.messages("bad/truncated.bin")
        assert "truncated" in err.value.what and "@" in (err.value.where or "")

    def test_garbage_and_json_are_not_dts(self) -> None:
        assert not self.fmt.detect(Message(value=b"hello world, not avro"))
        assert not self.fmt.detect(Message(value={"op": "c", "after": {}}))
        with pytest.raises(InputError):
            list(split_records(b"\x02\x04garbage", "x.bin"))

    def test_fit_rejects_values_of_other_types(self) -> None:
        with pytest.raises(DecodeError):
            fit_value("12", primitive("int32"))
        with pytest.raises(DecodeError):
            fit_value(2**40, primitive("int32"))
        assert fit_value(5, primitive("bytes", name="io.debezium.data.Bits")) == b"\x05"
