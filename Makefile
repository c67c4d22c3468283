# Two entry points, each creating or refreshing its own virtual environment:
#   make demo   run the evaluation suite with the heuristic agent on the embedded simulator
#   make test   run the test suite (what CI runs)
# The demo's environment holds the runtime only; `make test` adds the test tools and the
# extras on top of it, and `make animalai` the real animalai client.
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
TEST_STAMP := $(VENV)/.test-stamp
ANIMALAI := $(VENV)/.animalai-stamp
ARENAS ?=
PYTEST_ARGS ?=

LOCK   := requirements.lock
LOCK_TEST := requirements-test.lock
LOCK_UNITY := requirements-unity.lock
EXTRAS := --extra test --extra dev --extra bridge --extra mp4 --extra inspect
UV_COMPILE = $(VENV)/bin/uv pip compile --quiet --generate-hashes --no-annotate \
    --custom-compile-command "make lock"

# The runtime, every package pinned with its hashes (requirements.lock: pyproject's
# dependencies), installed with --require-hashes; then the project itself, which cannot be
# hashed (it is this folder): without dependencies and with the locked setuptools. pip check
# catches a lock older than pyproject.toml (run `make lock`).
$(STAMP): pyproject.toml $(LOCK)
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --require-hashes -r $(LOCK)
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	$(PY) -m pip check
	touch $(STAMP)

# The tested set on top of the runtime: requirements-test.lock holds the runtime at the same
# versions (make lock resolves the runtime within it) and the extras above.
$(TEST_STAMP): $(STAMP) $(LOCK_TEST)
	$(PY) -m pip install --quiet --require-hashes -r $(LOCK_TEST)
	$(PY) -m pip check
	touch $(TEST_STAMP)

# The real animalai client, for the bridge and unity-backend tests, with what it needs beyond
# the runtime (grpcio, protobuf: the bridge extra's). Its 6.x wheels (and mlagents-envs-aai's)
# declare Requires-Python >= 3.14 but use nothing newer than 3.10, so on older Pythons pip must
# be told to ignore that declaration; every dependency is pinned in the lock, so none is
# resolved here.
$(ANIMALAI): $(STAMP) $(LOCK_UNITY)
	$(PY) -m pip install --quiet --require-hashes --no-deps --ignore-requires-python \
	    -r $(LOCK_UNITY)
	$(PY) -m pip check
	touch $(ANIMALAI)

# Resolve the locks again with uv (versions already pinned in them are kept; pass
# UPGRADE=--upgrade for the newest pyproject.toml allows), then run `make test`: what the locks
# hold is what was tested. The tested set is resolved first; the runtime and the animalai
# client are resolved within it, so each package has one version in all three files.
UPGRADE ?=
lock: $(STAMP)
	$(PY) -m pip install --quiet uv
	printf 'setuptools>=77\n' | $(UV_COMPILE) $(UPGRADE) pyproject.toml - $(EXTRAS) \
	    --universal --python-version 3.11 -o $(LOCK_TEST)
	printf 'setuptools>=77\n' | $(UV_COMPILE) pyproject.toml - -c $(LOCK_TEST) \
	    --universal --python-version 3.11 -o $(LOCK)
	printf 'animalai[gymnasium]==6.2.0\nmlagents-envs-aai==1.0.0\n' | $(UV_COMPILE) - \
	    -c $(LOCK_TEST) --python-version 3.14 -o $(LOCK_UNITY)

.PHONY: demo test bench bench-audit animalai lock
animalai: $(ANIMALAI)
demo: $(STAMP)
	$(PY) -m llm_aai.run --model heuristic --level 1-10 --trials 1 $(if $(ARENAS),--arenas-dir $(ARENAS))

# pytest exits 5 when it collected nothing: treat that as a failure, not a pass.
test: $(TEST_STAMP) $(ANIMALAI)
	$(PY) -m pytest -q -p no:cacheprovider $(PYTEST_ARGS); status=$$?; \
	if [ $$status -eq 5 ]; then echo "pytest collected no tests"; exit 1; fi; exit $$status

bench: $(TEST_STAMP) $(ANIMALAI)
	$(if $(ARENAS),LLM_AAI_ARENAS=$(ARENAS)) $(PY) -m benchmarks

# The testbed audit's speed: the 40-task audit on 2 workers, and the 900-task estimate.
bench-audit: $(STAMP)
	$(PY) -m benchmarks.bench_audit --workers 2 $(if $(ARENAS),--arenas-dir $(ARENAS))
