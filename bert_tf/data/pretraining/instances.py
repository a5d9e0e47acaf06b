"""Masked-LM + next-sentence instances: the algorithm of google-research/bert's
`create_pretraining_data.py`.

Every random decision is the same call on the same `random.Random`, in the same
order, as in the original, so the same documents and the same generator state
give the same instances.

Only the representation differs: a token is an int, `token_id * 2 +
continues_word` (`pack_token`). `continues_word` marks a piece that belongs to
the word of the token before it -- a `##` WordPiece, or a later piece of a word
found by a segmenter -- so the grouping that whole-word masking needs stays
attached to each token through pairing and truncation.
"""

import dataclasses


@dataclasses.dataclass(frozen=True)
class InstanceOptions:
    """The original's flags that shape instances."""

    max_seq_length: int = 128
    max_predictions_per_seq: int = 20
    masked_lm_prob: float = 0.15
    short_seq_prob: float = 0.1
    dupe_factor: int = 10
    do_whole_word_mask: bool = False


@dataclasses.dataclass(frozen=True)
class SpecialTokens:
    """The ids the algorithm needs from the vocabulary.

    `vocab_ids` are the ids of the vocabulary's tokens in file order (the
    original's `vocab_words = list(tokenizer.vocab.keys())`), the pool of random
    replacements.
    """

    cls_id: int
    sep_id: int
    mask_id: int
    vocab_ids: tuple


@dataclasses.dataclass(frozen=True)
class TrainingInstance:
    """`[CLS] A [SEP] B [SEP]` after masking, as packed tokens (`pack_token`:
    the id is `token >> 1`); no padding."""

    input_tokens: list
    segment_ids: list
    masked_lm_positions: list  # sorted
    masked_lm_tokens: list  # the tokens that were at masked_lm_positions before masking
    is_random_next: bool


def pack_token(token_id, continues_word):
    """The int form of a token (see the module docstring)."""
    return token_id * 2 + (1 if continues_word else 0)


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
    instances = []
    for _ in range(options.dupe_factor):
        for document_index in range(len(documents)):
            made = create_instances_from_document(documents, document_index, options, special, rng)
            instances.extend(map(convert, made) if convert else made)
    shuffle(instances, rng)
    return instances


def shuffle(items, rng):
    """`rng.shuffle(items)` for a `random.Random`, the same draws and result
    without its per-element method calls: Fisher-Yates from the end, index `i`
    swapped with `j` drawn by rejection from `getrandbits(bit length of i + 1)`;
    the indexes are walked in runs of the same bit length."""
    getrandbits = rng.getrandbits
    top = len(items) - 1
    while top > 0:
        bits = (top + 1).bit_length()
        low = (1 << (bits - 1)) - 1  # the smallest i with (i + 1).bit_length() == bits
        for i in range(top, low - 1, -1):
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


def create_instances_from_document(all_documents, document_index, options, special, rng):
    """The instances of one document (the original's function of the same name).

    Sentences are gathered until they reach a target length (usually the
    maximum, a random shorter one with probability `short_seq_prob`); A is a
    random number of the leading sentences; B is the rest, or, always for a
    single sentence and otherwise half of the time, a run of sentences from a
    random other document (then the sentences not used go back).
    """
    document = all_documents[document_index]
    getrandbits = rng.getrandbits
    max_num_tokens = options.max_seq_length - 3  # [CLS], [SEP], [SEP]
    target_seq_length = max_num_tokens
    if rng.random() < options.short_seq_prob:
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
            is_random_next = len(current_chunk) == 1 or rng.random() < 0.5
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
            truncate_seq_pair(tokens_a, tokens_b, max_num_tokens, rng)

            cls, sep = pack_token(special.cls_id, False), pack_token(special.sep_id, False)
            tokens = [cls, *tokens_a, sep, *tokens_b, sep]
            segment_ids = [0] * (len(tokens_a) + 2) + [1] * (len(tokens_b) + 1)
            input_tokens, positions, labels = create_masked_lm_predictions(
                tokens, options, special, rng)
            instances.append(TrainingInstance(input_tokens, segment_ids, positions, labels,
                                              is_random_next))
            current_chunk = []
            current_length = 0
        i += 1
    return instances


def truncate_seq_pair(tokens_a, tokens_b, max_num_tokens, rng):
    """Removes tokens, in place, from the longer of the two until they fit,
    each time from the front or the back at random."""
    while len(tokens_a) + len(tokens_b) > max_num_tokens:
        trunc_tokens = tokens_a if len(tokens_a) > len(tokens_b) else tokens_b
        if rng.random() < 0.5:
            del trunc_tokens[0]
        else:
            trunc_tokens.pop()


def create_masked_lm_predictions(tokens, options, special, rng):
    """Masks packed `tokens`; returns `(input_tokens, masked_positions,
    masked_tokens)`, all tokens packed.

    `min(max_predictions_per_seq, max(1, round(len(tokens) * masked_lm_prob)))`
    positions are chosen in random order among all but [CLS] / [SEP] (with
    whole-word masking, a word's pieces as one candidate that is skipped if it
    would overshoot). Of the chosen, 80% become [MASK], 10% stay, 10% become a
    random vocabulary token.
    """
    # [CLS] and [SEP] are only ever the ones create_instances_from_document
    # puts in (text never tokenizes to them), packed as not continuing a word.
    special_tokens = (pack_token(special.cls_id, False), pack_token(special.sep_id, False))
    if options.do_whole_word_mask:
        cand_indexes = []
        for i, token in enumerate(tokens):
            if token in special_tokens:
                continue
            if cand_indexes and token & 1:
                cand_indexes[-1].append(i)
            else:
                cand_indexes.append([i])
    else:  # each candidate a single index: ints shuffle the same as [i] lists
        cand_indexes = _positions_except(tokens, special_tokens)
    shuffle(cand_indexes, rng)

    input_tokens = list(tokens)
    num_to_predict = min(options.max_predictions_per_seq,
                         max(1, int(round(len(tokens) * options.masked_lm_prob))))
    # Which candidates are taken depends on their sizes only, so they are chosen
    # first and masked after, in the same order (the same random calls). The
    # original also skips candidates whose indexes are already covered; the
    # candidates are disjoint, so that never happens and is left out.
    if options.do_whole_word_mask:
        masked_positions = []
        for index_set in cand_indexes:
            if len(masked_positions) >= num_to_predict:
                break
            if len(masked_positions) + len(index_set) <= num_to_predict:
                masked_positions.extend(index_set)
    else:
        masked_positions = cand_indexes[:num_to_predict]
    random = rng.random
    mask_token = pack_token(special.mask_id, False)
    for index in masked_positions:
        if random() < 0.8:
            input_tokens[index] = mask_token
        elif random() >= 0.5:  # < 0.5 keeps the original token
            replacement = randint(rng.getrandbits, 0, len(special.vocab_ids) - 1)
            input_tokens[index] = pack_token(special.vocab_ids[replacement], False)
    masked_positions.sort()
    return input_tokens, masked_positions, [tokens[p] for p in masked_positions]


def _positions_except(tokens, excluded):
    """The positions of `tokens` not in `excluded`, in order (found by
    `list.index`: the excluded tokens are few)."""
    skipped = []
    for excluded_token in excluded:
        start = 0
        try:
            while True:
                start = tokens.index(excluded_token, start) + 1
                skipped.append(start - 1)
        except ValueError:
            pass
    positions, start = [], 0
    for position in sorted(skipped):
        positions.extend(range(start, position))
        start = position + 1
    positions.extend(range(start, len(tokens)))
    return positions
