# Two entry points, each creating or refreshing its own virtual environment:
#   make demo   run the evaluation suite with the heuristic agent on the embedded simulator
#   make test   run the test suite (what CI runs)
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
ANIMALAI := $(VENV)/.animalai-stamp
ARENAS ?=

LOCK   := requirements.lock
LOCK_UNITY := requirements-unity.lock
EXTRAS := --extra test --extra dev --extra bridge --extra mp4 --extra inspect

# The tested set, every package pinned with its hashes (requirements.lock, from pyproject's
# extras above), installed with --require-hashes; then the project itself, which cannot be
# hashed (it is this folder): without dependencies and with the locked setuptools. pip check
# catches a lock older than pyproject.toml (run `make lock`).
$(STAMP): pyproject.toml $(LOCK)
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --require-hashes -r $(LOCK)
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	$(PY) -m pip check
	touch $(STAMP)

# The real animalai client, for the bridge and unity-backend tests. Its 6.x wheels (and
# mlagents-envs-aai's) declare Requires-Python >= 3.14 but use nothing newer than 3.10, so on
# older Pythons pip must be told to ignore that declaration; their dependencies (grpcio,
# protobuf, gymnasium...) are in requirements.lock, so they are installed without any.
$(ANIMALAI): $(STAMP) $(LOCK_UNITY)
	$(PY) -m pip install --quiet --require-hashes --no-deps --ignore-requires-python \
	    -r $(LOCK_UNITY)
	touch $(ANIMALAI)

# Re-resolve the locks to the newest versions pyproject.toml allows (with uv), then run
# `make test`: what the locks hold is what was tested.
lock: $(STAMP)
	$(PY) -m pip install --quiet uv
	printf 'setuptools>=77\n' | $(VENV)/bin/uv pip compile pyproject.toml - $(EXTRAS) \
	    --universal --python-version 3.11 --generate-hashes --no-annotate \
	    --custom-compile-command "make lock" -o $(LOCK)
	printf 'animalai[gymnasium]==6.2.0\nmlagents-envs-aai==1.0.0\n' | $(VENV)/bin/uv pip \
	    compile - --no-deps --python-version 3.14 --generate-hashes --no-annotate \
	    --custom-compile-command "make lock" -o $(LOCK_UNITY)

.PHONY: demo test bench bench-audit animalai lock
animalai: $(ANIMALAI)
demo: $(STAMP)
	$(PY) -m llm_aai.run --model heuristic --level 1-10 --trials 1 $(if $(ARENAS),--arenas-dir $(ARENAS))

# pytest exits 5 when it collected nothing: treat that as a failure, not a pass.
test: $(STAMP) $(ANIMALAI)
	$(PY) -m pytest -q -p no:cacheprovider; status=$$?; \
	if [ $$status -eq 5 ]; then echo "pytest collected no tests"; exit 1; fi; exit $$status

bench: $(STAMP) $(ANIMALAI)
	$(if $(ARENAS),LLM_AAI_ARENAS=$(ARENAS)) $(PY) -m benchmarks

# The testbed audit's speed: the 40-task audit on 2 workers, and the 900-task estimate.
bench-audit: $(STAMP)
	$(PY) -m benchmarks.bench_audit --workers 2 $(if $(ARENAS),--arenas-dir $(ARENAS))
