"""All file access: local paths, and paths with a scheme (`gs://...`), input
globs and atomic outputs.

Local paths use the standard library; paths with a scheme (`gs://...`) go
through `tf.io.gfile`, so TensorFlow is imported only for them (a process
that makes data from local files starts without its ~4 s import).
"""

import contextlib
import glob
import os
import shutil

from bert_tf.errors import InputError


def _gfile():
    import tensorflow as tf  # here, not at the top: see the module docstring

    return tf.io.gfile


def is_remote(path):
    """Whether `path` names a file system other than the local one (`gs://`, ...)."""
    return "://" in path


def open_file(path, mode="r"):
    """`open(path, mode)`, through `tf.io.gfile.GFile` for remote paths. Text
    is UTF-8 with its line ends as they are (as GFile reads them)."""
    if is_remote(path):
        return _gfile().GFile(path, mode)
    return open(path, mode, **({} if "b" in mode else {"encoding": "utf-8", "newline": ""}))


def exists(path):
    return _gfile().exists(path) if is_remote(path) else os.path.exists(path)


def isdir(path):
    return _gfile().isdir(path) if is_remote(path) else os.path.isdir(path)


def listdir(path):
    """The names in folder `path`."""
    return _gfile().listdir(path) if is_remote(path) else os.listdir(path)


def size_and_mtime(path):
    """`(bytes, modification time in ns)` of file `path`."""
    if is_remote(path):
        stat = _gfile().stat(path)
        return stat.length, stat.mtime_nsec
    stat = os.stat(path)
    return stat.st_size, stat.st_mtime_ns


def makedirs(path):
    """Creates folder `path` and its parents if missing."""
    if is_remote(path):
        _gfile().makedirs(path)
    else:
        os.makedirs(path, exist_ok=True)


def matching(pattern):
    """The paths that match the glob `pattern`, unsorted."""
    # include_hidden: tf.io.gfile.glob's `*` matches dot files too.
    if is_remote(pattern):
        return _gfile().glob(pattern)
    return glob.glob(pattern, include_hidden=True)


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
        matches = sorted(matching(pattern))
        files.extend(matches)
        if not matches:
            unmatched.append(pattern)
    if unmatched:
        raise InputError(f"{flag}: no file matches {', '.join(unmatched)}")
    return files


def check_output_file(path, flag):
    """An output file's path must not be a folder, and its folder (or the
    nearest part of it that exists) must be a folder one may write into
    (checked before any work)."""
    if isdir(path):
        raise InputError(f"{flag}={path} is a folder; expected a file path")
    check_writable(os.path.dirname(path) or ".", path, flag)


def check_output_dir(path, flag):
    """An output folder's path must not be a file, and it (or the nearest
    part of it that exists) must be a folder one may write into (checked
    before any work)."""
    if exists(path) and not isdir(path):
        raise InputError(f"{flag}={path} is a file; expected a folder")
    check_writable(path, path, flag)


def check_writable(folder, path, flag):
    """InputError naming `flag`=`path` unless the nearest existing part of
    the local `folder` (where `path` is written) is a folder this process
    may create files in."""
    if is_remote(folder):
        return  # no cheap check there: the first write names the problem
    part = os.path.normpath(folder)
    while not os.path.exists(part):
        part = os.path.dirname(part) or "."
    if not os.path.isdir(part):
        raise InputError(f"{flag}={path}: {part} is a file; expected a folder")
    if not os.access(part, os.W_OK | os.X_OK):
        raise InputError(
            f"{flag}={path}: {part} is not writable; expected a folder you can write to"
        )


def _missing_folders(folder):
    """`folder` and its parents that do not exist, innermost first (local or remote)."""
    missing = []
    while folder and not exists(folder):
        missing.append(folder)
        parent = os.path.dirname(folder.rstrip("/"))
        if parent == folder:
            break
        folder = parent
    return missing


@contextlib.contextmanager
def folder_removed_on_error(folder):
    """Makes `folder` (and its missing parents); when the block raises,
    removes the ones it made that are empty then, so a failed run leaves no
    empty folders behind."""
    made = _missing_folders(folder)
    makedirs(folder)
    try:
        yield
    except BaseException:
        for path in made:
            if isdir(path) and not listdir(path):
                remove(path)
        raise


@contextlib.contextmanager
def new_entries_removed_on_error(folder, keep=lambda added: False):
    """When the block raises an Exception, removes what it added to the
    existing `folder`: files and folders that were not there before (what
    was there stays, changed or not), unless `keep(added names)` is true."""
    before = set(listdir(folder))
    try:
        yield
    except Exception:
        added = set(listdir(folder)) - before
        if not keep(added):
            for name in added:
                remove(os.path.join(folder, name))
        raise


def remove(path):
    """Removes file or folder `path` (and what it holds), if it is there."""
    if is_remote(path):
        gfile = _gfile()
        if gfile.isdir(path):
            gfile.rmtree(path)
        elif gfile.exists(path):
            gfile.remove(path)
    elif os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.remove(path)


def copy_file(source, target):
    """Copies file `source` to `target` (either may be remote), replacing it."""
    if is_remote(source) or is_remote(target):
        _gfile().copy(source, target, overwrite=True)
    else:
        shutil.copyfile(source, target)


def _rename(source, target):
    """Moves `source` onto `target`, replacing a file there."""
    if is_remote(source):
        _gfile().rename(source, target, overwrite=True)
    else:
        os.replace(source, target)


@contextlib.contextmanager
def atomic_output(path, suffixes=("",)):
    """Yields a temporary path beside `path` to write to; when the block ends
    without an error, `tmp + suffix` replaces `path + suffix` for each suffix in
    order (a file or a directory), otherwise the temporary files are removed.

    Readers therefore see the old output or the complete new one, never a
    partial one. `suffixes` serves outputs made of several files (a
    checkpoint's `.data-*` then `.index`, the index last). The folder of
    `path` is created if needed, and removed again if the block fails and
    leaves it empty.
    """
    tmp = f"{path.rstrip('/')}.tmp-{os.getpid()}"
    with folder_removed_on_error(os.path.dirname(tmp) or "."):
        try:
            yield tmp
            for suffix in suffixes:
                if isdir(tmp + suffix):
                    remove(path + suffix)
                _rename(tmp + suffix, path + suffix)
        finally:
            for suffix in suffixes:
                remove(tmp + suffix)


def write_text_atomically(path, text):
    """Writes `text` to `path` (local or remote) through `atomic_output`."""
    with atomic_output(path) as tmp:
        with open_file(tmp, "w") as f:
            f.write(text)
