"""The corpus: documents streamed from the input files, and blocks of documents.

Input format (the original's): one sentence per line, a blank line between
documents. As in the original, a document does not end at the end of a file.

The blocks can also be found without reading the text twice in one place
(the Beam pipeline, `beam_pipeline.py`): `CorpusReader.layout` describes a
file by its runs of non-blank lines (byte ranges), `plan_blocks` splits the
layouts of all files into the same blocks as `CorpusReader.blocks`, each as
byte ranges of the files, and `CorpusReader.documents(ranges)` reads a block
back.
"""

import dataclasses

from bert_tf.errors import InputError
from bert_tf.text.tokenization import iter_utf8_lines_at


@dataclasses.dataclass(frozen=True)
class FileRange:
    """Bytes `[start, end)` of input file number `file` (`end=None`: to its end);
    `start` begins line number `first_line`."""

    file: int
    start: int = 0
    end: int | None = None
    first_line: int = 1


@dataclasses.dataclass(frozen=True)
class Run:
    """Consecutive non-blank lines of a file (lines that are not UTF-8 and are
    skipped may be among them): `lines` of them, in `range`."""

    range: FileRange
    lines: int


def split_documents(items):
    """Groups a stream into documents: lists of consecutive truthy items
    (lines, `Run`s); falsy ones (blank lines, None) end a document."""
    document = []
    for item in items:
        if item:
            document.append(item)
        elif document:
            yield document
            document = []
    if document:
        yield document


def group_blocks(documents, sentences_per_block, lines=len):
    """Yields lists of whole documents; a block ends with the document that
    brings it to at least `sentences_per_block` lines (`lines(document)`)."""
    block, count = [], 0
    for document in documents:
        block.append(document)
        count += lines(document)
        if count >= sentences_per_block:
            yield block
            block, count = [], 0
    if block:
        yield block


def plan_blocks(layouts, sentences_per_block):
    """The blocks of `CorpusReader.blocks`, from the layouts of all the files
    in order: yields each block as a list of `FileRange`s (one per file and
    document it touches, ranges of one file merged) with None where a document
    ends between two ranges, to read with `CorpusReader.documents`."""
    documents = split_documents(item for layout in layouts for item in layout)
    for block in group_blocks(documents, sentences_per_block, _lines_of_runs):
        ranges = []
        for document in block:
            for k, run in enumerate(document):
                last = ranges[-1] if ranges else None
                if last is not None and last.file == run.range.file:
                    # The blank lines between two documents of a file are in the range.
                    ranges[-1] = dataclasses.replace(last, end=run.range.end)
                else:
                    if last is not None and k == 0:
                        ranges.append(None)
                    ranges.append(run.range)
        yield ranges


def _lines_of_runs(document):
    return sum(run.lines for run in document)


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

    def documents(self, ranges=None):
        """Yields each document as a list of lines: of all the files, or of the
        `FileRange`s `ranges` read one after the other (None: a document ends)."""
        if ranges is None:
            ranges = [FileRange(k) for k in range(len(self.files))]
        for document in split_documents(self._texts(ranges)):
            self.documents_read += 1
            yield document

    def blocks(self, sentences_per_block):
        """Yields lists of whole documents; a block ends with the document that
        brings it to at least `sentences_per_block` lines."""
        return group_blocks(self.documents(), sentences_per_block)

    def layout(self, file):
        """File number `file` as a list of its runs of non-blank lines (`Run`)
        with None for each run of blank lines between them, before the first
        and after the last; lines that are skipped (not UTF-8) are neither."""
        items, start = [], None
        for line_number, offset, text in self._lines(FileRange(file)):
            if text:
                if start is None:
                    start, first_line, lines = offset, line_number, 0
                lines += 1
            else:
                if start is not None:
                    items.append(Run(FileRange(file, start, offset, first_line), lines))
                    start = None
                if not items or items[-1] is not None:
                    items.append(None)
        if start is not None:
            items.append(Run(FileRange(file, start, None, first_line), lines))
        return items

    def _texts(self, ranges):
        for r in ranges:
            if r is None:
                yield ""  # a blank line: the document ends
            else:
                yield from (text for _, _, text in self._lines(r))

    def _lines(self, file_range):
        """`(line_number, offset, stripped text)` of the lines of a FileRange."""
        r = file_range
        path = self.files[r.file]
        try:
            for line_number, offset, line in iter_utf8_lines_at(
                path, self.skip_invalid_utf8, self._skipped, r.start, r.end, r.first_line
            ):
                yield line_number, offset, line.strip()
        except InputError as e:
            raise InputError(f"{e}; pass --skip_invalid_utf8 to skip such lines") from None

    def _skipped(self, message):
        del message  # counted, and reported in the summary
        self.skipped_lines += 1
