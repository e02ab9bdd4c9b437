# storbench: `make run` for a first benchmark, `make test` for the test suite.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
SCRATCH ?= ./storbench-scratch.dat

.PHONY: setup run test test-busy lint unit bench clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml requirements.lock scripts/setup-system.sh scripts/build-fio-http.sh scripts/fio-http-404.patch scripts/build-versitygw.sh
	bash scripts/setup-system.sh
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check -c requirements.lock -e '.[dev]'
	touch $@

run: setup
	$(BIN)/storbench run quick --target $(SCRATCH)

test: setup
	$(BIN)/ruff check src tests bench
	$(BIN)/pytest -q

# the test command with both cores kept busy (two busy loops beside pytest, killed at the end
# whatever happens): the suite must pass on a loaded machine too. PYTEST_ARGS: a subset.
test-busy: setup
	$(BIN)/ruff check src tests bench
	sh -c 'while :; do :; done' & b1=$$!; sh -c 'while :; do :; done' & b2=$$!; \
	trap "kill $$b1 $$b2" EXIT INT TERM; \
	$(BIN)/pytest -q $(PYTEST_ARGS)

unit: setup
	$(BIN)/pytest -q tests/unit

lint: setup
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

bench: setup
	$(BIN)/python bench/overhead

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
