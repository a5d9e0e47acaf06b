"""A block of documents -> serialized instances: the work of one worker process.

A block is a run of whole documents. It is tokenized and turned into instances
as the original turns its whole corpus (`create_training_instances`), with its
own `random.Random(block_seed(random_seed, block_index))`. Block 0's seed is
`random_seed` itself, so a corpus that fits in one block gives exactly the
original's instances; every block's output depends only on its documents, the
seed and its index, never on which process made it.
"""

import dataclasses
import logging
import random

from bert_tf import tokenization
from bert_tf.data.pretraining import instances as pretraining_instances
from bert_tf.data.pretraining import schema as pretraining_schema
from bert_tf.data.pretraining.summary import PretrainingSummary
from bert_tf.errors import InputError

WORD_SEGMENTERS = ("jieba",)


@dataclasses.dataclass(frozen=True)
class TokenizerOptions:
    """How lines become tokens: the vocabulary, casing and an optional word segmenter."""

    vocab_file: str
    do_lower_case: bool = True
    word_segmenter: str | None = None  # one of WORD_SEGMENTERS


@dataclasses.dataclass(frozen=True)
class BlockResult:
    """One block's serialized instances (in the block's shuffled order) and its counts."""

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
        raise InputError("--word_segmenter=jieba needs the jieba package: "
                         "pip install 'bert_tf[jieba]'") from None
    jieba.setLogLevel(logging.WARNING)
    return jieba.lcut


class SentenceTokenizer:
    """A line of text -> packed tokens (`pretraining_instances.pack_token`).

    Without a segmenter, a line is tokenized by `FullTokenizer` and `##` pieces
    continue the word before them. With one, each word of the segmenter is
    tokenized on its own and all its pieces after the first continue it.
    """

    def __init__(self, options):
        self.tokenizer = tokenization.FullTokenizer(options.vocab_file, options.do_lower_case)
        self._segment = load_word_segmenter(options.word_segmenter)
        vocab = self.tokenizer.vocab
        if tokenization.MASK_TOKEN not in vocab:
            raise InputError(f"vocab file {options.vocab_file} lacks {tokenization.MASK_TOKEN}")
        self.special = pretraining_instances.SpecialTokens(
            cls_id=vocab[tokenization.CLS_TOKEN], sep_id=vocab[tokenization.SEP_TOKEN],
            mask_id=vocab[tokenization.MASK_TOKEN], vocab_ids=tuple(vocab.values()))

    def __call__(self, line):
        vocab = self.tokenizer.vocab
        pack = pretraining_instances.pack_token
        if self._segment is None:
            return [pack(vocab[piece], piece.startswith("##"))
                    for piece in self.tokenizer.tokenize(line)]
        tokens = []
        for word in self._segment(line):
            pieces = self.tokenizer.tokenize(word)
            tokens.extend(pack(vocab[piece], k > 0) for k, piece in enumerate(pieces))
        return tokens


class BlockProcessor:
    """Turns `(block_index, documents as lists of lines)` into a BlockResult."""

    def __init__(self, tokenizer_options, instance_options, random_seed):
        self.tokenize = SentenceTokenizer(tokenizer_options)
        self.instance_options = instance_options
        self.random_seed = random_seed

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
            return pretraining_schema.serialize_instance(
                instance, options.max_seq_length, options.max_predictions_per_seq)

        rng = random.Random(block_seed(self.random_seed, block_index))
        records = pretraining_instances.create_training_instances(
            documents, options, self.tokenize.special, rng, serialize)
        return BlockResult(records, summary)


_worker_processor = None


def init_worker(tokenizer_options, instance_options, random_seed):
    """Pool initializer: builds this process's BlockProcessor."""
    global _worker_processor
    _worker_processor = BlockProcessor(tokenizer_options, instance_options, random_seed)


def process_block_in_worker(block_index, raw_documents):
    """Pool task: one block with the BlockProcessor of `init_worker`."""
    return _worker_processor(block_index, raw_documents)
