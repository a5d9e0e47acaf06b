"""Extracts contextual token vectors from chosen layers, as the original extract_features.py.

Input: one example per line, `text_a` or `text_a ||| text_b`. Output: the
original's JSON lines (`--output_format=jsonl`, the default) or arrays in an
.npz file (`--output_format=npz`, for large jobs).
"""

import os

# TensorFlow's C++ start-up notices (CUDA, CPU features) hide the script's own
# lines; a TF_CPP_MIN_LOG_LEVEL you set wins.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from absl import flags  # noqa: E402

from bert_tf.cli import define_flags, options_from_flags, run_main
from bert_tf.tasks.options import FeatureOptions

FLAGS = flags.FLAGS

define_flags(FeatureOptions)


def main(argv):
    del argv
    options = options_from_flags(FeatureOptions, FLAGS)
    # TensorFlow is imported here, once the flags are parsed and checked.
    from bert_tf.extract import extract_features

    extract_features(options)


if __name__ == "__main__":
    run_main(main)
