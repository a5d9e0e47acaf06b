"""The corpus: documents streamed from the input files, and blocks of documents.

Input format (the original's): one sentence per line, a blank line between
documents. As in the original, a document does not end at the end of a file.
"""

from bert_tf.errors import InputError
from bert_tf.tokenization import iter_utf8_lines


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
        try:
            for _, line in iter_utf8_lines(path, self.skip_invalid_utf8, on_skip=self._skipped):
                yield line.strip()
        except InputError as e:
            raise InputError(f"{e}; pass --skip_invalid_utf8 to skip such lines") from None

    def _skipped(self, message):
        del message  # counted, and reported in the summary
        self.skipped_lines += 1
