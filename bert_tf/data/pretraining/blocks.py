"""A block of documents -> serialized instances: the work of one worker process.

A block is a run of whole documents. It is tokenized and turned into instances
as the original turns its whole corpus (`create_training_instances`), with its
own `random.Random(block_seed(random_seed, block_index))`. Block 0's seed is
`random_seed` itself, so a corpus that fits in one block gives exactly the
original's instances; every block's output depends only on its documents, the
seed and its index, never on which process made it.
"""

import ctypes
import dataclasses
import logging
import multiprocessing
import os
import random
import signal
import sys

from bert_tf.data import tfrecord
from bert_tf.data.pretraining import instances as pretraining_instances
from bert_tf.data.pretraining.records import InstanceEncoder
from bert_tf.data.pretraining.summary import PretrainingSummary
from bert_tf.errors import InputError
from bert_tf.options import Options, option
from bert_tf.text import tokenization

WORD_SEGMENTERS = ("jieba",)


@dataclasses.dataclass(frozen=True)
class TokenizerOptions(Options):
    """How lines become tokens: the vocabulary, casing and an optional word
    segmenter (the original's flags, then the new one)."""

    vocab_file: str = option(help="The vocabulary file that the BERT model was trained on.")
    do_lower_case: bool = option(
        True,
        "Whether to lower case the input text. Should be True for uncased models and "
        "False for cased models.",
    )
    word_segmenter: str | None = option(
        None,
        "With --do_whole_word_mask: mask the pieces of each word of this segmenter "
        f"together (one of: {', '.join(WORD_SEGMENTERS)}; text "
        "without ## pieces, e.g. Chinese; needs the jieba extra).",
    )


@dataclasses.dataclass(frozen=True)
class BlockResult:
    """One block's instances as TFRecord-framed `tf.train.Example` bytes (in the
    block's shuffled order; see `BlockProcessor`'s `frame`) and its counts."""

    records: list
    summary: PretrainingSummary


def block_seed(random_seed, block_index):
    """The seed of block `block_index`: `random_seed` for block 0; adding
    `block_index * 2**64` gives the other blocks keys of their own."""
    return random_seed + (block_index << 64)


def load_word_segmenter(name):
    """A function line -> list of words, or None for `name=None`."""
    if name is None:
        return None
    if name != "jieba":
        raise InputError(f"--word_segmenter={name}: expected one of {', '.join(WORD_SEGMENTERS)}")
    try:
        import jieba  # An optional extra: bert_tf[jieba].
    except ImportError:
        raise InputError(
            "--word_segmenter=jieba needs the jieba package: pip install 'bert_tf[jieba]'"
        ) from None
    jieba.setLogLevel(logging.WARNING)
    return jieba.lcut


class SentenceTokenizer:
    """A line of text -> tokens (`pretraining_instances.pack_token`).

    Without a segmenter, a line is tokenized by `FullTokenizer` and `##` pieces
    continue the word before them; the packed tokens of each word are
    remembered (`tokenization.WordCache`). With a segmenter, each word of the
    segmenter is tokenized on its own and all its pieces after the first
    continue it.
    """

    def __init__(self, options):
        self.tokenizer = tokenization.FullTokenizer(options.vocab_file, options.do_lower_case)
        self._segment = load_word_segmenter(options.word_segmenter)
        vocab = self.tokenizer.vocab
        if tokenization.MASK_TOKEN not in vocab:
            raise InputError(f"vocab file {options.vocab_file} lacks {tokenization.MASK_TOKEN}")
        self.special = pretraining_instances.SpecialTokens.from_vocab(
            vocab, tokenization.CLS_TOKEN, tokenization.SEP_TOKEN, tokenization.MASK_TOKEN
        )
        self._packed = tokenization.WordCache(self._pack_word)

    def _pack_word(self, raw_word):
        vocab = self.tokenizer.vocab
        return tuple(
            pretraining_instances.pack_token(vocab[piece], piece.startswith("##"))
            for piece in self.tokenizer.word_pieces(raw_word)
        )

    def __call__(self, line):
        if self._segment is None:
            packed = self._packed
            return [
                token
                for word in self.tokenizer.basic_tokenizer.raw_words(line)
                for token in packed[word]
            ]
        vocab = self.tokenizer.vocab
        pack = pretraining_instances.pack_token
        tokens = []
        for word in self._segment(line):
            pieces = self.tokenizer.tokenize(word)
            tokens.extend(pack(vocab[piece], k > 0) for k, piece in enumerate(pieces))
        return tokens


class BlockProcessor:
    """Turns `(block_index, documents as lists of lines)` into a BlockResult.

    `frame` wraps each serialized `tf.train.Example`: TFRecord framing by
    default; pass `bytes` for the bare Examples (a writer that frames them).
    """

    def __init__(self, tokenizer_options, instance_options, random_seed, frame=tfrecord.frame):
        self.tokenize = SentenceTokenizer(tokenizer_options)
        self.instance_options = instance_options
        self.random_seed = random_seed
        self.frame = frame
        self.encode = InstanceEncoder(
            instance_options.max_seq_length, instance_options.max_predictions_per_seq
        )

    def __call__(self, block_index, raw_documents):
        options = self.instance_options
        summary = PretrainingSummary(blocks=1)
        documents = []
        for raw_document in raw_documents:
            document = [tokens for tokens in map(self.tokenize, raw_document) if tokens]
            summary.count_document(document, options.max_seq_length - 3)
            documents.append(document)

        def serialize(instance):
            summary.count_instance(instance)
            return self.frame(self.encode(instance))

        rng = random.Random(block_seed(self.random_seed, block_index))
        records = pretraining_instances.create_training_instances(
            documents, options, self.tokenize.special, rng, serialize
        )
        return BlockResult(records, summary)


_worker_processor = None


def init_worker(tokenizer_options, instance_options, random_seed):
    """Pool initializer: builds this process's BlockProcessor. The worker
    ignores SIGINT (Ctrl-C reaches the whole process group; the main process
    handles it) and ends with the main process."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _end_with_parent()
    global _worker_processor
    _worker_processor = BlockProcessor(tokenizer_options, instance_options, random_seed)


def _end_with_parent():
    """Has Linux send this process SIGTERM when its parent ends, even by SIGKILL."""
    if not sys.platform.startswith("linux"):
        return
    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)
    parent = multiprocessing.parent_process()
    if parent is not None and os.getppid() != parent.pid:  # it ended before prctl
        os._exit(1)


def process_block_in_worker(block_index, raw_documents):
    """Pool task: one block with the BlockProcessor of `init_worker`."""
    return _worker_processor(block_index, raw_documents)
