"""The Spark task progress bar of ``cdc-contracts spark decode`` (spark_bindings/progress.py)."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from rich.console import Console

from spark_bindings.progress import count_tasks, spark_task_progress


def test_progress_counts_the_tasks_of_the_jobs_in_the_block(spark: Any) -> None:
    out = StringIO()
    console = Console(file=out, force_terminal=True, width=100)
    df = spark.range(0, 200_000, numPartitions=4)
    with spark_task_progress(
        spark, "summing", enabled=True, console=console, interval=0.05
    ) as seen:
        assert df.selectExpr("sum(id) AS s").collect()[0]["s"] == sum(range(200_000))
    assert seen.total >= 4 and seen.completed == seen.total
    assert "summing" in out.getvalue()
    # the job group is the block's only: later jobs are not in it
    assert spark.sparkContext.getLocalProperty("spark.jobGroup.id") is None


def test_progress_off_runs_the_block_alone(spark: Any) -> None:
    with spark_task_progress(spark, "quiet", enabled=False) as seen:
        spark.range(10).count()
    assert (seen.total, seen.completed) == (0, 0)
    assert spark.sparkContext.getLocalProperty("spark.jobGroup.id") is None


def test_count_of_an_unknown_group_is_zero(spark: Any) -> None:
    count = count_tasks(spark, "no-such-group")
    assert (count.total, count.completed) == (0, 0)


def test_progress_gives_back_the_callers_job_group(spark: Any) -> None:
    context = spark.sparkContext
    context.setJobGroup("outer-group", "the caller's jobs")
    try:
        with spark_task_progress(spark, "inner", enabled=True, console=Console(file=StringIO())):
            assert context.getLocalProperty("spark.jobGroup.id") != "outer-group"
            spark.range(10).count()
        assert context.getLocalProperty("spark.jobGroup.id") == "outer-group"
        assert context.getLocalProperty("spark.job.description") == "the caller's jobs"
    finally:
        for key in ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel"):
            context.setLocalProperty(key, None)


def test_progress_lets_the_blocks_error_through(spark: Any) -> None:
    with (
        pytest.raises(ZeroDivisionError),
        spark_task_progress(spark, "failing", enabled=True, console=Console(file=StringIO())),
    ):
        _ = 1 / 0
    assert spark.sparkContext.getLocalProperty("spark.jobGroup.id") is None
