"""The Spark task progress bar of ``cdc-contracts spark decode`` (cli/spark_progress.py)."""

from __future__ import annotations

from io import StringIO
from typing import Any

from rich.console import Console

from cli.spark_progress import count_tasks, spark_task_progress


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
