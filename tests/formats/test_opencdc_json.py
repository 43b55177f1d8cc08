"""opencdc-json: Conduit OpenCDC records (seed 004 example and records assembled from its fragments)."""

from __future__ import annotations

import base64

import pytest

from contracts.contract import load_contract
from contracts.errors import InputError
from contracts.events import ChangeEvent
from contracts.formats.base import InferOptions, Message

from .spec import FormatSpec

SAMPLES = [("conduit-record", "json"), ("conduit-structured", "jsonl")]


class TestOpencdcJson(FormatSpec):
    format_name = "opencdc-json"

    @pytest.mark.parametrize(("sample", "ext"), SAMPLES)
    def test_seed_samples(self, sample: str, ext: str) -> None:
        self.assert_detects(f"{sample}.{ext}")
        for suffix, typed in (("", False), (".typed", True)):
            contract = f"{sample}{suffix}.expected.yaml"
            opts = {"name": "conduit.example"} if sample == "conduit-record" else {}
            self.assert_infers(f"{sample}.{ext}", contract, infer_types=typed, **opts)
            self.assert_normalizes(f"{sample}.{ext}", f"{sample}{suffix}.events.jsonl", contract)
            self.assert_validates(f"{sample}.{ext}", contract)

    def test_raw_and_structured_data(self) -> None:
        (event,) = self.fmt.normalize(self.messages("conduit-record.json")[0])
        assert isinstance(event, ChangeEvent) and event.op == "u"
        assert event.key == {"raw": b"padlock-key"} and event.before == {"raw": b"yellow"}
        assert event.after is not None and event.after["string"] == "orange"
        assert event.ts_ms == 1663858188836 and event.position == {"position": "c3RhbmRpbmc="}
        # raw bytes holding a JSON object are structured data
        (snapshot,) = self.fmt.normalize(self.messages("conduit-structured.jsonl")[0])
        assert isinstance(snapshot, ChangeEvent) and snapshot.op == "r"
        assert snapshot.after == {
            "bool_field": True,
            "float_field": 1.2,
            "int_field": 1,
            "string_field": "orange",
        }

    def test_schema_references_recorded(self) -> None:
        contract = load_contract(self.fixture("conduit-structured.expected.yaml"))
        assert contract.option("payload_schema") == {
            "subject": "connector-id:collection.payload",
            "version": "1",
        }
        assert contract.option("key_schema") == {"subject": "employees.key.v1", "version": "1"}
        doc = self.messages("conduit-structured.jsonl")[1].value
        drifted = {**doc, "metadata": {**doc["metadata"], "opencdc.payload.schema.version": "2"}}
        (violation,) = self.fmt.validate(Message(drifted), contract)
        assert violation.kind == "schema-drift"

    def test_all_raw_payload(self) -> None:
        raw = base64.b64encode(b"\x00\x01").decode()
        msg = Message(
            {
                "position": "AA==",
                "operation": "create",
                "metadata": {},
                "key": None,
                "payload": {"before": None, "after": raw},
            }
        )
        contract = self.fmt.infer([msg], InferOptions(name="blobs")).contract
        assert contract.columns == ({"field": "raw", "type": "bytes", "optional": True},)
        (event,) = self.fmt.normalize(msg, contract)
        assert isinstance(event, ChangeEvent) and event.after == {"raw": b"\x00\x01"}

    def test_derive_envelope(self) -> None:
        derived = self.fmt.derive(load_contract(self.fixture("conduit-structured.expected.yaml")))
        value = derived.value.to_json()
        assert [f["field"] for f in value["fields"]] == [
            "position",
            "operation",
            "metadata",
            "key",
            "payload",
        ]
        assert value["fields"][3]["fields"] == [
            {"type": "int64", "optional": False, "field": "int_field"}
        ]

    def test_validate_values(self) -> None:
        contract = load_contract(self.fixture("conduit-structured.expected.yaml"))
        doc = self.messages("conduit-structured.jsonl")[1].value
        bad = {
            **doc,
            "payload": {
                "before": None,
                "after": {
                    "bool_field": "yes",
                    "float_field": 1.0,
                    "int_field": 1,
                    "string_field": "x",
                    "new": 1,
                },
            },
        }
        found = {(v.path, v.kind) for v in self.fmt.validate(Message(bad), contract)}
        assert found == {
            ("$.payload.after.bool_field", "undecodable"),
            ("$.payload.after.new", "extra-column"),
        }

    @pytest.mark.parametrize(
        ("change", "path"),
        [
            ({"operation": "upsert"}, "$.operation"),
            ({"position": "!!!"}, "$.position"),
            ({"key": "not base64!"}, "$.key"),
            ({"payload": {"after": 12}}, "$.payload.after"),
            ({"metadata": []}, "$.metadata"),
        ],
    )
    def test_bad_messages(self, change: dict[str, object], path: str) -> None:
        doc = {**self.messages("conduit-record.json")[0].value, **change}
        with pytest.raises(InputError) as err:
            self.fmt.normalize(Message(doc, where="in.json:2"))
        assert err.value.where == f"in.json:2 {path}"
