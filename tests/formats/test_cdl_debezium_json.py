"""cdl-debezium-json: Huawei CDL "open-source Debezium JSON" v2.0 (seed sample and variants)."""

from __future__ import annotations

import copy
import datetime as dt
import decimal
from typing import Any

import pytest

from contracts.contract import load_contract
from contracts.errors import DecodeError
from contracts.events import ChangeEvent, ControlRecord
from contracts.formats import candidates, get_format
from contracts.formats.base import Message
from contracts.schema import parse_connect

from .spec import FormatSpec

SEED = "seed-v2.jsonl"


class TestCdlDebeziumJson(FormatSpec):
    format_name = "cdl-debezium-json"

    def seed(self) -> dict[str, Any]:
        value: dict[str, Any] = copy.deepcopy(self.messages(SEED)[0].value)
        return value

    def test_detects(self) -> None:
        self.assert_detects(SEED)

    def test_plain_debezium_and_cdl_v1_do_not_claim_it(self) -> None:
        assert candidates(Message(self.seed())) == ["cdl-debezium-json"]
        assert not get_format("debezium-json").detect(Message(self.seed()))

    def test_reuses_debezium_json(self) -> None:
        assert isinstance(self.fmt, type(get_format("debezium-json")))

    def test_infers(self) -> None:
        result = self.assert_infers(SEED, "seed-v2.expected.yaml")
        assert result.contract.key == ("id",)

    def test_derives_the_seed_schema(self) -> None:
        embedded = parse_connect(self.seed()["schema"]).to_json()
        self.assert_derives("seed-v2.expected.yaml", None, embedded)
        after = next(f for f in embedded["fields"] if f["field"] == "after")
        assert (embedded["name"], after["name"]) == ("public.ct_pg2hudi", "data")

    def test_normalizes(self) -> None:
        (event,) = self.assert_normalizes(SEED, "seed-v2.events.jsonl")
        assert event.position == {"lsn": 163955586912, "txId": 57227663}

    def test_validates(self) -> None:
        self.assert_validates(SEED, "seed-v2.expected.yaml")

    def test_vendor_decimal_and_timestamp_strings(self) -> None:
        doc = self.seed()
        doc["payload"].update(op="u", before=dict(doc["payload"]["after"]))
        doc["payload"]["after"].update(time1="2024-02-04 12:01:02.5", decimalNum="12.345")
        (event,) = self.fmt.normalize(Message(doc))
        assert isinstance(event, ChangeEvent) and event.after is not None
        assert event.after["decimalNum"] == decimal.Decimal("12.345")
        assert event.after["time1"] == dt.datetime(2024, 2, 4, 12, 1, 2, 500000, tzinfo=dt.UTC)
        doc["payload"]["after"]["decimalNum"] = "twelve"
        with pytest.raises(DecodeError) as err:
            self.fmt.normalize(Message(doc, where="v2:1"))
        assert err.value.where == "v2:1 $.payload.after.decimalNum"
        contract = load_contract(self.fixture("seed-v2.expected.yaml"))
        (v,) = self.fmt.validate(Message(doc, where="v2:1"), contract)
        assert (v.path, v.kind) == ("$.payload.after.decimalNum", "undecodable")

    def test_heartbeat_only_message(self) -> None:
        (record,) = self.fmt.normalize(Message({"HEARTBEAT_IDENTIFIER": "abc"}))
        assert isinstance(record, ControlRecord) and record.kind == "heartbeat"

    def test_missing_envelope_field_is_drift(self) -> None:
        doc = self.seed()
        doc["schema"]["fields"] = [
            f for f in doc["schema"]["fields"] if f["field"] != "LOB_COLUMNS"
        ]
        contract = load_contract(self.fixture("seed-v2.expected.yaml"))
        got = [(v.path, v.kind, v.message) for v in self.fmt.validate(Message(doc), contract)]
        assert got == [("$.schema.fields", "schema-drift", "envelope field LOB_COLUMNS is missing")]
