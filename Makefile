# The two commands a person needs: `make lab` (set up and open the course) and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# jupyter refuses to run as root unless told; CI and these machines run as root.
ROOT_FLAG := $(shell [ "$$(id -u)" = 0 ] && echo --allow-root)

.PHONY: lab test test-fast test-unit test-lessons lint lessons derived bench clean classroom classroom-env bench-classroom catalogs test-release test-colab test-torch-next

# The catalogs of every language but English, compiled from their .po files with Babel's own
# command line; `make lab AUTOGRAD_LAB_LANG=zh` opens the course of that language (notebooks/zh/).
PO := $(wildcard autograd_lab/locale/*/LC_MESSAGES/*.po)
MO := $(PO:.po=.mo)
AUTOGRAD_LAB_LANG ?= en
# Tests and stored lessons are in English unless a lesson asks for Chinese itself.
EN := AUTOGRAD_LAB_LANG=en
# the language's code (zh for zh_CN or zh-Hans), and its course's folder: notebooks/<code>/, none for English
LANG_CODE := $(firstword $(subst _, ,$(subst -, ,$(AUTOGRAD_LAB_LANG))))
COURSE := $(if $(filter-out en,$(LANG_CODE)),$(LANG_CODE)/,)
# Tests in parallel on every core (pytest-xdist); the tests that start kernels, servers or a browser
# share one worker and run one after the other (their xdist group, tests/conftest.py). One torch
# thread per process (kernels and graders' subprocesses inherit it): with every core busy, torch's
# intra-op threads spin against the other workers and a small op can take milliseconds.
PARALLEL := -n auto --dist loadgroup
ONE_THREAD := OMP_NUM_THREADS=1
LESSONS := notebooks/*.ipynb notebooks/teachers/*.ipynb notebooks/*/[0-9]*.ipynb notebooks/*/teachers/*.ipynb

# A class on one server (classroom/): JupyterHub in its own venv, its proxy from npm in
# classroom/node_modules, jupyterhub-singleuser in .venv (the learners' servers run there, with the lab).
CLASSROOM := .classroom
CLASSROOM_STAMP := $(CLASSROOM)/.installed
N ?= 4

$(STAMP): pyproject.toml constraints.txt jupyter/overrides.json tests/browser/package.json tests/browser/package-lock.json
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q -c constraints.txt -e '.[test]'
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	# settings overrides: no "official Jupyter news?" toast over the first widget
	mkdir -p $(VENV)/share/jupyter/lab/settings
	cp jupyter/overrides.json $(VENV)/share/jupyter/lab/settings/overrides.json
	# axe-core for the browser tests' accessibility check, from npm into tests/browser/node_modules
	cd tests/browser && npm ci --no-audit --no-fund --loglevel=error --cache .npm-cache
	touch $(STAMP)

# The graders (nbgrader, otter-grader) get a venv of their own, so that the JupyterLab of `make lab`
# does not gain their extensions; tests/test_graders.py runs them from there.
GRADERS := .graders
$(GRADERS)/.installed: pyproject.toml constraints.txt constraints-graders.txt
	test -x $(GRADERS)/bin/python || $(PYTHON) -m venv $(GRADERS)
	$(GRADERS)/bin/python -m pip install -q -c constraints.txt -c constraints-graders.txt \
		nbgrader otter-grader -e .
	touch $(GRADERS)/.installed

%.mo: %.po $(STAMP)
	$(BIN)/pybabel -q compile -i $< -o $@

catalogs: $(MO)

lab: $(STAMP) $(MO)
	AUTOGRAD_LAB_LANG=$(AUTOGRAD_LAB_LANG) $(BIN)/jupyter lab $(ROOT_FLAG) --notebook-dir=notebooks notebooks/$(COURSE)00_start_here.ipynb

# Linters first: they take seconds and catch what the slow tests would meet later.
lint: $(STAMP)
	$(BIN)/ruff check autograd_lab tests bench scripts classroom
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

test: lint $(MO) $(GRADERS)/.installed
	-@$(MAKE) --no-print-directory classroom-env || echo "classroom: hub or proxy not installed; tests/test_classroom.py will skip"
	$(EN) $(ONE_THREAD) $(BIN)/python -m pytest $(PARALLEL) tests
	$(EN) $(BIN)/python -m pytest -p no:cacheprovider --doctest-modules autograd_lab
	$(MAKE) --no-print-directory test-lessons

# The edit-test loop: linters and unit tests, no browser, no lessons.
test-fast: lint $(MO)
	$(EN) $(ONE_THREAD) $(BIN)/python -m pytest $(PARALLEL) tests -m "not browser"
	$(EN) $(BIN)/python -m pytest -p no:cacheprovider --doctest-modules autograd_lab

test-unit: $(STAMP) $(MO)
	$(EN) $(ONE_THREAD) $(BIN)/python -m pytest $(PARALLEL) tests -m "not browser"

# Each notebook runs in one kernel on one worker (--dist loadfile), its cells in order.
test-lessons: $(STAMP) $(MO)
	$(EN) $(BIN)/python -m pytest -p no:cacheprovider -n auto --dist loadfile --nbval --nbval-current-env \
		--nbval-sanitize-with notebooks/sanitize.cfg $(LESSONS)

# The files derived from the code and the lessons (the bank's order, the exercise tables of docs/teachers.md).
derived: $(STAMP) $(MO)
	$(EN) $(BIN)/python scripts/derived.py

# The release as a learner gets it (.ci/run calls it): a fresh clone of the committed tree, its sdist
# and wheel built by `python -m build` (the wheel from the sdist; build and cffconvert in .release/,
# a venv of their own), CITATION.cff validated; then tests/test_release_build.py looks inside both
# artifacts, installs the wheel into a clean venv outside the repository (torch from the local disk,
# -c constraints.txt), copies the course from an empty folder and runs a notebook of every magic in
# both languages through a kernel of that venv. Commit first: what is not committed is not built.
RELEASE := .release
$(RELEASE)/.installed: Makefile
	test -x $(RELEASE)/bin/python || $(PYTHON) -m venv $(RELEASE)
	$(RELEASE)/bin/python -m pip install -q build==1.6.1 cffconvert==2.0.0
	touch $(RELEASE)/.installed

test-release: $(STAMP) $(RELEASE)/.installed
	rm -rf $(RELEASE)/clone $(RELEASE)/dist
	git clone -q . $(RELEASE)/clone
	$(RELEASE)/bin/cffconvert --validate -i $(RELEASE)/clone/CITATION.cff
	$(RELEASE)/bin/python -m build -o $(RELEASE)/dist $(RELEASE)/clone
	AUTOGRAD_LAB_RELEASE=$(CURDIR)/$(RELEASE) $(EN) $(ONE_THREAD) $(BIN)/python -m pytest -p no:cacheprovider \
		-p no:xdist -s tests/test_release_build.py

# Colab's stack (.ci/run calls it): IPython 7.34.0, ipykernel 6.17.1, ipywidgets 7.7.1 and what its
# runtime pins beside them (constraints-colab.txt), installed first as a Colab kernel has them; then
# the lab as a learner installs it, with no constraint, which must change none of them; then the unit
# tests that need no JupyterLab or other venv, and lesson 00 in both languages through its kernel.
COLAB := .colab
COLAB_STACK := ipython ipykernel ipywidgets traitlets notebook matplotlib pyparsing numpy torch
COLAB_PINS = $(COLAB)/bin/python -m pip freeze | grep -iE '^(ipython|ipykernel|ipywidgets|torch)=='
$(COLAB)/.installed: pyproject.toml constraints-colab.txt
	rm -rf $(COLAB) && $(PYTHON) -m venv $(COLAB)
	$(COLAB)/bin/python -m pip install -q -c constraints-colab.txt $(COLAB_STACK)
	$(COLAB_PINS) > $(COLAB)/stack.txt
	$(COLAB)/bin/python -m pip install -q -e .
	$(COLAB_PINS) | diff $(COLAB)/stack.txt - || { echo "installing the lab changed Colab's stack (above)"; exit 1; }
	$(COLAB)/bin/python -m pip install -q -c constraints-colab.txt pytest pytest-xdist pytest-timeout \
		hypothesis nbval nbformat nbclient babel
	touch $(COLAB)/.installed

# ipykernel 6.17's debugger prints a frozen-modules note on stderr unless told not to check; the
# kernel clients of that stack (jupyter_client 7) leave sockets and event loops for the collector,
# which pytest would report as unraisable in whichever test collects them (unclosed-resource
# warnings alone are let pass there)
test-colab: $(COLAB)/.installed $(MO)
	$(EN) $(ONE_THREAD) $(COLAB)/bin/python -m pytest -p no:cacheprovider $(PARALLEL) tests -m "not browser" \
		-W "ignore::ResourceWarning" \
		--ignore=tests/test_graders.py --ignore=tests/test_classroom.py --ignore=tests/test_book.py
	PYDEVD_DISABLE_FILE_VALIDATION=1 $(EN) $(COLAB)/bin/python -m pytest -p no:cacheprovider --nbval \
		--nbval-current-env --nbval-sanitize-with notebooks/sanitize.cfg notebooks/00_start_here.ipynb \
		notebooks/zh/00_start_here.ipynb

# The next torch (.ci/run calls it): torch 2.14.1 (a CUDA build on these machines' disk, about 5.5 GB,
# no download; it runs on the CPU) with every other version of constraints.txt, and the same unit
# tests as test-colab.
TORCH_NEXT := .torch-next
$(TORCH_NEXT)/.installed: pyproject.toml constraints.txt
	rm -rf $(TORCH_NEXT) && $(PYTHON) -m venv $(TORCH_NEXT)
	grep -v '^torch==' constraints.txt > $(TORCH_NEXT)/constraints.txt
	echo 'torch==2.14.1' >> $(TORCH_NEXT)/constraints.txt
	$(TORCH_NEXT)/bin/python -m pip install -q -c $(TORCH_NEXT)/constraints.txt -e . pytest pytest-xdist \
		pytest-timeout hypothesis nbformat nbclient ipykernel babel
	touch $(TORCH_NEXT)/.installed

test-torch-next: $(TORCH_NEXT)/.installed $(MO)
	$(EN) $(ONE_THREAD) $(TORCH_NEXT)/bin/python -m pytest -p no:cacheprovider $(PARALLEL) tests -m "not browser" \
		--ignore=tests/test_graders.py --ignore=tests/test_classroom.py --ignore=tests/test_book.py

# Re-run the lessons and store their outputs (after changing the lab or a lesson).
lessons: $(STAMP) $(MO)
	$(EN) $(BIN)/python scripts/run_lessons.py

# Every benchmark runs even when one fails (bench_graph_drawing needs torchviz and Graphviz's dot,
# which the lab never needs); the exit status says whether any failed.
bench: $(STAMP)
	@status=0; for f in bench/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || status=1; done; exit $$status

# The course as a website: Jupyter Book 1 in a venv of its own (.book/, pinned by constraints-book.txt)
# builds every lesson of every language and the docs from their stored outputs, nothing executed,
# into _build/html (scripts/book.py makes the table of contents from the folders; open
# _build/html/index.html). tests/test_book.py builds it again and reads the pages.
.PHONY: book
BOOK := .book
$(BOOK)/.installed: constraints-book.txt
	test -x $(BOOK)/bin/python || $(PYTHON) -m venv $(BOOK)
	$(BOOK)/bin/python -m pip install -q -c constraints-book.txt jupyter-book
	touch $(BOOK)/.installed

book: $(BOOK)/.installed
	$(BOOK)/bin/python scripts/book.py

$(CLASSROOM_STAMP): $(STAMP) constraints-classroom.txt classroom/package.json classroom/package-lock.json
	test -x $(CLASSROOM)/bin/python || $(PYTHON) -m venv $(CLASSROOM)
	$(CLASSROOM)/bin/python -m pip install -q -c constraints.txt -c constraints-classroom.txt jupyterhub
	$(BIN)/python -m pip install -q -c constraints.txt -c constraints-classroom.txt jupyterhub
	cd classroom && npm ci --no-audit --no-fund --loglevel=error --cache .npm-cache
	touch $(CLASSROOM_STAMP)

classroom-env: $(CLASSROOM_STAMP)

# `make classroom N=8`: a JupyterHub with N learners on a loopback port, until Ctrl-C.
classroom: $(CLASSROOM_STAMP)
	$(BIN)/python classroom/serve.py --learners $(N)

# Not part of `make bench`: it starts a hub and N learners' kernels and takes minutes.
bench-classroom: $(CLASSROOM_STAMP)
	AUTOGRAD_LAB_BENCH_CLASSROOM=1 $(BIN)/python bench/bench_classroom.py --learners $(N)

clean:
	rm -rf $(VENV) $(GRADERS) $(CLASSROOM) $(COLAB) $(TORCH_NEXT) $(BOOK) _build .pytest_cache .hypothesis
