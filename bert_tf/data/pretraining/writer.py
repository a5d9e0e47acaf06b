"""create_pretraining_data: a text corpus -> masked-LM / next-sentence TFRecords.

Streaming: documents are read in blocks of whole documents (about
`sentences_per_block` lines each); each block is tokenized and turned into
instances on its own (`pretraining_blocks`) by `num_workers` processes: this
one and `num_workers - 1` spawned ones. The instances of `interleave_blocks`
consecutive blocks are merged in random order and written round-robin over the
output files, as the original spreads its instances.

Memory is bounded by blocks, not by the corpus: this process holds at most
`interleave_blocks + 2 * num_workers` blocks of serialized instances (the
merge window and the results in flight) and each worker one block of tokens
and instances. A block's instances take about 11 * dupe_factor bytes per token
of its text at max_seq_length 128 (about 20 MB for 10,000 sentences of 17
tokens). A single document is never split, so one without blank lines in it is
held whole, as the original holds it.

The output is the same for any `num_workers`, and a corpus of one block gives
exactly the original tool's instances.

Worker processes import neither TensorFlow nor Keras (records are encoded and
framed by `records` and `tfrecord`), ignore SIGINT (the main process handles
it), and end when the main process ends, however it ends.

Output files are written to temporary files and renamed at the end; the summary
goes beside the first output file, named by `summary_path`
(`data/train.tfrecord-0` -> `data/train.summary.json`), so that no glob of the
outputs (`data/train.tfrecord-*`, `data/*.tfrecord*`) takes it for records.
"""

import collections
import concurrent.futures
import contextlib
import dataclasses
import itertools
import json
import multiprocessing
import os
import random
import re
import sys
import time

from absl import logging

from bert_tf.compat import kill_pool_workers
from bert_tf.data import EXAMPLES_VERBOSITY, tfrecord
from bert_tf.data.pretraining import blocks as pretraining_blocks
from bert_tf.data.pretraining.corpus import CorpusReader
from bert_tf.data.pretraining.instances import InstanceOptions, randint
from bert_tf.data.pretraining.summary import PretrainingSummary
from bert_tf.errors import InputError
from bert_tf.files import (
    atomic_output,
    check_output_file,
    expand_input_patterns,
    write_text_atomically,
)
from bert_tf.options import Options, group, option


@dataclasses.dataclass(frozen=True, kw_only=True)
class PretrainingDataOptions(Options):
    """The flags of create_pretraining_data.py (the original's, then the new ones)."""

    input_patterns: tuple = option(
        help="Input raw text file (or comma-separated list of files or globs).", flag="input_file"
    )
    output_files: tuple = option(
        help="Output TF example file (or comma-separated list of files).", flag="output_file"
    )
    tokenizer: pretraining_blocks.TokenizerOptions = group(pretraining_blocks.TokenizerOptions)
    instances: InstanceOptions = group(InstanceOptions)
    random_seed: int = option(12345, "Random seed for data generation.")
    # Beyond the original.
    num_workers: int = option(
        1,
        "Processes that tokenize and make instances: this one and num_workers - 1 spawned "
        "ones; the output does not depend on it.",
        at_least=1,
    )
    sentences_per_block: int = option(
        10000,
        "Documents are processed in blocks, each ending with the document that brings "
        "it to this many lines; random next sentences come from the same block. A "
        "corpus of one block gives exactly the original's output.",
        at_least=1,
    )
    interleave_blocks: int = option(
        4, "The instances of this many consecutive blocks are merged at random.", at_least=1
    )
    skip_invalid_utf8: bool = option(
        False, "Skip (and count) lines that are not UTF-8 instead of stopping."
    )
    show_progress: bool = option(
        True, "Show documents, instances and rate on stderr while running."
    )

    def __post_init__(self):
        super().__post_init__()
        # "a.txt,b.txt," names two files, as it always has.
        for name in ("input_patterns", "output_files"):
            object.__setattr__(self, name, tuple(path for path in getattr(self, name) if path))

    @property
    def summary_file(self):
        return summary_path(self.output_files[0])


def summary_path(output_file):
    """Where the summary of a run whose first output is `output_file` goes: its
    name without the `.tfrecord...` / `.tf_record...` part and a trailing shard
    number, plus `.summary.json` (`train.tfrecord-0`, `train-00000-of-00004` ->
    `train.summary.json`)."""
    folder, name = os.path.split(output_file)
    name = re.sub(r"\.tf_?records?.*$", "", name, flags=re.IGNORECASE)
    name = re.sub(r"[-_.]\d+(-of-\d+)?$", "", name) or "pretraining_data"
    return os.path.join(folder, name + ".summary.json")


def validate_options(options):
    """Raises InputError, naming the flag, for a value the algorithm cannot use."""
    o, i = options, options.instances
    if not o.input_patterns:
        raise InputError("--input_file is empty: expected comma-separated files or globs")
    if not o.output_files:
        raise InputError("--output_file is empty: expected comma-separated files")
    duplicates = sorted(p for p, n in collections.Counter(o.output_files).items() if n > 1)
    if duplicates:
        raise InputError(f"--output_file names {', '.join(duplicates)} more than once")
    for path in o.output_files:
        check_output_file(path, "--output_file")
    if i.max_predictions_per_seq > i.max_seq_length:
        raise InputError(
            f"--max_predictions_per_seq={i.max_predictions_per_seq}: expected "
            f"1 to --max_seq_length={i.max_seq_length}"
        )
    if o.tokenizer.word_segmenter is not None and not i.do_whole_word_mask:
        raise InputError(
            f"--word_segmenter={o.tokenizer.word_segmenter} only affects masking: "
            "pass --do_whole_word_mask too"
        )


def create_pretraining_data(options):
    """Writes the TFRecords and the summary JSON; returns the PretrainingSummary.

    Fails before any work for bad flags, missing input files, a bad vocab or
    an output path that cannot be written, and at the end (writing nothing)
    for a corpus without a single non-empty line. With `num_workers > 1` the
    workers are spawned processes, which re-import the main module: call it
    under `if __name__ == "__main__":`.
    """
    validate_options(options)
    files = expand_input_patterns(options.input_patterns)
    # Built here even for worker processes: it checks the vocab and the segmenter first.
    processor = pretraining_blocks.BlockProcessor(
        options.tokenizer, options.instances, options.random_seed
    )
    start = time.monotonic()
    summary = PretrainingSummary()
    reader = CorpusReader(files, options.skip_invalid_utf8)
    interleaver = BlockInterleaver(
        options.interleave_blocks, random.Random(f"interleave:{options.random_seed}")
    )
    blocks = reader.blocks(options.sentences_per_block)
    log_examples = _ExampleLog(processor.tokenize.tokenizer)
    with (
        _RecordFiles(options.output_files) as output,
        _Progress(options.show_progress) as progress,
        contextlib.closing(_block_results(blocks, processor, options)) as results,
    ):
        for result in results:
            summary.add(result.summary)
            output.write(log_examples(interleaver.add(result.records)))
            progress.update(reader.documents_read, summary.instances)
        output.write(log_examples(interleaver.drain()))
        if not summary.instances:
            raise no_text_error(files)
    summary.skipped_lines = reader.skipped_lines
    summary.seconds = time.monotonic() - start
    write_summary(summary, options)
    return summary


def no_text_error(files):
    """The InputError of a corpus without a single instance."""
    return InputError(
        f"--input_file: no text in {', '.join(files)} "
        "(expected one sentence per line, blank lines between documents)"
    )


def write_summary(summary, options, output_files=None):
    """Writes the summary JSON (`options.summary_file`) and logs it; the log
    names `output_files` (default: `options.output_files`)."""
    write_text_atomically(
        options.summary_file,
        json.dumps(summary.to_json_dict(options.instances.max_seq_length), indent=2),
    )
    _log_summary(summary, options, output_files or options.output_files)


class BlockInterleaver:
    """Merges the records of consecutive blocks at random, `width` blocks at a time.

    Each block keeps its own order; the next record comes from a block of the
    window with probability proportional to what the block has left, i.e. a
    uniformly random merge. A single block comes out unchanged.
    """

    def __init__(self, width, rng):
        self._width = width
        self._rng = rng
        self._blocks = []
        self._left = 0

    def add(self, records):
        """Adds a block; yields records while the window is full."""
        if records:
            self._blocks.append(collections.deque(records))
            self._left += len(records)
        return self._merge(self._width)

    def drain(self):
        """Yields all remaining records."""
        return self._merge(1)

    def _merge(self, width):
        """Yields records while at least `width` blocks have some left."""
        blocks, getrandbits = self._blocks, self._rng.getrandbits
        while len(blocks) >= width:
            r = randint(getrandbits, 0, self._left - 1)  # rng.randrange(self._left)
            for k, block in enumerate(blocks):  # noqa: B007  (k: the block taken, below)
                if r < len(block):
                    break
                r -= len(block)
            record = block.popleft()
            if not block:
                del blocks[k]
            self._left -= 1
            yield record


def _block_results(blocks, processor, options):
    """BlockResults in block order, made by `processor` here and by
    `num_workers - 1` spawned processes.

    A block goes to the workers unless they already have one each running and
    one more queued; then this process makes it. At most `2 * num_workers`
    blocks are in flight or waiting for an earlier one.
    """
    if options.num_workers == 1:
        for index, block in enumerate(blocks):
            yield processor(index, block)
        return
    workers = options.num_workers - 1
    pool = concurrent.futures.ProcessPoolExecutor(
        workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=pretraining_blocks.init_worker,
        initargs=(options.tokenizer, options.instances, options.random_seed),
    )
    pending = collections.deque()  # Futures of the workers' blocks and results made here

    def busy(item):
        return isinstance(item, concurrent.futures.Future) and not item.done()

    # The pool's threads here move blocks and results through pipes in 64 KB
    # pieces, each waiting for the GIL that this thread's own blocks hold:
    # let them have it sooner than the default 5 ms.
    switch_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    try:
        for index, block in enumerate(blocks):
            if sum(map(busy, pending)) <= workers:
                pending.append(
                    pool.submit(pretraining_blocks.process_block_in_worker, index, block)
                )
            else:
                pending.append(processor(index, block))
            while pending and (len(pending) > 2 * options.num_workers or not busy(pending[0])):
                yield _result(pending.popleft())
        while pending:
            yield _result(pending.popleft())
    except BaseException:  # an error, an interrupt, or the caller stopped early
        kill_pool_workers(pool)
        raise
    finally:
        sys.setswitchinterval(switch_interval)
        pool.shutdown(cancel_futures=True)


def _result(item):
    """The BlockResult of an item of `_block_results`'s queue."""
    return item.result() if isinstance(item, concurrent.futures.Future) else item


class _ExampleLog:
    """With --verbosity=1 (or more), logs the first `count` records written as
    the original tool does at its default: an `*** Example ***` line, the
    tokens (masked ones as `[MASK]` or their replacement) and each feature's
    values."""

    # The original's order of the features.
    FEATURES = (
        "input_ids",
        "input_mask",
        "segment_ids",
        "masked_lm_positions",
        "masked_lm_ids",
        "masked_lm_weights",
        "next_sentence_labels",
    )

    def __init__(self, tokenizer, count=20):
        self._tokenizer = tokenizer
        self._left = count if logging.vlog_is_on(EXAMPLES_VERBOSITY) else 0

    def __call__(self, framed_records):
        """Yields `framed_records`, logging the first ones."""
        records = iter(framed_records)
        while self._left:
            record = next(records, None)
            if record is None:
                return
            self._log(tfrecord.decode_example(tfrecord.unframe(record)))
            self._left -= 1
            yield record
        yield from records

    def _log(self, features):
        length = sum(features["input_mask"])
        tokens = self._tokenizer.convert_ids_to_tokens(features["input_ids"][:length])
        lines = [f"tokens: {' '.join(tokens)}"]
        lines += [f"{name}: {' '.join(map(str, features[name]))}" for name in self.FEATURES]
        logging.vlog(EXAMPLES_VERBOSITY, "*** Example ***\n%s", "\n".join(lines))


class _RecordFiles:
    """TFRecord files (`tfrecord.TFRecordFile`) on temporary files, used
    round-robin; each replaces its path on success and is removed on error
    (`files.atomic_output`)."""

    def __init__(self, paths):
        self._paths = paths
        self._writers = []
        self._count = 0
        self._stack = None

    def __enter__(self):
        with contextlib.ExitStack() as stack:
            for path in self._paths:
                try:
                    writer = tfrecord.TFRecordFile(stack.enter_context(atomic_output(path)))
                except OSError as e:
                    raise InputError(
                        f"--output_file: cannot write {path}: {e.strerror or e}"
                    ) from None
                stack.callback(writer.close)  # closed before its file is renamed
                self._writers.append(writer)
            self._stack = stack.pop_all()
        return self

    def write(self, framed_records):
        """Writes the records (an iterable), each to the file after the previous
        record's, a few thousand at a time."""
        n = len(self._writers)
        records = iter(framed_records)
        while batch := list(itertools.islice(records, 4096)):
            for k, writer in enumerate(self._writers):
                chunk = batch[(k - self._count) % n :: n]
                if chunk:
                    writer.write_framed(b"".join(chunk))
            self._count += len(batch)

    def __exit__(self, exc_type, exc, tb):
        return self._stack.__exit__(exc_type, exc, tb)


class _Progress:
    """Documents, instances and rate on stderr: one line redrawn twice a second
    on a terminal, otherwise a line every 30 seconds. A context manager that
    ends the line on exit."""

    def __init__(self, enabled):
        self._enabled = enabled
        self._stream = sys.stderr
        self._tty = enabled and sys.stderr.isatty()
        self._start = self._last = time.monotonic()
        self._drawn = False

    def update(self, documents, instances):
        now = time.monotonic()
        if not self._enabled or now - self._last < (0.5 if self._tty else 30.0):
            return
        self._last = now
        rate = instances / max(now - self._start, 1e-9)
        line = f"{documents:,} documents, {instances:,} instances, {rate:,.0f} instances/s"
        self._stream.write(f"\r{line}" if self._tty else f"{line}\n")
        self._stream.flush()
        self._drawn = True

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._drawn and self._tty:
            self._stream.write("\n")


def _log_summary(summary, options, output_files):
    logging.info(
        "Wrote %d instances to %s in %.1f s (%.0f instances/s)",
        summary.instances,
        ", ".join(output_files),
        summary.seconds,
        summary.instances / max(summary.seconds, 1e-9),
    )
    logging.info(
        "Mean masked positions %.2f, random next %.1f%%, lengths %s",
        summary.mean_masked_positions,
        100 * summary.random_next_share,
        summary.length_histogram(options.instances.max_seq_length),
    )
    if summary.long_sentences:
        logging.info(
            "%d sentences longer than %d tokens were truncated",
            summary.long_sentences,
            options.instances.max_seq_length - 3,
        )
    if summary.skipped_lines:
        logging.warning("Skipped %d lines that are not UTF-8", summary.skipped_lines)
    if summary.single_sentence_documents * 2 > summary.documents:
        logging.warning(
            "%d of %d documents have a single sentence, whose next sentence is "
            "always random: is the input one sentence per line with blank lines "
            "only between documents?",
            summary.single_sentence_documents,
            summary.documents,
        )
    logging.info("Summary: %s", options.summary_file)
