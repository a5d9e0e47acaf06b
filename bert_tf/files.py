"""Input file lists from the scripts' comma-separated glob flags."""

import tensorflow as tf

from bert_tf.errors import InputError


def expand_input_patterns(patterns, flag="--input_file"):
    """Comma-separated globs (a string) or a list of them -> the matching files.

    Each pattern's matches are sorted and kept in the order of the patterns;
    empty patterns are ignored. Raises InputError naming every pattern that
    matches no file, or when no pattern is given at all.
    """
    if isinstance(patterns, str):
        patterns = patterns.split(",")
    patterns = [p.strip() for p in patterns if p.strip()]
    if not patterns:
        raise InputError(f"{flag} names no file")
    files, unmatched = [], []
    for pattern in patterns:
        matches = sorted(tf.io.gfile.glob(pattern))
        files.extend(matches)
        if not matches:
            unmatched.append(pattern)
    if unmatched:
        raise InputError(f"{flag}: no file matches {', '.join(unmatched)}")
    return files
