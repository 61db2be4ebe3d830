"""Fixtures shared across test packages."""

pytest_plugins = ("tests.sim.cli_fixtures",)


def pytest_collection_modifyitems(config, items):
    """Tests marked ``slow`` run only with RUN_SLOW=1 (CI runs them after ``make test``)."""
    import os

    import pytest

    if os.environ.get("RUN_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow: set RUN_SLOW=1 to run")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
