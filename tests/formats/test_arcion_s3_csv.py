"""arcion-s3-csv: Arcion Replicant's S3 CSV files (seed 002, rows rebuilt from the wrapped text)."""

from __future__ import annotations

from pathlib import Path

import pytest

from contracts.contract import load_contract
from contracts.errors import InputError
from contracts.events import ChangeEvent, ControlRecord
from contracts.formats.base import InferOptions, Message
from contracts.io import read_messages

from .spec import FormatSpec

SAMPLES = ["realtime-region", "realtime-region-header", "snapshot-region", "snapshot-region-header"]


class TestArcionS3Csv(FormatSpec):
    format_name = "arcion-s3-csv"

    @pytest.mark.parametrize("sample", SAMPLES)
    def test_seed_samples(self, sample: str) -> None:
        if sample.startswith("realtime"):
            self.assert_detects(f"{sample}.csv")
        for suffix, typed in (("", False), (".typed", True)):
            contract = f"{sample}{suffix}.expected.yaml"
            self.assert_infers(f"{sample}.csv", contract, infer_types=typed, name="tpch.region")
            self.assert_normalizes(f"{sample}.csv", f"{sample}{suffix}.events.jsonl", contract)
            self.assert_validates(f"{sample}.csv", contract)

    def test_header_gives_names_and_order(self) -> None:
        contract = load_contract(self.fixture("realtime-region-header.expected.yaml"))
        assert contract.option("column_order") == ["r_comment", "r_name", "r_regionkey"]
        assert contract.option("mode") == "realtime" and contract.option("header") is True
        header, *_ = self.messages("realtime-region-header.csv")
        (record,) = self.fmt.normalize(header, contract)
        assert isinstance(record, ControlRecord)

    def test_triplets_and_exists(self) -> None:
        contract = load_contract(self.fixture("realtime-region-header.typed.expected.yaml"))
        _, insert, update, delete = self.messages("realtime-region-header.csv")
        events = [self.fmt.normalize(m, contract)[0] for m in (insert, update, delete)]
        assert all(isinstance(e, ChangeEvent) for e in events)
        ins, upd, dele = (e for e in events if isinstance(e, ChangeEvent))
        assert ins.after == {"r_comment": "India", "r_name": "India", "r_regionkey": 10}
        assert (upd.before, upd.after) == ({"r_regionkey": 10}, {"r_comment": "USA"})
        assert (dele.before, dele.after) == ({"r_regionkey": 10}, None)
        assert ins.source_ts_ms == 1620787841959 and ins.position["mutId"] == 1048408

    def test_snapshot_rows_are_reads(self) -> None:
        (event,) = self.fmt.normalize(self.messages("snapshot-region.csv")[0])
        assert isinstance(event, ChangeEvent) and event.op == "r"
        assert event.after == {"col_1": "0", "col_2": " AFRICA ", "col_3": "AFRICA"}

    def test_derive_envelope(self) -> None:
        realtime = self.fmt.derive(
            load_contract(self.fixture("realtime-region-header.expected.yaml"))
        )
        names = [f["field"] for f in realtime.value.to_json()["fields"]]
        assert names[:3] == ["r_comment_NEW_VAL", "r_comment_OLD_VAL", "r_comment_EXISTS_VAL"]
        assert names[-3:] == ["opType", "cursor", "operationcount"] and len(names) == 12
        snapshot = self.fmt.derive(
            load_contract(self.fixture("snapshot-region-header.expected.yaml"))
        )
        assert [f["field"] for f in snapshot.value.to_json()["fields"]] == [
            "r_regionkey",
            "r_name",
            "r_comment",
        ]

    def test_validate_cells(self) -> None:
        contract = load_contract(self.fixture("realtime-region-header.typed.expected.yaml"))
        _, insert, *_ = self.messages("realtime-region-header.csv")
        cells = list(insert.value)
        cells[6] = "ten"
        (violation,) = self.fmt.validate(Message(cells, where="f.csv:2"), contract)
        assert (violation.path, violation.kind) == ("$[6]", "undecodable")
        (short,) = self.fmt.validate(Message(cells[:-1], where="f.csv:2"), contract)
        assert short.kind == "envelope" and "11 cells" in short.message
        snapshot_row = Message(["USA", "x", "1"], where="f.csv:3")
        (mode,) = self.fmt.validate(snapshot_row, contract)
        assert "snapshot row in a realtime contract" in mode.message

    @pytest.mark.parametrize(
        ("edit", "index"),
        [((9, "X"), 9), ((2, "5"), 2), ((10, "{oops"), 10)],
    )
    def test_bad_rows(self, edit: tuple[int, str], index: int) -> None:
        contract = load_contract(self.fixture("realtime-region-header.expected.yaml"))
        _, insert, *_ = self.messages("realtime-region-header.csv")
        cells = list(insert.value)
        cells[edit[0]] = edit[1]
        with pytest.raises(InputError) as err:
            self.fmt.normalize(Message(cells, where="f.csv:2"), contract)
        assert err.value.where == f"f.csv:2 $[{index}]"

    def test_inconsistent_widths_refused(self, tmp_path: Path) -> None:
        path = tmp_path / "mixed.csv"
        path.write_text("a,b,c\n1,2\n")
        with pytest.raises(InputError, match="2 cells"):
            self.fmt.infer(read_messages([path], "csv"), InferOptions())
