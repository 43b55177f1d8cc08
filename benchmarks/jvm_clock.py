"""A clock of a JVM's process CPU time, for the Spark and Flink benchmarks (standard library
only: benchmarks/flink_decode.py may run in another virtualenv)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any


def process_cpu_clock(jvm: Any) -> Callable[[], float]:
    """Seconds of CPU the JVM behind py4j's ``jvm`` view has used (all threads), read from its
    OperatingSystemMXBean (``getProcessCpuTime``), or from /proc where the JDK's module system
    refuses py4j's reflective call."""
    bean = jvm.java.lang.management.ManagementFactory.getOperatingSystemMXBean()
    try:
        bean.getProcessCpuTime()
        return lambda: float(bean.getProcessCpuTime()) / 1e9
    except Exception:
        pid = jvm.java.lang.ProcessHandle.current().pid()
        ticks = os.sysconf("SC_CLK_TCK")

        def clock() -> float:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / ticks

        return clock
