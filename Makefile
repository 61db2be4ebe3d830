# Two commands: `make demo` and `make test`. Both create or reuse .venv themselves.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

.PHONY: demo test test-slow lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(TEST_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $@ $(STAMP)

demo: $(STAMP)
	$(BIN)/netlock demo

# The fast engine is compiled into numba's cache once (minutes on a fresh clone, a second
# later) before the parallel test workers start, so that they load it rather than each
# compiling it.
test: $(TEST_STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m sim.fast.warm
	$(BIN)/python -m pytest -q -n 2

# The heavier runs (marked slow): the engines' agreement on every canonical config at full
# length. CI runs them after `make test`.
test-slow: $(TEST_STAMP)
	$(BIN)/python -m sim.fast.warm
	RUN_SLOW=1 $(BIN)/python -m pytest -q -n 2 -m slow

lint: $(TEST_STAMP)
	$(BIN)/ruff check .

bench: $(STAMP)
	$(BIN)/netlock bench

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build *.egg-info
