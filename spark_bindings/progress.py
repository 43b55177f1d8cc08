"""A progress bar of the Spark tasks a command runs (stderr, terminals only)."""

from __future__ import annotations

import sys
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any, Final

from pyspark.sql import SparkSession


@dataclass
class TaskCount:
    """Tasks of the block's jobs: how many have been submitted so far, and how many have
    finished."""

    total: int = 0
    completed: int = 0


def count_tasks(spark: SparkSession, group: str) -> TaskCount:
    """The tasks of the started stages of the jobs of job group ``group``, as the status
    tracker sees them now (a stage a job skips, its output being there already, never starts
    and does not count; nor does a stage still waiting for its parents)."""
    tracker = spark.sparkContext.statusTracker()
    count = TaskCount()
    for job_id in tracker.getJobIdsForGroup(group):
        job = tracker.getJobInfo(job_id)
        for stage_id in job.stageIds if job is not None else ():
            stage = tracker.getStageInfo(stage_id)
            if stage is not None and _started(stage):
                count.total += stage.numTasks
                count.completed += stage.numCompletedTasks
    return count


def _started(stage: Any) -> bool:
    return bool(stage.numActiveTasks + stage.numCompletedTasks + stage.numFailedTasks > 0)


@contextmanager
def spark_task_progress(
    spark: SparkSession,
    description: str,
    *,
    enabled: bool | None = None,
    console: Any = None,
    interval: float = 0.2,
) -> Iterator[TaskCount]:
    """Show the Spark tasks of the jobs run inside the block as a progress bar.

    The block's jobs run in a job group of their own, which a background thread polls.
    ``enabled`` defaults to whether stderr is a terminal. The yielded :class:`TaskCount` holds
    the last count when the block ends."""
    last = TaskCount()
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        yield last
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    group = f"cdc-contracts-{uuid.uuid4().hex}"
    context = spark.sparkContext
    stop = threading.Event()
    columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn()]
    bar = Progress(
        *columns,
        TextColumn("tasks"),
        TimeElapsedColumn(),
        console=console or Console(stderr=True),
        transient=True,
        redirect_stdout=False,  # what the block prints goes where it would without the bar
        redirect_stderr=False,
    )

    def refresh() -> None:
        now = count_tasks(spark, group)
        last.total, last.completed = now.total, now.completed
        bar.update(task, total=now.total or None, completed=now.completed)

    def poll() -> None:
        try:
            while not stop.wait(interval):
                refresh()
        except Exception:  # a bar that cannot update must not stop the command
            return

    with bar:
        task = bar.add_task(description, total=None)
        outer = {key: context.getLocalProperty(key) for key in _GROUP_PROPERTIES}
        context.setJobGroup(group, description)
        poller = threading.Thread(target=poll, name="spark-progress", daemon=True)
        poller.start()
        try:
            yield last
        finally:
            stop.set()
            poller.join()
            for key, value in outer.items():  # back to the caller's group, if it had one
                context.setLocalProperty(key, value)  # type: ignore[arg-type]  # None removes
            with suppress(Exception):  # the block's own error, if any, is the one to see
                refresh()


#: The local properties ``setJobGroup`` sets.
_GROUP_PROPERTIES: Final = (
    "spark.jobGroup.id",
    "spark.job.description",
    "spark.job.interruptOnCancel",
)
