# Two entry points, each creating or refreshing its own virtual environment:
#   make demo   run the evaluation suite with the heuristic agent on the embedded simulator
#   make test   run the test suite (what CI runs)
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
ARENAS ?=

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,dev]'
	touch $(STAMP)

.PHONY: demo test bench
demo: $(STAMP)
	$(PY) -m llm_aai.run --model heuristic --level 1-10 --trials 1 $(if $(ARENAS),--arenas-dir $(ARENAS))

# pytest exits 5 when it collected nothing: treat that as a failure, not a pass.
test: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider; status=$$?; \
	if [ $$status -eq 5 ]; then echo "pytest collected no tests"; exit 1; fi; exit $$status

bench: $(STAMP)
	$(if $(ARENAS),LLM_AAI_ARENAS=$(ARENAS)) $(PY) -m benchmarks
