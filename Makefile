# Two commands: `make demo` and `make test`. Both create or reuse .venv themselves.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test

.PHONY: demo test test-slow lint bench figures clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Installing compiles the fast engine into numba's cache (minutes, once), so that the first
# `netlock sim --engine fast` a user types loads it in about a second.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	$(BIN)/python -m sim.fast.warm
	touch $@

$(TEST_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test]"
	$(BIN)/python -m sim.fast.warm
	touch $@ $(STAMP)

demo: $(STAMP)
	$(BIN)/netlock demo

# The fast engine is compiled into numba's cache (again, when its sources changed since the
# install) before the parallel test workers start, so that they load it rather than each
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

# The README's figures (docs/img), from the README session's commands, in build/figures.
FIG := build/figures
figures: $(STAMP)
	rm -rf $(FIG) && mkdir -p $(FIG) docs/img
	cd $(FIG) && ln -s ../../configs configs && \
	../../$(BIN)/netlock trace gen micro --config configs/micro-exclusive.yaml --out zipf.parquet \
	    --requests 200000 --set workload.locks=20000 --set workload.zipf=0.99 && \
	../../$(BIN)/netlock plan zipf.parquet --config configs/micro-exclusive.yaml --slots 2000 \
	    --set workload.locks=20000 --out plan.yaml --plot plan.png && \
	../../$(BIN)/netlock sim configs/micro-exclusive.yaml --set workload.locks=20000 \
	    --set workload.zipf=0.99 --set policy.plan=plan.yaml --set sim.duration_s=0.004 \
	    --set sim.timeseries_bin_s=0.0002 --out run && \
	../../$(BIN)/netlock plot run && \
	../../$(BIN)/netlock sweep configs/memory-vs-think-time.yaml --engine fast \
	    --grid switch.slots=0,1000,5000,20000,100000 --grid workload.think_time_us=0,10,100 \
	    --set sim.duration_s=0.005 --out sweep --workers 2
	cp $(FIG)/plan.png docs/img/plan.png
	cp $(FIG)/run/timeseries.png $(FIG)/run/latency_cdf.png $(FIG)/run/split.png docs/img/
	cp $(FIG)/sweep/throughput_rps.png docs/img/sweep-throughput.png
	cp $(FIG)/sweep/switch_share.png docs/img/sweep-switch-share.png

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build *.egg-info
