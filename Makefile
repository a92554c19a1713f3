# Every target bootstraps .venv from the lock file, so a fresh clone needs nothing else.
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
SCHEMA  := parity/schema/acp/schema.json
PYTEST_N ?= $(shell n=$$(nproc); echo $$(( 2 * n < 8 ? 2 * n : 8 )))
PARITY_N ?= auto
PARITY_WORKERS = $(if $(filter auto,$(PARITY_N)),$(shell nproc),$(if $(filter 0,$(PARITY_N)),1 (serial),$(PARITY_N)))
REQUIRE ?=
PEERS    := codex-acp,qwen-code,opencode,opencode-ask
RECORDED ?= $(if $(LIVE),,native,$(PEERS))

.PHONY: parity test record lint peers schema bench clean install explore

$(STAMP): requirements.lock pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --require-hashes -r requirements.lock
	$(BIN)/pip install --quiet --no-deps -e .
	touch $(STAMP)

# The pinned ACP schema is committed and ships in the wheel (parity.checks.acp_schema);
# `make schema` checks it against the pins, and fetches it again with npm when it differs
# (after a bump of the pinned version).
$(SCHEMA): | $(STAMP)
	$(BIN)/python -m parity.checks.acp_schema fetch

schema: $(STAMP)
	$(BIN)/python -m parity.checks.acp_schema fetch

## make parity: every scenario against every available target, then the summary.
## REQUIRE=native,plus: every check involving them must compare, live or against their
## recorded snapshot (neither fails). LIVE=native,plus: they must run live here (a
## recording does not stand in; one that cannot run fails its items and parity checks).
## V=1: a line per item and the whole scenario x target table (`parity run -v`).
## PARITY_N=auto (the default): one pytest-xdist worker per core, faster than serial on
## the project's 2 cores (docs/performance.md, "Whole suite: serial, every core, shards");
## PARITY_N=0 runs serially, PARITY_N=3 three workers. It says how many it uses.
parity: $(STAMP) $(SCHEMA)
	@echo "make parity: $(PARITY_WORKERS) worker(s) on $$(nproc) core(s) (PARITY_N=$(PARITY_N))"
	$(BIN)/parity run -n $(PARITY_N) $(if $(V),-v) $(if $(REQUIRE),--require-targets $(REQUIRE)) $(if $(LIVE),--require-live $(LIVE))

## PYTEST_N: two pytest-xdist workers per core (at most 8; PYTEST_N=auto is one per
## core): the suite waits on agents, timeouts and installs for nearly half its worker
## time, so a second worker per core fills the cores (docs/performance.md, "make test in
## five minutes").
## make test: unit and integration tests of both packages, plus the parity suite, then
## the DSH plugin's node tests against the real fake LLM. Native and the third-party
## peers are compared from their recorded snapshots there (RECORDED, `parity run
## --recorded`): native's start-up alone (some 2.4 s of CPU a run, ~150 runs) is 40 % of
## the suite's CPU on two cores, and opencode and qwen-code take 2 to 6 s of CPU a run
## (docs/performance.md, "make test"); every recording must exist. Their live runs are
## `make parity`'s, which CI runs after this. LIVE=native runs them all live here too
## (RECORDED= with LIVE unset: native recorded no more). Not -q: under pytest-xdist it
## hides the "N workers [M items]" line that says collection (some 30 s per worker) is
## over; count-style progress says how far the run is, and unbuffered output shows
## it as it happens when make's output goes to a pipe or a CI log.
## --dist loadgroup: the tests that share a module-scoped fixture, and the items of one
## scenario file, each run on one worker; the subprocess-heavy tests start first
## (tests/support/schedule.py). Bytecode is cached in .cache/pycache even where
## PYTHONDONTWRITEBYTECODE is set: every `parity` subprocess of the suite would
## otherwise compile the project, and pytest rewrite every test module, from source
## (docs/performance.md, "make test").
PYCACHE = PYTHONDONTWRITEBYTECODE= PYTHONPYCACHEPREFIX=$(CURDIR)/.cache/pycache
test: $(STAMP) $(SCHEMA)
	$(PYCACHE) PYTHONUNBUFFERED=1 $(BIN)/pytest -n $(PYTEST_N) --dist loadgroup --no-header -o console_output_style=count $(if $(LIVE),--require-live $(LIVE)) $(if $(RECORDED),--recorded $(RECORDED) --require-targets $(RECORDED))
	node --test tests/adapters/

## make explore: `parity explore` on the pairs that must agree, a fixed number of examples
## and seed (the budget only caps a stuck run; docs/explore.md); findings go to
## .cache/explore-found/<pair>/ and fail it. `.ci/run` runs it after `make test`
## (docs/explore.md, "In CI"): 80 examples reach every generator category on both pairs.
EXPLORE = $(BIN)/parity explore --budget 900 --max-examples 80 --seed 1 --no-database
explore: $(STAMP) $(SCHEMA)
	$(EXPLORE) --targets plus,plus-openai -o .cache/explore-found/plus-openai
	$(EXPLORE) --targets plus,plus-full --additive -o .cache/explore-found/plus-full

## make record: (re)write snapshots for every available target.
record: $(STAMP) $(SCHEMA)
	$(BIN)/parity record

## make peers: install the third-party peer agents into .cache/peers.
peers: $(STAMP)
	$(BIN)/parity peers install

## make install: put `acp-plus` (and `parity`) on PATH from this checkout, as a pipx
## tool, else a uv tool, else with pip --user (into ~/.local/bin); no venv bootstrap
## and no tests.
install:
	@if command -v pipx >/dev/null 2>&1; then pipx install --force .; \
	elif command -v uv >/dev/null 2>&1; then uv tool install --force .; \
	else echo "make install: no pipx or uv; installing with pip --user (~/.local/bin)"; \
	     $(PY) -m pip install --user . && \
	     $(PY) -m pip install --user --force-reinstall --no-deps . ; fi

lint: $(STAMP)
	$(BIN)/ruff check parity acp_plus tests bench
	$(BIN)/ruff format --check parity acp_plus tests bench
	$(BIN)/mypy

bench: $(STAMP) $(SCHEMA)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .cache
