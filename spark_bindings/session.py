"""A local Spark session configured the way cdc-contracts' commands and tests use it."""

from __future__ import annotations

import os
import sys

from pyspark.sql import SparkSession


def local_session(app_name: str, master: str = "local[2]", **conf: str) -> SparkSession:
    """The active session, or a new one on ``master`` (UTC, no UI, small shuffles).

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
    )
    for key, value in conf.items():
        builder = builder.config(key.replace("_", "."), value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session
