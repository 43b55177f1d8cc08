"""ogg-json: Flink's ogg-data.txt (with OggJsonSerDeSchemaTest's changelog and metadata),
Paimon's OGG event sample, a truncate."""

from __future__ import annotations

from pathlib import Path

import pytest

from contracts.contract import load_contract
from contracts.events import ChangeEvent
from contracts.formats.base import InferOptions, Message
from contracts.io import read_messages

from .spec import FormatSpec
from .test_maxwell_json import changelog

SAMPLES = [("flink-ogg-data", "txt"), ("paimon-event-update", "jsonl")]

#: OggJsonSerDeSchemaTest.testSerializationDeserialization's changelog (Flink reads weight
#: as FLOAT: 3.140000104904175 prints 3.14 there; a double column keeps the written digits).
FLINK_CHANGELOG = [
    ("+I", 101, "scooter", "Small 2-wheel scooter", 3.14),
    ("+I", 102, "car battery", "12V car battery", 8.1),
    (
        "+I",
        103,
        "12-pack drill bits",
        "12-pack of drill bits with sizes ranging from #40 to #3",
        0.8,
    ),
    ("+I", 104, "hammer", "12oz carpenter's hammer", 0.75),
    ("+I", 105, "hammer", "14oz carpenter's hammer", 0.875),
    ("+I", 106, "hammer", "16oz carpenter's hammer", 1.0),
    ("+I", 107, "rocks", "box of assorted rocks", 5.3),
    ("+I", 108, "jacket", "water resistent black wind breaker", 0.1),
    ("+I", 109, "spare tire", "24 inch spare tire", 22.2),
    ("-U", 106, "hammer", "16oz carpenter's hammer", 1.0),
    ("+U", 106, "hammer", "18oz carpenter hammer", 1.0),
    ("-U", 107, "rocks", "box of assorted rocks", 5.3),
    ("+U", 107, "rocks", "box of assorted rocks", 5.1),
    ("+I", 110, "jacket", "water resistent white wind breaker", 0.2),
    ("+I", 111, "scooter", "Big 2-wheel scooter ", 5.18),
    ("-U", 110, "jacket", "water resistent white wind breaker", 0.2),
    ("+U", 110, "jacket", "new water resistent white wind breaker", 0.5),
    ("-U", 111, "scooter", "Big 2-wheel scooter ", 5.18),
    ("+U", 111, "scooter", "Big 2-wheel scooter ", 5.17),
    ("-D", 111, "scooter", "Big 2-wheel scooter ", 5.17),
]

#: ``../shared/realworld`` beside the checkout (a worktree's checkout is one level deeper).
_ROOT = Path(__file__).resolve().parent.parent.parent
REALWORLD = next(
    (
        p / "shared" / "realworld" / "real_world_next"
        for p in (_ROOT.parent, _ROOT.parent.parent)
        if (p / "shared" / "realworld").is_dir()
    ),
    _ROOT.parent / "shared" / "realworld" / "real_world_next",
)


def _json_lines(path: Path, tmp: Path) -> Path:
    """The file's JSON lines (Paimon's samples open with a licence comment)."""
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.startswith("{")]
    out = tmp / path.name
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def _float32(x: float) -> float:
    import struct

    return round(float(struct.unpack("f", struct.pack("f", x))[0]), 6)


class TestOggJson(FormatSpec):
    format_name = "ogg-json"

    @pytest.mark.parametrize(("sample", "ext"), SAMPLES)
    def test_samples(self, sample: str, ext: str) -> None:
        self.assert_detects(f"{sample}.{ext}")
        contract = f"{sample}.expected.yaml"
        self.assert_infers(f"{sample}.{ext}", contract)
        self.assert_normalizes(f"{sample}.{ext}", f"{sample}.events.jsonl", contract)
        self.assert_validates(f"{sample}.{ext}", contract)

    def test_flink_changelog_and_metadata(self) -> None:
        events = self.assert_normalizes(
            "flink-ogg-data.txt", "flink-ogg-data.events.jsonl", "flink-ogg-data.expected.yaml"
        )
        rows = [line.split(" ", 2) for line in changelog(events)]
        got = [
            (kind, int(key), *rest.split("|")[:2], _float32(float(rest.split("|")[2])))
            for kind, key, rest in rows
        ]
        assert got == [(k, i, n, d, _float32(w)) for k, i, n, d, w in FLINK_CHANGELOG]
        first = events[0]
        # testDeserializationWithMetadata: table, primary keys, ingestion and event timestamps
        assert first.table.qualified() == "OGG.TBL_TEST" and first.key == {"id": 101}
        assert first.ts_ms == 1589377175766  # current_ts, Flink's ingestion-timestamp
        assert first.source_ts_ms == 1589384406000  # op_ts, Flink's event-timestamp
        assert first.position == {"pos": "00000000000000000000143"}

    def test_truncate(self) -> None:
        self.assert_normalizes(
            "ogg-truncate.jsonl", "ogg-truncate.events.jsonl", "paimon-event-update.expected.yaml"
        )
        (event,) = self.fmt.normalize(self.messages("ogg-truncate.jsonl")[0])
        assert isinstance(event, ChangeEvent) and event.op == "t"
        assert event.before is None and event.after is None

    def test_bad_op_type_is_located(self) -> None:
        doc = self.messages("paimon-event-update.jsonl")[0].value
        c = load_contract(self.fixture("paimon-event-update.expected.yaml"))
        (violation,) = self.fmt.validate(Message({**doc, "op_type": "X"}, where="f:1"), c)
        assert violation.path == "$.op_type" and "unknown op_type 'X'" in violation.message
        (violation,) = self.fmt.validate(Message({**doc, "table": "OGG.OTHER"}, where="f:2"), c)
        assert violation.path == "$.table"

    def test_realworld_copies(self, tmp_path: Path) -> None:
        """The shared real-world set (Flink's ogg-data.txt, Paimon's OGG events), when present."""
        if not REALWORLD.is_dir():
            pytest.skip(f"{REALWORLD} is absent: the shared real-world set is not on this machine")
        files = [
            REALWORLD / "flink" / "ogg-data.txt",
            *sorted((REALWORLD / "paimon").glob("ogg-*")),
        ]
        files = [f for f in files if f.is_file()]
        if not files:
            pytest.skip(f"no OGG files under {REALWORLD}")
        for path in files:
            messages = list(read_messages([_json_lines(path, tmp_path)], "json"))
            assert messages, path
            result = self.fmt.infer(messages, InferOptions())
            for m in messages:
                assert self.fmt.detect(m), m.where
                assert self.fmt.validate(m, result.contract) == [], m.where
                assert all(
                    isinstance(e, ChangeEvent) for e in self.fmt.normalize(m, result.contract)
                )
