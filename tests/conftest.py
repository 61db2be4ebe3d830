"""Fixtures shared across test packages."""

pytest_plugins = ("tests.sim.cli_fixtures",)
