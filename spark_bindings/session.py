"""A local Spark session configured the way cdc-contracts' commands and tests use it."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

from pyspark.sql import SparkSession

#: The largest method, in bytes of bytecode, that HotSpot compiles (``-XX:+DontCompileHugeMethods``
#: leaves larger ones interpreted). As ``spark.sql.codegen.hugeMethodLimit``, Spark stops fusing a
#: stage whose generated method would be larger and compiles each operator into small methods.
HOTSPOT_HUGE_METHOD: Final = 8000
HUGE_METHOD_CONF: Final = "spark.sql.codegen.hugeMethodLimit"


def local_session(app_name: str, master: str = "local[2]", **conf: str) -> SparkSession:
    """The active session, or a new one on ``master`` (UTC, no UI, small shuffles, no generated
    method over HotSpot's JIT limit: :data:`HOTSPOT_HUGE_METHOD`).

    Python workers run with this interpreter (``PYSPARK_PYTHON``), so the Arrow-based decoders
    find the same packages as the driver.
    """
    existing = SparkSession.getActiveSession()
    if existing is not None:
        return existing
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config(HUGE_METHOD_CONF, str(HOTSPOT_HUGE_METHOD))
    )
    for key, value in conf.items():
        builder = builder.config(key.replace("_", "."), value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


@contextmanager
def command_session(app_name: str, master: str = "local[2]") -> Iterator[SparkSession]:
    """A session for one command: the active one if there is one (left running), else a new
    :func:`local_session` stopped when the block ends."""
    existing = SparkSession.getActiveSession()
    spark = existing or local_session(app_name, master)
    try:
        yield spark
    finally:
        if existing is None:
            spark.stop()


def interpreted_methods_risk(spark: SparkSession) -> bool:
    """Whether this session lets Spark fuse stages into methods HotSpot will not compile."""
    try:
        limit = int(spark.conf.get(HUGE_METHOD_CONF) or HOTSPOT_HUGE_METHOD)
    except ValueError:
        return False
    return limit > HOTSPOT_HUGE_METHOD
