"""Fixtures shared across test packages, and Hypothesis without its per-example deadline:
a test's outcome must not depend on how loaded the machine is (timing belongs to
``netlock bench``)."""

import os

from hypothesis import settings

os.environ["NETLOCK_PLAN_CACHE"] = "off"
"""Every test makes its plans afresh (a plan a test or an earlier run left in the cache
would skip the pilot another test looks at); tests/sim/test_plan_cache.py turns it on."""

pytest_plugins = ("tests.sim.cli_fixtures",)

settings.register_profile("netlock", deadline=None)
settings.load_profile("netlock")


def pytest_collection_modifyitems(config, items):
    """Tests marked ``slow`` run only with RUN_SLOW=1 (CI runs them after ``make test``)."""
    import pytest

    if os.environ.get("RUN_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow: set RUN_SLOW=1 to run")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
