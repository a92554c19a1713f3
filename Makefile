# Every target bootstraps .venv from the lock file, so a fresh clone needs nothing else.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
SCHEMA  := .cache/acp-schema/schema.json
PYTEST_N ?= auto
REQUIRE ?=

.PHONY: parity test record lint peers schema bench clean install explore

$(STAMP): requirements.lock pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --require-hashes -r requirements.lock
	$(BIN)/pip install --quiet --no-deps -e .
	touch $(STAMP)

$(SCHEMA): $(STAMP) parity/checks/acp_schema.py
	$(BIN)/python -m parity.checks.acp_schema fetch

schema: $(SCHEMA)

## make parity: every scenario against every available target, then the summary table.
## REQUIRE=native,plus: every check involving them must compare, live or against their
## recorded snapshot (neither fails). LIVE=native,plus: they must run live here (a
## recording does not stand in; one that cannot run fails its items and parity checks).
parity: $(STAMP) $(SCHEMA)
	$(BIN)/parity run $(if $(REQUIRE),--require-targets $(REQUIRE)) $(if $(LIVE),--require-live $(LIVE))

## make test: unit and integration tests of both packages, plus the parity suite, then
## the DSH plugin's node tests against the real fake LLM.
test: $(STAMP) $(SCHEMA)
	$(BIN)/pytest -n $(PYTEST_N) -q
	node --test tests/adapters/

## make explore: `parity explore` on the pairs that must agree, with a small fixed budget
## and seed (docs/explore.md); findings go to .cache/explore-found/<pair>/ and fail it.
EXPLORE = $(BIN)/parity explore --budget 120 --max-examples 60 --seed 1 --no-database
explore: $(STAMP) $(SCHEMA)
	$(EXPLORE) --targets plus,plus-openai -o .cache/explore-found/plus-openai
	$(EXPLORE) --targets plus,plus-full --additive -o .cache/explore-found/plus-full

## make record: (re)write snapshots for every available target.
record: $(STAMP) $(SCHEMA)
	$(BIN)/parity record

## make peers: install the third-party peer agents into .cache/peers.
peers: $(STAMP)
	$(BIN)/parity peers install

## make install: put `acp-plus` (and `parity`) on PATH as a pipx tool, from this checkout;
## no venv bootstrap and no tests. `uv tool install --force .` does the same with uv.
install:
	pipx install --force .

lint: $(STAMP)
	$(BIN)/ruff check parity acp_plus tests bench
	$(BIN)/ruff format --check parity acp_plus tests bench
	$(BIN)/mypy

bench: $(STAMP) $(SCHEMA)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .cache
