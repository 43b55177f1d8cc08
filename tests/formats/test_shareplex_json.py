"""shareplex-json: SharePlex JSON as DTS writes it (seed 003 examples)."""

from __future__ import annotations

import pytest

from contracts.contract import load_contract
from contracts.errors import InputError
from contracts.events import ChangeEvent, ControlRecord
from contracts.formats.base import Message

from .spec import FormatSpec


def _msg(op: str, **parts: object) -> Message:
    return Message(
        {"meta": {"op": op, "table": "CL_BIZ1.MIO_LOG", "time": "2017-06-16T14:24:34"}, **parts},
        where="f:1",
    )


class TestShareplexJson(FormatSpec):
    format_name = "shareplex-json"

    def test_seed_samples(self) -> None:
        self.assert_detects("dts-examples.json")
        for suffix, typed in (("", False), (".typed", True)):
            contract = f"dts-examples{suffix}.expected.yaml"
            self.assert_infers("dts-examples.json", contract, infer_types=typed)
            self.assert_normalizes(
                "dts-examples.json", f"dts-examples{suffix}.events.jsonl", contract
            )
            self.assert_validates("dts-examples.json", contract)

    def test_update_after_is_key_overlaid_with_data(self) -> None:
        (event,) = self.fmt.normalize(self.messages("dts-examples.json")[1])
        assert isinstance(event, ChangeEvent) and event.op == "u"
        assert event.before is not None and event.before["CNTR_NO"] == "1171201606syui26"
        assert event.after is not None and event.after["CNTR_NO"] == "1171201606"
        assert event.after["MIO_LOG_ID"] == "32537893"

    def test_position_and_times(self) -> None:
        (event,) = self.fmt.normalize(self.messages("dts-examples.json")[0])
        assert isinstance(event, ChangeEvent)
        assert event.position == {
            "scn": "14589063118712",
            "rowid": "AAATGpAAIAAItcIAAA",
            "trans": "7.0.411499",
            "seq": 1,
            "idx": "1/11",
        }
        assert event.source_ts_ms == 1497623074000 and event.ts_ms == 1497623632000

    @pytest.mark.parametrize(
        ("op", "expected"),
        [
            ("INSERT", "c"),
            ("UPDATE", "u"),
            ("DELETE", "d"),
            ("TRUNCATE", "t"),
            ("UPDATE AFTER", "u"),
            ("ins", "c"),
        ],
    )
    def test_op_spellings(self, op: str, expected: str) -> None:
        (event,) = self.fmt.normalize(_msg(op, data={"MIO_LOG_ID": "1"}))
        assert isinstance(event, ChangeEvent) and event.op == expected

    @pytest.mark.parametrize(("op", "kind"), [("DROP COLUMN", "ddl"), ("UPDATE BEFORE", "other")])
    def test_controls(self, op: str, kind: str) -> None:
        (record,) = self.fmt.normalize(_msg(op, data={"MIO_LOG_ID": "1"}))
        assert isinstance(record, ControlRecord) and record.kind == kind

    def test_derive_envelope(self) -> None:
        derived = self.fmt.derive(load_contract(self.fixture("dts-examples.expected.yaml")))
        value = derived.value.to_json()
        assert [f["field"] for f in value["fields"]] == ["meta", "data", "key"]
        meta = [f["field"] for f in value["fields"][0]["fields"]]
        assert meta == [
            "time",
            "userid",
            "op",
            "scn",
            "rowid",
            "trans",
            "seq",
            "size",
            "table",
            "idx",
            "posttime",
        ]

    def test_validate_typed(self) -> None:
        contract = load_contract(self.fixture("dts-examples.typed.expected.yaml"))
        found = self.fmt.validate(_msg("ins", data={"MIO_LOG_ID": "x1", "OTHER": "1"}), contract)
        assert {(v.path, v.kind) for v in found} == {
            ("$.data.MIO_LOG_ID", "undecodable"),
            ("$.data.OTHER", "extra-column"),
        }
        wrong_table = Message({"meta": {"op": "ins", "table": "A.B"}, "data": {}}, where="f:2")
        assert [v.path for v in self.fmt.validate(wrong_table, contract)] == ["$.meta.table"]

    @pytest.mark.parametrize(
        ("doc", "path"),
        [
            ({"meta": {"op": "merge"}, "data": {}}, "$.meta.op"),
            ({"meta": {"op": 3}, "data": {}}, "$.meta.op"),
            ({"meta": "x", "data": {}}, "$.meta"),
            ({"meta": {"op": "ins"}, "data": {"A": {"nested": 1}}}, "$.data.A"),
            ({"meta": {"op": "ins", "table": ""}, "data": {}}, "$.meta.table"),
        ],
    )
    def test_bad_messages(self, doc: dict[str, object], path: str) -> None:
        with pytest.raises(InputError) as err:
            self.fmt.normalize(Message(doc, where="in.json:7"))
        assert err.value.where == f"in.json:7 {path}"
