# cdc-contracts — the two commands a newcomer needs are `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck unit unit-fast install check-java clean bench fuzz fuzz-parity

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python >= 3.11 is required")'
	@test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[all,db,dev]'
	@touch $(STAMP)

install: $(STAMP)

check-java:
	@command -v java >/dev/null 2>&1 || { echo "error: Java 17 is required for Spark (PySpark 4.x); install a JDK 17 and put 'java' on PATH" >&2; exit 1; }

demo: check-java install
	$(BIN)/cdc-contracts demo

lint: install
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .

typecheck: install
	$(BIN)/mypy

# two workers (CI has 2 cores): while one waits on Spark, a JVM or a server, the other runs;
# tests are handed out one by one (worksteal), each worker with its own Spark session
PYTEST_WORKERS ?= 2
unit: check-java install
	$(BIN)/pytest -q -p no:cacheprovider -n $(PYTEST_WORKERS) --dist worksteal

# the quick loop: everything that does not start a JVM
unit-fast: install
	$(BIN)/pytest -q -p no:cacheprovider -m "not spark"

test: lint typecheck unit

# a bounded fuzz campaign over the real CLI (tests/fuzz/fuzzing.py; `make test` runs a small one)
FUZZ_MUTANTS ?= 5000
FUZZ_SECONDS ?= 1800
fuzz: install
	$(BIN)/python tests/fuzz/fuzzing.py --mutants $(FUZZ_MUTANTS) --seconds $(FUZZ_SECONDS) --jobs 2

# the differential run with thousands of generated messages per format: the Python normalize and
# Spark's decode_changes must agree (tests/parity; `make test` runs a small fixed-seed sample)
PARITY_EXAMPLES ?= 40
PARITY_MESSAGES ?= 100
fuzz-parity: check-java install
	PARITY_EXAMPLES=$(PARITY_EXAMPLES) PARITY_MESSAGES=$(PARITY_MESSAGES) PARITY_RANDOM=1 \
		$(BIN)/pytest -q -p no:cacheprovider tests/parity/test_differential.py

bench: check-java install
	$(BIN)/python -m benchmarks.run_all

clean:
	rm -rf $(VENV) demo-output .cdc-contracts .pytest_cache .mypy_cache .ruff_cache
