"""A stand-in for spark-avro's ``from_avro``, for machines without the spark-avro jar.

The jar (``org.apache.spark:spark-avro``) comes from Maven Central, which this test machine
cannot reach, so the ``from_avro`` decode path is exercised with this stand-in: a Python UDF
that reads the value with fastavro and returns what spark-avro's ``AvroDataToCatalyst``
returns for the schemas a Connect envelope uses. The facts it follows (Spark's
``SchemaConverters.toSqlType`` and ``AvroDataToCatalyst``, Spark 4.0):

- record → struct, field order kept; a union with ``null`` → its other branch, nullable;
  ``[int, long]`` → long, ``[float, double]`` → double; other unions → ``member0..N`` structs;
- int → int, long → long, float, double, boolean, string and enum → string, bytes and fixed
  → binary, array → array, map → map<string, …>, null → void (logical types are stripped by
  the decoder before the schema gets here);
- ``PERMISSIVE`` mode: the output type is made nullable throughout, and a value that does not
  decode gives a struct whose fields are all null (null for a non-record schema);
- the reader stops at the end of the datum: bytes after it are ignored.

Values of ``member0..N`` unions are not rebuilt (Connect envelopes have none; the type is).

It is a test double of an external component, not of ours; the real jar's behaviour is
asserted only where :func:`spark_bindings.avro.spark_avro_available` finds it.
"""

from __future__ import annotations

import io
import json
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DataType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    NullType,
    StringType,
    StructField,
    StructType,
)

_PRIMITIVES: dict[str, DataType] = {
    "int": IntegerType(),
    "long": LongType(),
    "float": FloatType(),
    "double": DoubleType(),
    "boolean": BooleanType(),
    "string": StringType(),
    "bytes": BinaryType(),
    "null": NullType(),
}


def catalyst_type(avro: Any, names: dict[str, Any] | None = None) -> DataType:
    """spark-avro's Catalyst type of an Avro schema, every part nullable (PERMISSIVE)."""
    names = {} if names is None else names
    if isinstance(avro, str):
        if avro in _PRIMITIVES:
            return _PRIMITIVES[avro]
        return catalyst_type(names[avro], names)
    if isinstance(avro, list):
        branches = [b for b in avro if b != "null"]
        if len(branches) == 1:
            return catalyst_type(branches[0], names)
        kinds = {b if isinstance(b, str) else b.get("type") for b in branches}
        if kinds == {"int", "long"}:
            return LongType()
        if kinds == {"float", "double"}:
            return DoubleType()
        return StructType(
            [StructField(f"member{i}", catalyst_type(b, names)) for i, b in enumerate(branches)]
        )
    kind = avro["type"]
    if kind == "record":
        names[avro["name"]] = avro
        if "namespace" in avro:
            names[f"{avro['namespace']}.{avro['name']}"] = avro
        return StructType(
            [StructField(f["name"], catalyst_type(f["type"], names)) for f in avro["fields"]]
        )
    if kind == "enum":
        names[avro["name"]] = avro
        return StringType()
    if kind == "fixed":
        names[avro["name"]] = avro
        return BinaryType()
    if kind == "array":
        return ArrayType(catalyst_type(avro["items"], names))
    if kind == "map":
        return MapType(StringType(), catalyst_type(avro["values"], names))
    return catalyst_type(kind, names)


def standin_from_avro(data: Column, writer_schema: str) -> Column:
    """``from_avro(data, writer_schema, {"mode": "PERMISSIVE"})`` as a fastavro UDF."""
    import fastavro

    avro = json.loads(writer_schema)
    dtype = catalyst_type(avro)
    parsed = fastavro.parse_schema(avro)
    failed = {f.name: None for f in dtype.fields} if isinstance(dtype, StructType) else None

    def read(value: bytes | None) -> Any:
        if value is None:
            return None
        try:
            return fastavro.schemaless_reader(io.BytesIO(value), parsed, None)
        except Exception:
            return failed

    return F.udf(lambda value: read(value), dtype)(data)
