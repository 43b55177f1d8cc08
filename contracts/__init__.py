"""cdc-contracts core: Connect schemas, logical types, translations, formats, contracts and diffs.

This package is pure Python: it imports no pyspark, no fastapi and no network client.
"""

from __future__ import annotations

from contracts.errors import ContractsError

__all__ = ["ContractsError"]
__version__ = "0.1.0"
