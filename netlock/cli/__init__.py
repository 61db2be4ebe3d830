"""The ``netlock`` command line: a typer app composed from per-package command modules."""
