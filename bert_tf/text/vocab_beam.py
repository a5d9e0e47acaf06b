"""build_vocab as an Apache Beam pipeline (`--runner`, the beam extra).

Each input file's words are counted on a worker by `vocab.count_words`; the
counts are summed per word by a Beam combine; one worker then learns the
vocabulary with `vocab.learn_vocab` and writes it, as the local path does.

The learner sees the words in the order the local path's Counter holds them
(first occurrence in the corpus: each word keeps the file and place where it
first occurs), so the vocabulary is the local path's even where the learner
breaks ties by that order.
"""

from bert_tf import beam
from bert_tf.files import check_output_file, expand_input_patterns, open_file
from bert_tf.text import vocab


def build_vocab_with_beam(options, beam_options):
    """`vocab.build_vocab(options)` on a Beam pipeline run with `beam_options`
    (`bert_tf.beam.BeamOptions`): the same vocabulary file. Returns its tokens."""
    o = options
    check_output_file(o.output_file, "--output_file")
    paths = expand_input_patterns(o.input_file)
    vocab.check_vocab_options(o.vocab_size, o.reserved_tokens, o.max_unique_chars)
    apache_beam = beam.import_beam()
    p = beam.pipeline(beam_options)
    (
        p
        | "Files" >> apache_beam.Create(list(range(len(paths))))
        | "SpreadFiles" >> apache_beam.Reshuffle()
        | "Count" >> apache_beam.FlatMap(_count_file, paths, o)
        | "SumPerWord" >> apache_beam.CombinePerKey(_sum_counts)
        | "AllWords" >> apache_beam.combiners.ToList()
        | "Learn" >> apache_beam.Map(_learn_and_write, o)
    )
    beam.run_pipeline(p)
    with open_file(o.output_file) as f:
        return f.read().splitlines()


def _count_file(file, paths, options):
    """`(word, (count, (file, k)))` for the k-th distinct word of file number `file`."""
    with beam.worker_input_errors():
        counts = vocab.count_words([paths[file]], options.do_lower_case, options.skip_invalid_utf8)
    for k, (word, count) in enumerate(counts.items()):
        yield word, (count, (file, k))


def _sum_counts(values):
    """`(count, first place)` pairs -> their total count and the first place."""
    total, first = 0, None
    for count, place in values:
        total += count
        first = place if first is None else min(first, place)
    return total, first


def _learn_and_write(words, options):
    """Learns from `(word, (count, first place))` in corpus order; writes the vocab."""
    in_corpus_order = sorted(words, key=lambda item: item[1][1])
    with beam.worker_input_errors():
        tokens = vocab.learn_vocab(
            {word: count for word, (count, _) in in_corpus_order},
            options.vocab_size,
            options.reserved_tokens,
            options.max_unique_chars,
        )
        vocab.write_vocab(tokens, options.output_file)
