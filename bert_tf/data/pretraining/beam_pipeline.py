"""create_pretraining_data as an Apache Beam pipeline (`--runner`, the beam extra).

The unit of work is the local path's: a block of documents, made into
instances by the same `blocks.BlockProcessor` with the same block index, so
the records are the local path's (as a multiset: Beam spreads them over the
shards in any order, without the local path's interleaving). The blocks
themselves depend on the whole corpus in order (a block ends with the
document that brings it to `--sentences_per_block` lines, and a document may
go on into the next file), so the pipeline finds them in three steps:

1. Scan: each input file, on its own, becomes its layout
   (`corpus.CorpusReader.layout`: byte ranges of its runs of non-blank lines)
   -- the one full read of the text besides step 3; UTF-8 errors stop here.
2. Plan: the layouts of all files, in order, become the blocks
   (`corpus.plan_blocks`), each a few byte ranges of the files, numbered as
   the local path numbers them. Only the layouts meet in one place.
3. Instances: each block is read back from its ranges and made into records
   on any worker; `WriteToTFRecord` writes them to `--num_output_shards`
   shards, to temporary files first, renamed at the end, so a failed run
   leaves no shard under its final name.

The summary is the local path's: the blocks' counts are combined, written
to a temporary file by the pipeline and written out by this process as
`writer.write_summary` does (its `seconds` are the whole pipeline's).
"""

import collections
import dataclasses
import functools
import json
import os
import time

from bert_tf import beam, files
from bert_tf.data.pretraining.blocks import BlockProcessor
from bert_tf.data.pretraining.corpus import CorpusReader, plan_blocks
from bert_tf.data.pretraining.summary import PretrainingSummary
from bert_tf.data.pretraining.writer import (
    no_text_error,
    validate_options,
    write_summary,
)
from bert_tf.errors import InputError
from bert_tf.options import Options, option

SHARD_NAME_TEMPLATE = "-SSSSS-of-NNNNN"


@dataclasses.dataclass(frozen=True)
class ShardOptions(Options):
    """The Beam pipeline's output: shards named after `--output_file`."""

    num_output_shards: int = option(
        1,
        "With --runner: the number of TFRecord files, named <--output_file>-00000-of-0000N.",
        at_least=1,
    )


def shard_paths(output_file, num_shards):
    """The shards' names: `<output_file>-00000-of-00004`, ..."""
    return [f"{output_file}-{k:05d}-of-{num_shards:05d}" for k in range(num_shards)]


def create_pretraining_data_with_beam(options, beam_options, num_output_shards):
    """Writes the records of `create_pretraining_data(options)` (the same
    multiset) to `num_output_shards` shards named after `options.output_files`
    (a single name) and the same summary JSON, running a Beam pipeline with
    `beam_options` (`bert_tf.beam.BeamOptions`). Returns the PretrainingSummary.

    Bad flags, missing input files and a bad vocab fail here before the
    pipeline starts; text that is not UTF-8 and a corpus without text fail
    the pipeline, with the local path's InputError.
    """
    validate_options(options)
    if len(options.output_files) != 1:
        raise InputError(
            f"--output_file={','.join(options.output_files)}: with --runner, expected one "
            "name, which the shards are named after"
        )
    if num_output_shards < 1:
        raise InputError(f"--num_output_shards={num_output_shards}: expected at least 1")
    paths = files.expand_input_patterns(options.input_patterns)
    _processor(options)  # checks the vocab and the segmenter before the pipeline starts
    apache_beam = beam.import_beam()
    counts_file = f"{options.summary_file}.counts.tmp-{os.getpid()}"
    start = time.monotonic()
    p = beam.pipeline(beam_options)
    scans = (
        p
        | "Files" >> apache_beam.Create(list(range(len(paths))))
        | "SpreadFiles" >> apache_beam.Reshuffle()
        | "Scan" >> apache_beam.Map(_scan, paths, options.skip_invalid_utf8)
    )
    results = (
        scans
        | "AllLayouts" >> apache_beam.combiners.ToList()
        | "Plan" >> apache_beam.FlatMap(_plan, paths, options.sentences_per_block)
        | "SpreadBlocks" >> apache_beam.Reshuffle()
        | "Instances"
        >> apache_beam.FlatMap(_instances, paths, options).with_outputs("summary", main="records")
    )
    results.records | "Write" >> apache_beam.io.WriteToTFRecord(
        options.output_files[0],
        num_shards=num_output_shards,
        shard_name_template=SHARD_NAME_TEMPLATE,
    )
    skipped = scans | "Skipped" >> apache_beam.Map(_skipped_summary)
    (
        (results.summary, skipped)
        | "AllSummaries" >> apache_beam.Flatten()
        | "Sum" >> apache_beam.CombineGlobally(_sum_summaries)
        | "WriteCounts" >> apache_beam.Map(_write_counts, counts_file)
    )
    try:
        beam.run_pipeline(p)
        summary = _read_counts(counts_file)
    finally:
        files.remove(counts_file)
    shards = shard_paths(options.output_files[0], num_output_shards)
    if not summary.instances:  # text, but not a token of it: the shards are empty
        for path in shards:
            files.remove(path)
        raise no_text_error(paths)
    summary.seconds = time.monotonic() - start
    write_summary(summary, options, shards)
    return summary


@functools.lru_cache(maxsize=1)
def _processor(options):
    """The BlockProcessor of this process (built once per worker), making
    bare `tf.train.Example` bytes: WriteToTFRecord frames them."""
    return BlockProcessor(options.tokenizer, options.instances, options.random_seed, frame=bytes)


def _scan(file, paths, skip_invalid_utf8):
    """Step 1: `(file, its layout, lines skipped)`."""
    with beam.worker_input_errors():
        reader = CorpusReader(paths, skip_invalid_utf8)
        layout = reader.layout(file)
    return file, layout, reader.skipped_lines


def _plan(scans, paths, sentences_per_block):
    """Step 2: `(block index, the block's FileRanges)` for every block."""
    layouts = [layout for _, layout, _ in sorted(scans, key=lambda scan: scan[0])]
    count = 0
    for count, ranges in enumerate(plan_blocks(layouts, sentences_per_block), start=1):
        yield count - 1, ranges
    if not count:
        with beam.worker_input_errors():
            raise no_text_error(paths)


def _instances(block, paths, options):
    """Step 3: the block's records, then its PretrainingSummary (tagged "summary")."""
    from apache_beam import pvalue

    index, ranges = block
    with beam.worker_input_errors():
        reader = CorpusReader(paths, options.skip_invalid_utf8)
        result = _processor(options)(index, list(reader.documents(ranges)))
    yield from result.records
    yield pvalue.TaggedOutput("summary", result.summary)


def _skipped_summary(scan):
    return PretrainingSummary(skipped_lines=scan[2])


def _sum_summaries(summaries):
    total = PretrainingSummary()
    for summary in summaries:
        total.add(summary)
    return total


def _write_counts(summary, path):
    counts = dataclasses.asdict(summary)
    counts["length_counts"] = sorted(summary.length_counts.items())
    with files.open_file(path, "w") as f:
        json.dump(counts, f)


def _read_counts(path):
    with files.open_file(path) as f:
        counts = json.load(f)
    length_counts = collections.Counter(dict(counts.pop("length_counts")))
    return PretrainingSummary(**counts, length_counts=length_counts)
