"""arcion-json: the seed's snapshot and realtime examples (separate key and value documents)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from contracts.contract import load_contract
from contracts.errors import InputError
from contracts.events import ChangeEvent, ControlRecord
from contracts.formats.base import Message
from contracts.io import read_messages
from contracts.schema import parse_connect

from .spec import FormatSpec


class TestArcionJson(FormatSpec):
    format_name = "arcion-json"

    def raw_documents(self, name: str) -> list[Message]:
        return list(read_messages([self.fixture(name)]))

    @pytest.mark.parametrize("sample", ["snapshot.json", "realtime.json"])
    def test_detects(self, sample: str) -> None:
        self.assert_detects(sample)

    def test_detects_raw_key_documents_too(self) -> None:
        key_doc = self.raw_documents("realtime.json")[0]
        assert self.fmt.detect(key_doc)
        assert not any(
            self.fmt.detect(m) for m in self.messages("realtime.json") if m.value is None
        )

    @pytest.mark.parametrize(
        ("sample", "expected"),
        [("snapshot.json", "snapshot.expected.yaml"), ("realtime.json", "realtime.expected.yaml")],
    )
    def test_infers(self, sample: str, expected: str) -> None:
        result = self.assert_infers(sample, expected)
        assert result.contract.key == ("r_regionkey",)

    @pytest.mark.parametrize(
        ("sample", "expected", "envelope"),
        [
            (
                "snapshot.json",
                "snapshot.expected.yaml",
                "KAFKA_snapshot_connector.tpch.region.Envelope",
            ),
            ("realtime.json", "realtime.expected.yaml", "KAFKA_Connector.tpch.region.Envelope"),
        ],
    )
    def test_derives_the_seed_schemas_names_included(
        self, sample: str, expected: str, envelope: str
    ) -> None:
        for message in self.messages(sample):
            if message.value is None:
                continue
            key = parse_connect(message.key["schema"]).to_json()
            value = parse_connect(message.value["schema"]).to_json()
            assert value["name"] == envelope
            self.assert_derives(expected, key, value)

    def test_normalizes_snapshot(self) -> None:
        (event,) = self.assert_normalizes("snapshot.json", "snapshot.events.jsonl")
        assert event.op == "r" and event.before is None and event.position == {}

    def test_normalizes_realtime_with_tombstone(self) -> None:
        events = self.assert_normalizes("realtime.json", "realtime.events.jsonl")
        assert [e.op for e in events] == ["c", "u", "d"]
        assert events[0].before is None and events[2].after is None  # "before": {} / "after": {}
        records = [r for m in self.messages("realtime.json") for r in self.fmt.normalize(m)]
        assert isinstance(records[-1], ControlRecord)
        assert (records[-1].kind, records[-1].key) == ("tombstone", {"r_regionkey": 1})

    def test_key_update_is_a_delete_then_an_insert(self) -> None:
        messages = self.messages("realtime.json")
        delete, insert = copy.deepcopy(messages[2].value), copy.deepcopy(messages[0].value)
        insert["payload"]["after"]["r_regionkey"] = 11
        out = [
            self.fmt.normalize(Message(v, where=w))[0] for v, w in ((delete, "a"), (insert, "b"))
        ]
        assert [
            (e.op, (e.before or e.after or {})["r_regionkey"])
            for e in out
            if isinstance(e, ChangeEvent)
        ] == [
            ("d", 1),
            ("c", 11),
        ]

    @pytest.mark.parametrize("sample", ["snapshot.json", "realtime.json"])
    def test_validates(self, sample: str) -> None:
        self.assert_validates(sample, sample.replace(".json", ".expected.yaml"))

    def test_snapshot_connector_is_drift_for_the_realtime_contract(self) -> None:
        contract = load_contract(self.fixture("realtime.expected.yaml"))
        (message,) = self.messages("snapshot.json")
        kinds = {(v.path, v.kind) for v in self.fmt.validate(message, contract)}
        assert ("$.schema.name", "schema-drift") in kinds
        assert ("$key.schema", "schema-drift") in kinds

    def test_key_followed_by_key_is_an_error(self, tmp_path: Path) -> None:
        docs = self.raw_documents("realtime.json")
        path = tmp_path / "keys.json"
        path.write_text("\n".join(json.dumps(d.value) for d in (docs[0], docs[0], docs[1])))
        with pytest.raises(InputError, match="followed by another key") as err:
            list(self.fmt.assemble(read_messages([path])))
        assert err.value.where == f"{path}:1"

    def test_trailing_key_without_value_is_an_error(self, tmp_path: Path) -> None:
        path = tmp_path / "key.json"
        path.write_text(json.dumps(self.raw_documents("realtime.json")[0].value))
        with pytest.raises(InputError, match="no value document"):
            list(self.fmt.assemble(read_messages([path])))

    def test_missing_payload_is_an_input_error(self) -> None:
        doc = copy.deepcopy(self.messages("snapshot.json")[0].value)
        del doc["payload"]
        with pytest.raises(InputError, match="needs 'schema' and 'payload'") as err:
            self.fmt.normalize(Message(doc, where="s.json:3"))
        assert err.value.where == "s.json:3 $"
