# Two entry points, each creating or refreshing its own virtual environment:
#   make demo   run the evaluation suite with the heuristic agent on the embedded simulator
#   make test   run the test suite (what CI runs)
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
ANIMALAI := $(VENV)/.animalai-stamp
ARENAS ?=

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,dev,bridge]'
	touch $(STAMP)

# The real animalai client, for the bridge and unity-backend tests. Its 6.x wheels (and
# mlagents-envs-aai's) declare Requires-Python >= 3.14 but use nothing newer than 3.10, so on
# older Pythons pip must be told to ignore that declaration; they add only grpcio and protobuf.
$(ANIMALAI): $(STAMP)
	$(PY) -m pip install --quiet --ignore-requires-python 'animalai[gymnasium]==6.2.0' \
	    mlagents-envs-aai==1.0.0
	touch $(ANIMALAI)

.PHONY: demo test bench bench-audit animalai
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
