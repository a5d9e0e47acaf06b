"""The corpus: input globs, documents streamed from the files, and blocks of documents.

Input format (the original's): one sentence per line, a blank line between
documents. As in the original, a document does not end at the end of a file.
"""

import tensorflow as tf

from bert_tf.errors import InputError


def expand_input_patterns(patterns):
    """The files matching each glob (sorted), in the order of `patterns`.

    Raises InputError naming every pattern that matches no file.
    """
    files, unmatched = [], []
    for pattern in patterns:
        matches = sorted(tf.io.gfile.glob(pattern))
        files.extend(matches)
        if not matches:
            unmatched.append(pattern)
    if unmatched:
        raise InputError(f"--input_file: no file matches {', '.join(unmatched)}")
    return files


class CorpusReader:
    """Streams documents (lists of stripped, non-blank lines) from text files.

    A line that is not UTF-8 raises InputError naming the file and line, or
    with `skip_invalid_utf8` is skipped and counted in `skipped_lines`.
    `documents_read` counts the documents yielded so far.
    """

    def __init__(self, files, skip_invalid_utf8=False):
        self.files = files
        self.skip_invalid_utf8 = skip_invalid_utf8
        self.skipped_lines = 0
        self.documents_read = 0

    def documents(self):
        """Yields each document as a list of lines."""
        document = []
        for path in self.files:
            for line in self._lines(path):
                if line:
                    document.append(line)
                elif document:
                    yield self._count(document)
                    document = []
        if document:
            yield self._count(document)

    def blocks(self, sentences_per_block):
        """Yields lists of whole documents; a block ends with the document that
        brings it to at least `sentences_per_block` lines."""
        block, lines = [], 0
        for document in self.documents():
            block.append(document)
            lines += len(document)
            if lines >= sentences_per_block:
                yield block
                block, lines = [], 0
        if block:
            yield block

    def _count(self, document):
        self.documents_read += 1
        return document

    def _lines(self, path):
        with tf.io.gfile.GFile(path, "rb") as f:
            for line_number, raw in enumerate(f, start=1):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    if not self.skip_invalid_utf8:
                        raise InputError(
                            f"{path}:{line_number}: not valid UTF-8 (byte {e.start}); "
                            "pass --skip_invalid_utf8 to skip such lines") from None
                    self.skipped_lines += 1
                    continue
                yield line.strip()
