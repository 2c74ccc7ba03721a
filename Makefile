# Golem: two set-up commands.
#   make demo   install everything into .venv and run the main job
#   make test   install everything into .venv and run the whole test suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PACKAGES := golem-core golem-cli \
            golem-sensors/depth golem-sensors/thermal golem-sensors/audio \
            golem-models golem-losses golem-procgen golem-worldmodel
STAMP  := $(VENV)/.golem-installed
PYTEST_ARGS ?=

.PHONY: install demo test bench clean system-deps oblige

install: $(STAMP)

$(STAMP): constraints.txt requirements-test.txt $(addsuffix /pyproject.toml,$(PACKAGES))
	@bash scripts/system-deps.sh
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --disable-pip-version-check -q -c constraints.txt \
	    $(addprefix -e ,$(filter-out golem-core,$(PACKAGES))) -e 'golem-core[minari]' -r requirements-test.txt
	@touch $(STAMP)

demo: install
	$(BIN)/golem demo

test: install
	@bash scripts/build-oblige.sh || echo "oblige: not built; the oblige backend's tests will skip"
	$(BIN)/python -m pytest $(PYTEST_ARGS)

bench: install
	$(BIN)/python bench/run_all.py

oblige:
	@bash scripts/build-oblige.sh

system-deps:
	@bash scripts/system-deps.sh

clean:
	rm -rf $(VENV) .pytest_cache
