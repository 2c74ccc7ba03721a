# Golem: two set-up commands.
#   make demo   install everything into .venv and run the main job
#   make test   install everything into .venv and run the whole test suite
#   make test-fast  the tests that run no engine episode (a few minutes)
#   make docs   build the documentation site strictly into site/
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PACKAGES := golem-core golem-cli golem-experts golem-match \
            golem-sensors/depth golem-sensors/thermal golem-sensors/audio golem-sensors/automap \
            golem-models golem-losses golem-augment golem-procgen golem-worldmodel \
            golem-farama golem-explain golem-rl
STAMP  := $(VENV)/.golem-installed
PYTEST_ARGS ?=

.PHONY: install demo test test-fast docs bench clean system-deps oblige

install: $(STAMP)

$(STAMP): constraints.txt requirements-test.txt $(addsuffix /pyproject.toml,$(PACKAGES))
	@bash scripts/system-deps.sh
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --disable-pip-version-check -q -c constraints.txt \
	    $(addprefix -e ,$(filter-out golem-core,$(PACKAGES))) -e 'golem-core[all]' -r requirements-test.txt
	@touch $(STAMP)

demo: install
	$(BIN)/golem demo

test: install
	@bash scripts/build-oblige.sh || echo "oblige: not built; the oblige backend's tests will skip"
	$(BIN)/python -m pytest -n 2 --dist loadfile --durations=30 $(PYTEST_ARGS)

test-fast: install
	$(BIN)/python -m pytest -m "not engine and not slow" -n 2 --dist worksteal $(PYTEST_ARGS)

docs: install
	$(BIN)/python scripts/docs/generate.py --check
	$(BIN)/python -m mkdocs build --strict --site-dir site

bench: install
	$(BIN)/python bench/run_all.py

oblige:
	@bash scripts/build-oblige.sh

system-deps:
	@bash scripts/system-deps.sh

clean:
	rm -rf $(VENV) .pytest_cache site
