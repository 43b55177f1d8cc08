"""canal-json: Canal FlatMessage (DTS seed examples and real Canal output from Flink's tests)."""

from __future__ import annotations

import datetime as dt
import decimal
import warnings

import pytest

from contracts.contract import load_contract
from contracts.errors import DecodeError, InputError
from contracts.events import ChangeEvent, ControlRecord
from contracts.formats.base import InferOptions, Message
from contracts.formats.canal_json import decode_canal_value, mysql_type_schema

from .spec import FormatSpec

SAMPLES = ["flink-products", "dts-delete-before-2022", "dts-delete-current"]


class TestCanalJson(FormatSpec):
    format_name = "canal-json"

    @pytest.mark.parametrize("sample", SAMPLES)
    def test_seed_samples(self, sample: str) -> None:
        ext = "jsonl" if sample.startswith("flink") else "json"
        self.assert_detects(f"{sample}.{ext}")
        for suffix, typed in (("", False), (".typed", True)):
            self.assert_infers(
                f"{sample}.{ext}", f"{sample}{suffix}.expected.yaml", infer_types=typed
            )
            self.assert_normalizes(
                f"{sample}.{ext}",
                f"{sample}{suffix}.events.jsonl",
                f"{sample}{suffix}.expected.yaml",
            )
            self.assert_validates(f"{sample}.{ext}", f"{sample}{suffix}.expected.yaml")

    def test_flink_events_without_contract_use_message_types(self) -> None:
        events = [e for m in self.messages("flink-products.jsonl") for e in self.fmt.normalize(m)]
        rows = [e for e in events if isinstance(e, ChangeEvent)]
        assert len(rows) == 20
        assert rows[0].after == {
            "id": 101,
            "name": "scooter",
            "description": "Small 2-wheel scooter",
            "weight": 3.14,
        }
        # UPDATE: before is old overlaid on data
        assert rows[9].before is not None and rows[9].before["description"] is None
        assert rows[9].after is not None and rows[9].after["description"] == "18oz carpenter hammer"
        ddl = [e for e in events if isinstance(e, ControlRecord)]
        assert (
            [d.kind for d in ddl] == ["ddl"]
            and ddl[0].table is not None
            and ddl[0].table.name == "user02"
        )

    def test_ddl_is_a_control_record(self) -> None:
        (message,) = self.messages("dts-ddl.json")
        assert self.fmt.detect(message)
        (record,) = self.fmt.normalize(message)
        assert isinstance(record, ControlRecord) and record.kind == "ddl"
        assert "eg: create xxx" in record.reason
        with pytest.raises(InputError, match="no row changes"):
            self.fmt.infer([message], InferOptions())

    def test_a_ddl_whose_table_is_not_a_string_is_still_a_ddl(self) -> None:
        # as Spark reads it (tests/parity/fixtures/canal-json-ddl-table-not-a-string.json);
        # a row change with such a table stays a bad message
        (message,) = self.messages("dts-ddl.json")
        (record,) = self.fmt.normalize(Message({**message.value, "database": ["shop"]}))
        assert isinstance(record, ControlRecord) and record.kind == "ddl"
        row = {"type": "INSERT", "isDdl": False, "database": 5, "table": "t", "data": [{"a": "1"}]}
        with pytest.raises(DecodeError, match="expected a string or null"):
            self.fmt.normalize(Message(row, where="w"))

    def test_both_delete_conventions(self) -> None:
        (old,) = self.fmt.normalize(self.messages("dts-delete-before-2022.json")[0])
        (new,) = self.fmt.normalize(self.messages("dts-delete-current.json")[0])
        assert isinstance(old, ChangeEvent) and isinstance(new, ChangeEvent)
        assert old.op == new.op == "d" and old.after is None and new.after is None
        assert old.before == {"shipping_type": "aaa"}
        assert new.before == {"id": 500000287, "shipping_type": None} and new.key == {
            "id": 500000287
        }

    def test_derive_envelope(self) -> None:
        derived = self.fmt.derive(load_contract(self.fixture("flink-products.expected.yaml")))
        assert derived.key is None
        value = derived.value.to_json()
        names = [f["field"] for f in value["fields"]]
        assert names == [
            "data",
            "database",
            "es",
            "id",
            "isDdl",
            "mysqlType",
            "old",
            "pkNames",
            "sql",
            "sqlType",
            "table",
            "ts",
            "type",
        ]
        data = value["fields"][0]
        assert data["type"] == "array" and data["items"]["fields"][0] == {
            "type": "string",
            "optional": False,
            "field": "id",
        }
        old = value["fields"][6]["items"]["fields"]
        assert all(f["optional"] for f in old)

    def test_mysql_type_table(self) -> None:
        cases = {
            "bigint(20) unsigned": (
                "bytes",
                "org.apache.kafka.connect.data.Decimal",
                {"scale": "0", "connect.decimal.precision": "20"},
            ),
            "decimal(10,2)": (
                "bytes",
                "org.apache.kafka.connect.data.Decimal",
                {"scale": "2", "connect.decimal.precision": "10"},
            ),
            "int(11)": ("int32", None, {}),
            "INTEGER": ("int32", None, {}),
            "int(10) unsigned": ("int64", None, {}),
            "bigint(20)": ("int64", None, {}),
            "tinyint(1)": ("boolean", None, {}),
            "tinyint(4)": ("int16", None, {}),
            "float": ("float", None, {}),
            "double": ("double", None, {}),
            "datetime": ("int64", "io.debezium.time.Timestamp", {}),
            "datetime(6)": ("int64", "io.debezium.time.MicroTimestamp", {}),
            "timestamp(3)": ("string", "io.debezium.time.ZonedTimestamp", {}),
            "date": ("int32", "org.apache.kafka.connect.data.Date", {}),
            "varchar(50)": ("string", None, {}),
            "longtext": ("string", None, {}),
            "blob": ("bytes", None, {}),
            "varbinary(16)": ("bytes", None, {}),
            "json": ("string", "io.debezium.data.Json", {}),
            "enum('a','b')": ("string", "io.debezium.data.Enum", {"allowed": "a,b"}),
            "year(4)": ("int32", "io.debezium.time.Year", {}),
        }
        for text, (type_, name, params) in cases.items():
            schema = mysql_type_schema(text)
            assert schema is not None, text
            assert (schema.type, schema.name, schema.params) == (type_, name, params), text
        assert mysql_type_schema("frobnicate") is None

    def test_text_decoding_table(self) -> None:
        def dec(text: str, mysql: str, zone: str = "UTC") -> object:
            schema = mysql_type_schema(mysql)
            assert schema is not None
            return decode_canal_value(text, schema, zone)

        assert dec("18446744073709551615", "bigint(20) unsigned") == decimal.Decimal(
            "18446744073709551615"
        )
        assert dec("12.50", "decimal(10,2)") == decimal.Decimal("12.50")
        assert dec("1", "tinyint(1)") is True
        assert dec("2020-05-13", "date") == dt.date(2020, 5, 13)
        assert dec("0000-00-00", "date") is None
        assert dec("2020-05-13 12:34:56.123456", "datetime(6)") == dt.datetime(
            2020, 5, 13, 12, 34, 56, 123456, tzinfo=dt.UTC
        )
        assert dec("2020-05-13 12:00:00", "timestamp", "Asia/Shanghai") == dt.datetime(
            2020, 5, 13, 4, tzinfo=dt.UTC
        )
        assert dec("\x00\xff", "blob") == b"\x00\xff"
        assert dec("12:30:00", "time") == dt.time(12, 30)
        with pytest.raises(DecodeError, match="int32"):
            dec("2147483648", "int(11)")
        with pytest.raises(DecodeError, match="scale"):
            dec("1.234", "decimal(10,2)")

    def test_sqltype_fallback_and_unknown_mysqltype(self) -> None:
        base = {
            "database": "d",
            "table": "t",
            "isDdl": False,
            "type": "INSERT",
            "pkNames": ["k"],
            "es": 1,
            "ts": 2,
            "id": 1,
        }
        msg = Message(
            {
                **base,
                "data": [{"k": "1", "amount": "12.345", "odd": "x"}],
                "mysqlType": {"odd": "frobnicate"},
                "sqlType": {"k": -5, "amount": 3},
            }
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = self.fmt.infer([msg], InferOptions())
        cols = {c["field"]: c for c in result.contract.columns}
        assert cols["k"]["type"] == "int64" and cols["k"]["optional"] is False
        assert cols["amount"]["parameters"] == {"scale": "3", "connect.decimal.precision": "5"}
        assert cols["odd"]["type"] == "string"
        assert any("frobnicate" in w for w in result.warnings)

    def test_history_of_mysql_types(self) -> None:
        base = {
            "database": "d",
            "table": "t",
            "isDdl": False,
            "type": "INSERT",
            "pkNames": ["k"],
            "es": 1,
            "ts": 2,
            "id": 1,
            "sqlType": {},
        }
        v1 = Message({**base, "data": [{"k": "1"}], "mysqlType": {"k": "int(11)"}}, where="f:1")
        v2 = Message(
            {
                **base,
                "data": [{"k": "1", "n": "x"}],
                "mysqlType": {"k": "bigint(20)", "n": "varchar(5)"},
            },
            where="f:2",
        )
        result = self.fmt.infer([v1, v2, v2], InferOptions())
        assert [(h.version, h.first_seen, h.messages) for h in result.history] == [
            (1, "f:1", 1),
            (2, "f:2", 2),
        ]
        assert [c["type"] for c in result.contract.columns] == ["int64", "string"]

    def test_validate_reports_paths(self) -> None:
        contract = load_contract(self.fixture("flink-products.expected.yaml"))
        good = self.messages("flink-products.jsonl")[1]
        doc = dict(good.value)
        doc["data"] = [
            {"id": "abc", "name": "x", "description": None, "weight": "1.5", "color": "red"}
        ]
        doc["mysqlType"] = {**doc["mysqlType"], "weight": "DOUBLE"}
        found = {(v.path, v.kind) for v in self.fmt.validate(Message(doc, where="f:9"), contract)}
        assert ("$.data[0].id", "undecodable") in found
        assert ("$.data[0].color", "extra-column") in found
        assert ("$.mysqlType.weight", "schema-drift") in found
        missing = dict(good.value, data=[{"id": "1"}], old=None)
        paths = {v.path for v in self.fmt.validate(Message(missing), contract)}
        assert {"$.data[0].name", "$.data[0].weight"} <= paths

    @pytest.mark.parametrize(
        ("doc", "path"),
        [
            (
                {"database": "d", "table": "t", "isDdl": False, "type": "UPSERT", "data": []},
                "$.type",
            ),
            (
                {"database": "d", "table": "t", "isDdl": "no", "type": "INSERT", "data": []},
                "$.isDdl",
            ),
            (
                {"database": "d", "table": "t", "isDdl": False, "type": "INSERT", "data": "x"},
                "$.data",
            ),
            (
                {
                    "database": "d",
                    "table": "t",
                    "isDdl": False,
                    "type": "UPDATE",
                    "data": [{}],
                    "old": [{}, {}],
                },
                "$.old",
            ),
            (
                {"database": "d", "table": "t", "isDdl": False, "type": "DELETE", "data": None},
                "$.data",
            ),
        ],
    )
    def test_bad_messages(self, doc: dict[str, object], path: str) -> None:
        with pytest.raises(InputError) as err:
            self.fmt.normalize(Message(doc, where="in.json:3"))
        assert err.value.where == f"in.json:3 {path}"
        (violation,) = self.fmt.validate(
            Message(doc, where="in.json:3"),
            load_contract(self.fixture("flink-products.expected.yaml")),
        )
        assert violation.kind == "envelope" and violation.path == path

    def test_value_not_matching_contract_type(self) -> None:
        contract = load_contract(self.fixture("flink-products.expected.yaml"))
        doc = dict(self.messages("flink-products.jsonl")[1].value)
        doc["data"] = [{"id": "106", "name": "h", "description": None, "weight": "heavy"}]
        with pytest.raises(DecodeError) as err:
            self.fmt.normalize(Message(doc, where="f.json:2"), contract)
        assert err.value.where == "f.json:2 $.data[0].weight"
