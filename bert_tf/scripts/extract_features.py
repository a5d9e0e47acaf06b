"""Extracts contextual token vectors from chosen layers, as the original extract_features.py.

Input: one example per line, `text_a` or `text_a ||| text_b`. Output: the
original's JSON lines (`--output_format=jsonl`, the default) or arrays in an
.npz file (`--output_format=npz`, for large jobs).
"""

from bert_tf.scripts import script

main, run = script("extract_features", __doc__)

if __name__ == "__main__":
    run()
