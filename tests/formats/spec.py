"""The shared base for per-format tests (one ``tests/formats/test_<format>.py`` each).

A subclass sets ``format_name`` and ``fixture_dir`` and gets helpers that read like a spec:
``assert_detects``, ``assert_infers``, ``assert_derives``, ``assert_normalizes``,
``assert_validates``. Expected results live next to the samples under
``tests/fixtures/<format>/``: ``*.expected.yaml`` (contract), ``*.events.jsonl`` (events).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

from contracts.contract import Contract, dump_contract, load_contract
from contracts.events import ChangeEvent
from contracts.formats import detect_format, get_format
from contracts.formats.base import Format, Inference, InferOptions, Message
from contracts.io import read_messages

FIXTURES = Path(__file__).parent.parent / "fixtures"


class FormatSpec:
    format_name: ClassVar[str]

    @property
    def fmt(self) -> Format:
        return get_format(self.format_name)

    def fixture(self, name: str) -> Path:
        return FIXTURES / self.format_name / name

    def messages(self, name: str) -> list[Message]:
        fmt = self.fmt
        return list(fmt.assemble(read_messages([self.fixture(name)], fmt.input_kind)))

    # --- assertions ----------------------------------------------------------------------------

    def assert_detects(self, name: str) -> None:
        found = detect_format(self.messages(name))
        assert found.name == self.format_name, f"{name} detected as {found.name}"

    def assert_infers(self, sample: str, expected: str, **options: Any) -> Inference:
        result = self.fmt.infer(self.messages(sample), InferOptions(**options))
        want = load_contract(self.fixture(expected))
        assert dump_contract(result.contract) == dump_contract(want)
        return result

    def assert_derives(self, contract: str | Contract, key: Any, value: Any) -> None:
        c = contract if isinstance(contract, Contract) else load_contract(self.fixture(contract))
        derived = self.fmt.derive(c)
        assert (derived.key.to_json() if derived.key else None) == key
        assert derived.value.to_json() == value

    def assert_normalizes(
        self, sample: str, expected: str, contract: str | None = None
    ) -> list[ChangeEvent]:
        c = load_contract(self.fixture(contract)) if contract else None
        events = [
            e
            for m in self.messages(sample)
            for e in self.fmt.normalize(m, c)
            if isinstance(e, ChangeEvent)
        ]
        lines = self.fixture(expected).read_text().splitlines()
        want = [json.loads(line) for line in lines if line.strip()]
        got = [e.to_json() for e in events]
        assert got == want
        return events

    def assert_validates(self, sample: str, contract: str) -> None:
        c = load_contract(self.fixture(contract))
        problems = [v for m in self.messages(sample) for v in self.fmt.validate(m, c)]
        assert problems == [], [p.one_line() for p in problems]
