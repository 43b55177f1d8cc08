"""arcion-s3-json: Arcion Replicant's S3 JSON files (seed 002, snapshot and realtime examples)."""

from __future__ import annotations

import copy

import pytest

from contracts.contract import load_contract
from contracts.errors import DecodeError, InputError
from contracts.events import ChangeEvent
from contracts.formats.base import InferOptions, Message

from .spec import FormatSpec

SAMPLES = ["snapshot-nation", "realtime-region"]


class TestArcionS3Json(FormatSpec):
    format_name = "arcion-s3-json"

    @pytest.mark.parametrize("sample", SAMPLES)
    def test_seed_samples(self, sample: str) -> None:
        self.assert_detects(f"{sample}.json")
        for suffix, typed in (("", False), (".typed", True)):
            contract = f"{sample}{suffix}.expected.yaml"
            self.assert_infers(f"{sample}.json", contract, infer_types=typed)
            self.assert_normalizes(f"{sample}.json", f"{sample}{suffix}.events.jsonl", contract)
            self.assert_validates(f"{sample}.json", contract)

    def test_exists_keeps_null_and_absent_apart(self) -> None:
        update = self.messages("realtime-region.json")[1]
        (event,) = self.fmt.normalize(update)
        assert isinstance(event, ChangeEvent)
        # exists: r_regionkey 2 (before only), r_comment 1 (after only), r_name 0 (absent)
        assert event.before == {"r_regionkey": "10"} and event.after == {"r_comment": "USA"}
        doc = copy.deepcopy(update.value)
        doc["exists"]["r_name"] = "3"
        (event,) = self.fmt.normalize(Message(doc))
        assert isinstance(event, ChangeEvent)
        assert event.before == {"r_regionkey": "10", "r_name": None}
        assert event.after == {"r_comment": "USA", "r_name": None}

    def test_cursor_gives_times_and_position(self) -> None:
        (event,) = self.fmt.normalize(self.messages("snapshot-nation.json")[0])
        assert isinstance(event, ChangeEvent)
        assert (event.source_ts_ms, event.ts_ms) == (1657516903000, 1657516904088)
        assert event.position["log"] == "log-bin.000010" and event.position["position"] == 7461

    def test_derive_envelope(self) -> None:
        derived = self.fmt.derive(load_contract(self.fixture("realtime-region.expected.yaml")))
        value = derived.value.to_json()
        assert derived.key is None
        assert [f["field"] for f in value["fields"]] == [
            "tableName",
            "opType",
            "cursor",
            "before",
            "after",
            "exists",
            "operationcount",
        ]
        before = value["fields"][3]
        assert before["fields"] == [
            {"type": "string", "optional": False, "field": n}
            for n in ("r_regionkey", "r_comment", "r_name")
        ]

    def test_typed_contract_decodes_and_flags_values(self) -> None:
        contract = load_contract(self.fixture("snapshot-nation.typed.expected.yaml"))
        doc = copy.deepcopy(self.messages("snapshot-nation.json")[0].value)
        doc["after"]["n_nationkey"] = "one hundred"
        doc["after"]["n_extra"] = "x"
        doc["exists"]["n_extra"] = "1"
        del doc["exists"]["n_name"], doc["after"]["n_name"], doc["before"]["n_name"]
        found = {(v.path, v.kind) for v in self.fmt.validate(Message(doc, where="f:1"), contract)}
        assert found == {
            ("$.after.n_nationkey", "undecodable"),
            ("$.after.n_extra", "extra-column"),
            ("$.exists.n_name", "missing-column"),
        }
        with pytest.raises(DecodeError) as err:
            self.fmt.normalize(Message(doc, where="f:1"), contract)
        assert err.value.where == "f:1 $.after.n_nationkey"

    def test_several_tables_refused(self) -> None:
        messages = self.messages("snapshot-nation.json") + self.messages("realtime-region.json")
        with pytest.raises(InputError, match="several tables"):
            self.fmt.infer(messages, InferOptions())

    @pytest.mark.parametrize(
        ("change", "path"),
        [
            ({"opType": "X"}, "$.opType"),
            ({"cursor": "{not json"}, "$.cursor"),
            ({"cursor": 5}, "$.cursor"),
            ({"exists": {"n_comment": "7"}}, "$.exists.n_comment"),
            ({"tableName": {"namespace": {}, "name": ""}}, "$.tableName.name"),
            ({"after": ["x"]}, "$.after"),
        ],
    )
    def test_bad_messages(self, change: dict[str, object], path: str) -> None:
        doc = {**self.messages("snapshot-nation.json")[0].value, **change}
        with pytest.raises(InputError) as err:
            self.fmt.normalize(Message(doc, where="in.json:4"))
        assert err.value.where == f"in.json:4 {path}"
        contract = load_contract(self.fixture("snapshot-nation.expected.yaml"))
        (violation,) = self.fmt.validate(Message(doc, where="in.json:4"), contract)
        assert (violation.kind, violation.path) == ("envelope", path)


def _doc(values: dict[str, str]) -> Message:
    return Message(
        {
            "tableName": {"namespace": {"catalog": "c", "schema": "s"}, "name": "t"},
            "opType": "I",
            "cursor": "{}",
            "before": dict.fromkeys(values, "null"),
            "after": values,
            "exists": dict.fromkeys(values, "1"),
        }
    )


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (["1", "-5"], {"type": "int32"}),
        (["1", "3000000000"], {"type": "int64"}),
        (
            ["1", "12.345", "-0.5"],
            {
                "type": "bytes",
                "name": "org.apache.kafka.connect.data.Decimal",
                "parameters": {"scale": "3", "connect.decimal.precision": "5"},
            },
        ),
        (["1.5", "2e10"], {"type": "double"}),
        (["true", "false"], {"type": "boolean"}),
        (
            ["2020-01-31", "1999-12-01"],
            {"type": "int32", "name": "org.apache.kafka.connect.data.Date"},
        ),
        (["2020-01-31 10:00:00.123"], {"type": "int64", "name": "io.debezium.time.Timestamp"}),
        (
            ["2020-01-31T10:00:00.123456"],
            {"type": "int64", "name": "io.debezium.time.MicroTimestamp"},
        ),
        (["2020-01-31T10:00:00Z"], {"type": "string", "name": "io.debezium.time.ZonedTimestamp"}),
        (["1", "x"], {"type": "string"}),
        (["007"], {"type": "string"}),
        (["2020-01-31", "2020-01-31 10:00:00"], {"type": "string"}),
        (["2020-02-30"], {"type": "string"}),
        ([" 1"], {"type": "string"}),
    ],
)
def test_infer_types_widens_and_falls_back(values: list[str], expected: dict[str, object]) -> None:
    fmt = TestArcionS3Json().fmt
    messages = [_doc({"v": v}) for v in values]
    plain = fmt.infer(messages, InferOptions()).contract.columns[0]
    assert plain["type"] == "string"
    typed = fmt.infer(messages, InferOptions(infer_types=True)).contract.columns[0]
    assert {k: typed[k] for k in expected} == expected
    if "name" not in expected:
        assert "name" not in typed


def test_inference_memory_is_bounded() -> None:
    from contracts.formats._typing import ColumnSummary

    summary = ColumnSummary()
    for i in range(50_000):
        summary.observe(str(i))
    assert summary.values == 50_000 and not hasattr(summary, "__dict__")
    assert summary.schema(True).type == "int32"
