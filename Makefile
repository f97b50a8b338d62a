# The two commands a person needs: `make lab` (set up and open the course) and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# jupyter refuses to run as root unless told; CI and these machines run as root.
ROOT_FLAG := $(shell [ "$$(id -u)" = 0 ] && echo --allow-root)

.PHONY: lab test test-fast test-unit test-lessons lint lessons bench clean

$(STAMP): pyproject.toml constraints.txt jupyter/overrides.json
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q -c constraints.txt -e '.[test]'
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	# settings overrides: no "official Jupyter news?" toast over the first widget
	mkdir -p $(VENV)/share/jupyter/lab/settings
	cp jupyter/overrides.json $(VENV)/share/jupyter/lab/settings/overrides.json
	touch $(STAMP)

lab: $(STAMP)
	$(BIN)/jupyter lab $(ROOT_FLAG) --notebook-dir=notebooks notebooks/00_start_here.ipynb

# Linters first: they take seconds and catch what the slow tests would meet later.
lint: $(STAMP)
	$(BIN)/ruff check autograd_lab tests bench scripts
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

test: lint
	$(BIN)/python -m pytest tests
	$(BIN)/python -m pytest -p no:cacheprovider --doctest-modules autograd_lab
	$(BIN)/python -m pytest -p no:cacheprovider --nbval --nbval-current-env \
		--nbval-sanitize-with notebooks/sanitize.cfg notebooks/*.ipynb notebooks/teachers/*.ipynb

# The edit-test loop: linters and unit tests, no browser, no lessons.
test-fast: lint
	$(BIN)/python -m pytest tests -m "not browser"
	$(BIN)/python -m pytest -p no:cacheprovider --doctest-modules autograd_lab

test-unit: $(STAMP)
	$(BIN)/python -m pytest tests -m "not browser"

test-lessons: $(STAMP)
	$(BIN)/python -m pytest -p no:cacheprovider --nbval --nbval-current-env \
		--nbval-sanitize-with notebooks/sanitize.cfg notebooks/*.ipynb notebooks/teachers/*.ipynb

# Re-run the lessons and store their outputs (after changing the lab or a lesson).
lessons: $(STAMP)
	$(BIN)/python scripts/run_lessons.py

bench: $(STAMP)
	@for f in bench/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
