"""Masked-LM + next-sentence instances: the algorithm of google-research/bert's
`create_pretraining_data.py`.

Every random decision is the same call on the same `random.Random`, in the same
order, as in the original, so the same documents and the same generator state
give the same instances.

Only the representation differs: a token is the protobuf varint of its id
(`pack_token`), the bytes a record stores it as, so that an instance's ids are
joined rather than encoded. A piece that belongs to the word of the token
before it -- a `##` WordPiece, or a later piece of a word found by a segmenter
-- is a `ContinuingPiece` (bytes too), so the grouping that whole-word masking
needs stays attached to each token through pairing and truncation.
"""

import dataclasses

from bert_tf.data.tfrecord import varint
from bert_tf.options import Options, option


@dataclasses.dataclass(frozen=True)
class InstanceOptions(Options):
    """The original's flags that shape instances."""

    do_whole_word_mask: bool = option(
        False, "Whether to use whole word masking rather than per-WordPiece masking."
    )
    max_seq_length: int = option(
        128,
        "Maximum sequence length (at least 5: [CLS] A [SEP] B [SEP], each segment a token).",
        at_least=5,
    )
    max_predictions_per_seq: int = option(
        20, "Maximum number of masked LM predictions per sequence.", at_least=1
    )
    dupe_factor: int = option(
        10, "Number of times to duplicate the input data (with different masks).", at_least=1
    )
    masked_lm_prob: float = option(0.15, "Masked LM probability.", above=0, below=1)
    short_seq_prob: float = option(
        0.1,
        "Probability of creating sequences which are shorter than the maximum length.",
        at_least=0,
        at_most=1,
    )


@dataclasses.dataclass(frozen=True)
class SpecialTokens:
    """The tokens (`pack_token`) the algorithm needs from the vocabulary.

    `vocab` holds the vocabulary's tokens in file order (the original's
    `vocab_words = list(tokenizer.vocab.keys())`), the pool of random
    replacements.
    """

    cls: bytes
    sep: bytes
    mask: bytes
    vocab: tuple

    @classmethod
    def from_vocab(cls, vocab, cls_token, sep_token, mask_token):
        """From a token -> id dict."""
        return cls(
            pack_token(vocab[cls_token], False),
            pack_token(vocab[sep_token], False),
            pack_token(vocab[mask_token], False),
            tuple(pack_token(i, False) for i in vocab.values()),
        )


@dataclasses.dataclass(slots=True)
class TrainingInstance:
    """`[CLS] A [SEP] B [SEP]` after masking, as tokens (`pack_token`); no padding."""

    input_tokens: list
    segment_ids: bytes  # or a list of 0 / 1
    masked_lm_positions: list  # sorted
    masked_lm_tokens: list  # the tokens that were at masked_lm_positions before masking
    is_random_next: bool


class ContinuingPiece(bytes):
    """A token that continues the word of the token before it."""

    __slots__ = ()


def pack_token(token_id, continues_word):
    """The form of a token (see the module docstring)."""
    encoded = varint(token_id)
    return ContinuingPiece(encoded) if continues_word else encoded


def create_training_instances(documents, options, special, rng, convert=None):
    """All instances of `documents`, as the original's `create_training_instances`
    after reading: drops empty documents, shuffles the documents, makes
    `dupe_factor` passes over them and shuffles the instances.

    `documents`: lists of sentences, each a non-empty list of packed tokens.
    `convert` (e.g. serialization) is applied to each instance as soon as it is
    made, so that only its result is held until the final shuffle, whose random
    calls depend on the count alone.
    """
    documents = [document for document in documents if document]
    shuffle(documents, rng)
    maker = _InstanceMaker(documents, options, special, rng)
    instances = []
    for _ in range(options.dupe_factor):
        for document_index in range(len(documents)):
            made = maker.from_document(document_index)
            instances.extend(map(convert, made) if convert else made)
    shuffle(instances, rng)
    return instances


def shuffle(items, rng, keep=None):
    """`rng.shuffle(items)` for a `random.Random`, the same draws and result
    without its per-element method calls: Fisher-Yates from the end, index `i`
    swapped with `j` drawn by rejection from `getrandbits(bit length of i + 1)`;
    the indexes are walked in runs of the same bit length.

    With `keep`, only `items[:keep]` end up as `rng.shuffle` leaves them (the
    rest is left in no particular order), for the same draws: an index `i >=
    keep` is final once drawn and never read again, so it is copied from, not
    swapped."""
    getrandbits = rng.getrandbits
    top = len(items) - 1
    if keep is None:
        keep = len(items)
    while top > 0:
        bits = (top + 1).bit_length()
        low = (1 << (bits - 1)) - 1  # the smallest i with (i + 1).bit_length() == bits
        split = max(low, keep)
        for i in range(top, split - 1, -1):
            j = getrandbits(bits)
            while j > i:
                j = getrandbits(bits)
            items[j] = items[i]
        for i in range(min(top, split - 1), low - 1, -1):
            j = getrandbits(bits)
            while j > i:
                j = getrandbits(bits)
            items[i], items[j] = items[j], items[i]
        top = low - 1


def randint(getrandbits, low, high):
    """`rng.randint(low, high)` with `getrandbits = rng.getrandbits`: the same
    draws (`low` + a `getrandbits` rejection sample below the width) in one call."""
    width = high - low + 1
    if width <= 0:
        raise ValueError(f"empty range for randint({low}, {high})")
    bits = width.bit_length()
    r = getrandbits(bits)
    while r >= width:
        r = getrandbits(bits)
    return low + r


class _InstanceMaker:
    """The original's `create_instances_from_document` and
    `create_masked_lm_predictions` over one list of documents, with what they
    derive from the flags and the vocabulary computed once."""

    def __init__(self, documents, options, special, rng):
        self.documents = documents
        self.options = options
        self.rng = rng
        self.max_num_tokens = options.max_seq_length - 3  # [CLS], [SEP], [SEP]
        self.cls, self.sep, self.mask = special.cls, special.sep, special.mask
        self.replacements = special.vocab
        self.positions = list(range(options.max_seq_length))
        # Masked positions per instance length, as the original rounds them.
        self.num_to_predict = [
            min(options.max_predictions_per_seq, max(1, int(round(n * options.masked_lm_prob))))
            for n in range(options.max_seq_length + 1)
        ]

    def from_document(self, document_index):
        """The instances of one document (the original's
        `create_instances_from_document`).

        Sentences are gathered until they reach a target length (usually the
        maximum, a random shorter one with probability `short_seq_prob`); A is a
        random number of the leading sentences; B is the rest, or, always for a
        single sentence and otherwise half of the time, a run of sentences from
        a random other document (then the sentences not used go back).
        """
        all_documents = self.documents
        document = all_documents[document_index]
        random, getrandbits = self.rng.random, self.rng.getrandbits
        max_num_tokens = self.max_num_tokens
        target_seq_length = max_num_tokens
        if random() < self.options.short_seq_prob:
            target_seq_length = randint(getrandbits, 2, max_num_tokens)

        instances = []
        current_chunk = []
        current_length = 0
        i = 0
        while i < len(document):
            segment = document[i]
            current_chunk.append(segment)
            current_length += len(segment)
            if i == len(document) - 1 or current_length >= target_seq_length:
                a_end = 1
                if len(current_chunk) >= 2:
                    a_end = randint(getrandbits, 1, len(current_chunk) - 1)
                tokens_a = []
                for j in range(a_end):
                    tokens_a.extend(current_chunk[j])

                tokens_b = []
                is_random_next = len(current_chunk) == 1 or random() < 0.5
                if is_random_next:
                    target_b_length = target_seq_length - len(tokens_a)
                    # Up to 10 draws to avoid the current document, as the original.
                    for _ in range(10):
                        random_document_index = randint(getrandbits, 0, len(all_documents) - 1)
                        if random_document_index != document_index:
                            break
                    random_document = all_documents[random_document_index]
                    random_start = randint(getrandbits, 0, len(random_document) - 1)
                    for j in range(random_start, len(random_document)):
                        tokens_b.extend(random_document[j])
                        if len(tokens_b) >= target_b_length:
                            break
                    i -= len(current_chunk) - a_end  # put the unused sentences back
                else:
                    for j in range(a_end, len(current_chunk)):
                        tokens_b.extend(current_chunk[j])
                truncate_seq_pair(tokens_a, tokens_b, max_num_tokens, random)
                instances.append(self.masked(tokens_a, tokens_b, is_random_next))
                current_chunk = []
                current_length = 0
            i += 1
        return instances

    def masked(self, tokens_a, tokens_b, is_random_next):
        """`[CLS] A [SEP] B [SEP]` masked as the original's
        `create_masked_lm_predictions`, as a TrainingInstance.

        `num_to_predict[length]` positions are chosen in random order among all
        but [CLS] / [SEP] (with whole-word masking, a word's pieces as one
        candidate that is skipped if it would overshoot). Of the chosen, 80%
        become [MASK], 10% stay, 10% become a random vocabulary token.
        """
        tokens = [self.cls, *tokens_a, self.sep, *tokens_b, self.sep]
        num_a = len(tokens_a)
        num_to_predict = self.num_to_predict[len(tokens)]
        if self.options.do_whole_word_mask:
            masked_positions = self._whole_word_positions(tokens, num_to_predict)
        else:
            # [CLS] and [SEP] are only ever the ones put in here (text never
            # tokenizes to them). Each candidate is a single index: ints
            # shuffle the same as [i] lists, and only the first
            # `num_to_predict` are taken.
            positions = self.positions
            masked_positions = positions[1 : num_a + 1] + positions[num_a + 2 : len(tokens) - 1]
            shuffle(masked_positions, self.rng, keep=num_to_predict)
            del masked_positions[num_to_predict:]
        input_tokens = tokens.copy()
        random = self.rng.random
        mask = self.mask
        for index in masked_positions:
            if random() < 0.8:
                input_tokens[index] = mask
            elif random() >= 0.5:  # < 0.5 keeps the original token
                input_tokens[index] = self.replacements[
                    randint(self.rng.getrandbits, 0, len(self.replacements) - 1)
                ]
        masked_positions.sort()
        segment_ids = bytes(num_a + 2) + b"\x01" * (len(tokens) - num_a - 2)
        return TrainingInstance(
            input_tokens,
            segment_ids,
            masked_positions,
            list(map(tokens.__getitem__, masked_positions)),
            is_random_next,
        )

    def _whole_word_positions(self, tokens, num_to_predict):
        """The positions whole-word masking takes, in the order chosen: the
        candidates (a token continuing a word joins the candidate before it,
        even across a [SEP], as in the original) shuffled, then taken greedily."""
        special_tokens = (self.cls, self.sep)
        cand_indexes = []
        for i, token in enumerate(tokens):
            if token in special_tokens:
                continue
            if cand_indexes and type(token) is ContinuingPiece:
                cand_indexes[-1].append(i)
            else:
                cand_indexes.append([i])
        shuffle(cand_indexes, self.rng)
        # The original also skips candidates whose indexes are already
        # covered; the candidates are disjoint, so that never happens.
        masked_positions = []
        for index_set in cand_indexes:
            if len(masked_positions) >= num_to_predict:
                break
            if len(masked_positions) + len(index_set) <= num_to_predict:
                masked_positions.extend(index_set)
        return masked_positions


def truncate_seq_pair(tokens_a, tokens_b, max_num_tokens, random):
    """Removes tokens, in place, from the longer of the two until they fit,
    each time from the front or the back at random (`random` = `rng.random`)."""
    while len(tokens_a) + len(tokens_b) > max_num_tokens:
        trunc_tokens = tokens_a if len(tokens_a) > len(tokens_b) else tokens_b
        if random() < 0.5:
            del trunc_tokens[0]
        else:
            trunc_tokens.pop()
