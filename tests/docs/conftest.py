"""The docs run once per page: where the Spark run of a page is selected, its quick run (the
same blocks less the Spark ones) is left out, since the Spark run runs every block it would."""

from __future__ import annotations

import pytest

QUICK: str = "test_page_examples_run["
WITH_SPARK: str = "test_page_examples_run_with_spark["


@pytest.hookimpl(trylast=True)  # after -m/-k deselection: only a selected Spark run counts
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    spark_pages = {i.name.removeprefix(WITH_SPARK) for i in items if i.name.startswith(WITH_SPARK)}
    covered = [
        i for i in items if i.name.startswith(QUICK) and i.name.removeprefix(QUICK) in spark_pages
    ]
    if covered:
        config.hook.pytest_deselected(items=covered)
        items[:] = [i for i in items if i not in covered]
