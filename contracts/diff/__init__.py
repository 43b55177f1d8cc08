"""Schema diff: exact Schema Registry compatibility verdicts plus CDC-specific breaking rules.

- :func:`contracts.diff.compat.registry_verdict` — what Confluent Schema Registry decides for Avro.
"""

from __future__ import annotations

from contracts.diff.compat import Incompatibility, Verdict, registry_verdict

__all__ = ["Incompatibility", "Verdict", "registry_verdict"]
