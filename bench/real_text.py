"""The real corpora of `make bench-corpora` (PyPI source archives unpacked
into bench/corpora/), read for the benches that measure on them."""

import glob
import os
import sys


def find(corpora_dir, pattern):
    """The newest file matching `pattern` under `corpora_dir`; exits naming
    `make bench-corpora` when there is none."""
    matches = sorted(glob.glob(os.path.join(corpora_dir, pattern)))
    if not matches:
        sys.exit(f"error: no {pattern} under --corpora_dir={corpora_dir}; run make bench-corpora")
    return matches[-1]


def vader_rows(corpora_dir, name):
    """(id, mean rating, text) of a vaderSentiment ground-truth file
    (`movieReviewSnippets`, `tweets`, `amazonReviewSnippets`, `nytEditorialSnippets`)."""
    path = find(
        corpora_dir,
        f"vaderSentiment-*/additional_resources/hutto_ICWSM_2014/{name}_GroundTruth.txt",
    )
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 3 and parts[2].strip():
                yield parts[0], float(parts[1]), parts[2].strip()
