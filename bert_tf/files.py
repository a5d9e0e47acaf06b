"""File helpers shared by every writer: input globs and atomic outputs."""

import contextlib
import os
import shutil

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


def check_output_file(path, flag):
    """An output file's path must not be a folder (checked before any work)."""
    if tf.io.gfile.isdir(path):
        raise InputError(f"{flag}={path} is a folder; expected a file path")


def check_output_dir(path, flag):
    """An output folder's path must not be a file (checked before any work)."""
    if tf.io.gfile.exists(path) and not tf.io.gfile.isdir(path):
        raise InputError(f"{flag}={path} is a file; expected a folder")


def _remove(path):
    if tf.io.gfile.isdir(path):
        shutil.rmtree(path) if "://" not in path else tf.io.gfile.rmtree(path)
    elif tf.io.gfile.exists(path):
        tf.io.gfile.remove(path)


@contextlib.contextmanager
def atomic_output(path, suffixes=("",)):
    """Yields a temporary path beside `path` to write to; when the block ends
    without an error, `tmp + suffix` replaces `path + suffix` for each suffix in
    order (a file or a directory), otherwise the temporary files are removed.

    Readers therefore see the old output or the complete new one, never a
    partial one. `suffixes` serves outputs made of several files (a
    checkpoint's `.data-*` then `.index`, the index last). The folder of
    `path` is created if needed.
    """
    tmp = f"{path.rstrip('/')}.tmp-{os.getpid()}"
    tf.io.gfile.makedirs(os.path.dirname(tmp) or ".")
    try:
        yield tmp
        for suffix in suffixes:
            if tf.io.gfile.isdir(tmp + suffix):
                _remove(path + suffix)
                tf.io.gfile.rename(tmp + suffix, path + suffix)
            else:
                tf.io.gfile.rename(tmp + suffix, path + suffix, overwrite=True)
    finally:
        for suffix in suffixes:
            _remove(tmp + suffix)


def write_text_atomically(path, text):
    """Writes `text` to `path` (any tf.io.gfile path) through `atomic_output`."""
    with atomic_output(path) as tmp:
        with tf.io.gfile.GFile(tmp, "w") as f:
            f.write(text)
