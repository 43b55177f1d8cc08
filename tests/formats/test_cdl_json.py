"""cdl-json: Huawei CDL JSON v1.0 (the seed's sample, and variants edited from it)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from contracts.contract import load_contract
from contracts.errors import DecodeError
from contracts.events import ChangeEvent, ControlRecord
from contracts.formats import candidates
from contracts.formats.base import InferOptions, Message
from contracts.schema import parse_connect

from .spec import FormatSpec

SEED = "seed-v1.jsonl"


class TestCdlJson(FormatSpec):
    format_name = "cdl-json"

    def seed(self) -> dict[str, Any]:
        value: dict[str, Any] = copy.deepcopy(self.messages(SEED)[0].value)
        return value

    def test_detects(self) -> None:
        self.assert_detects(SEED)

    def test_no_other_format_claims_it(self) -> None:
        assert candidates(Message(self.seed())) == ["cdl-json"]

    def test_infers(self) -> None:
        result = self.assert_infers(SEED, "seed-v1.expected.yaml")
        assert result.contract.key == ("id",)
        assert result.contract.table_id.qualified() == "public.ct_pg2hudi"

    def test_derives_the_seed_schema(self) -> None:
        embedded = parse_connect(self.seed()["schema"]).to_json()
        self.assert_derives("seed-v1.expected.yaml", None, embedded)
        assert embedded["name"] == "public.ct_pg2hudi"

    def test_normalizes(self) -> None:
        (event,) = self.assert_normalizes(SEED, "seed-v1.events.jsonl")
        assert event.position == {"lsn": 163955221008, "txId": 57227595}
        assert event.key == {"id": 34} and event.source_ts_ms == 1707047996013

    def test_validates(self) -> None:
        self.assert_validates(SEED, "seed-v1.expected.yaml")

    def test_update_and_delete(self) -> None:
        update = self.seed()
        update["payload"].update(
            OPERATION="UPDATE",
            before={"count1": 13, "id": 34, "time1": None, "decimalNum": "1.50"},
            data={"count1": 14, "id": 34, "time1": 1707047996013, "decimalNum": "2.25"},
        )
        delete = self.seed()
        delete["payload"].update(OPERATION="DELETE", before=delete["payload"]["data"], data=None)
        events = [e for d in (update, delete) for e in self.fmt.normalize(Message(d))]
        assert all(isinstance(e, ChangeEvent) for e in events)
        assert [e.to_json()["op"] for e in events] == ["u", "d"]  # type: ignore[union-attr]
        assert events[0].to_json()["after"]["time1"] == "2024-02-04T11:59:56.013000+00:00"
        assert events[0].to_json()["before"]["decimalNum"] == "1.50"

    def test_heartbeats_are_not_row_changes(self) -> None:
        beat = self.seed()
        beat["payload"].update(OPERATION=None, data=None, before=None, unique=None)
        only = {"HEARTBEAT_IDENTIFIER": "279fb050-0143-45c1-b184-50bc48c2461c"}
        for value in (beat, only):
            (record,) = self.fmt.normalize(Message(value))
            assert isinstance(record, ControlRecord) and record.kind == "heartbeat"
        result = self.fmt.infer([Message(only), *self.messages(SEED)], InferOptions())
        assert result.controls == {"heartbeat": 1}
        assert (
            self.fmt.validate(Message(beat), load_contract(self.fixture("seed-v1.expected.yaml")))
            == []
        )

    def test_a_heartbeat_whose_time_is_not_an_integer_is_bad(self) -> None:
        # as Spark's typed parse refuses it (tests/parity/fixtures/cdl-json-heartbeat-...)
        beat = self.seed()
        beat["payload"].update(OPERATION=None, data=None, before=None, unique=None)
        (record,) = self.fmt.normalize(Message(beat))
        assert isinstance(record, ControlRecord) and record.kind == "heartbeat"
        beat["payload"]["TIMESTAMP"] = "123"
        with pytest.raises(DecodeError, match="expected an integer") as err:
            self.fmt.normalize(Message(beat, where="w"))
        assert err.value.where == "w $.payload.TIMESTAMP"

    def test_unknown_operation(self) -> None:
        bad = self.seed()
        bad["payload"]["OPERATION"] = "UPSERT"
        with pytest.raises(DecodeError, match="unknown OPERATION 'UPSERT'") as err:
            self.fmt.normalize(Message(bad, where="cdl.jsonl:7"))
        assert err.value.where == "cdl.jsonl:7 $.payload.OPERATION"

    def test_drift_and_wrong_values(self) -> None:
        contract = load_contract(self.fixture("seed-v1.expected.yaml"))
        bad = self.seed()
        bad["schema"]["fields"][8]["fields"][0]["type"] = "int32"
        bad["payload"]["data"]["id"] = "34"
        got = {(v.path, v.kind) for v in self.fmt.validate(Message(bad, where="w"), contract)}
        assert got == {
            ("$.schema.fields[8].fields[0]", "wrong-type"),
            ("$.payload.data.id", "wrong-type"),
        }
