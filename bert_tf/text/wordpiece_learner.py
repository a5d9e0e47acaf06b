"""tensorflow-text's bottom-up WordPiece learner, the same vocabulary in a fraction of the time.

`learn` returns what `wordpiece_tokenizer_learner_lib.learn` returns for the
same arguments (with its defaults for the parameters not taken here: upper
threshold 1e7, 4 iterations, 5e6 input words, tokens of at most 50
characters, 5% slack, joiner "##"). Its algorithm, for each frequency
threshold of a binary search:

  iteration 0: every substring of every word is counted, then each count is
    reduced by the counts of the longer substrings that extend it from the
    same start. What is left of a token's count is the number of times it
    is a whole suffix word[s:] (with the joiner when s > 0).
  iterations 1-3: each word is split greedily (longest token first) with
    the previous iteration's tokens, and the same counting is done from the
    split points only: a token's count is then the number of times it is
    the suffix word[s:] at a split point s. Every word splits (every
    character is a token), so start 0 always counts the whole word.
  the tokens counted at least `threshold` times, plus every character alone
    and with the joiner, make the next iteration's tokens.

So this module counts those suffixes directly instead of every substring,
does iteration 0 once for all thresholds, and splits words with integer
token ids over candidate lists built once: the only strings that can ever be
tokens are the words, their joined suffixes and the characters.

One quirk is kept: a word that itself starts with the joiner ("##x") and a
joined suffix ("##" + "x") are the same string; as in tensorflow-text, the
joined suffix's count wins when both reach the threshold.
"""

import collections

import numpy as np

JOINER = "##"
UPPER_THRESH = 10**7
NUM_ITERATIONS = 4
MAX_INPUT_TOKENS = 5 * 10**6
MAX_TOKEN_LENGTH = 50
SLACK_RATIO = 0.05


def learn(word_counts, vocab_size, reserved_tokens, max_unique_chars, lower_thresh=1):
    """The vocabulary tensorflow-text's `learn(word_counts, vocab_size,
    reserved_tokens, lower_thresh=lower_thresh, max_unique_chars=...)` returns.

    Args:
      word_counts: dict word -> count (counts >= 0), in the order that breaks
        ties when more than 5e6 words qualify.
      vocab_size: the target size; the search stops within 5% under it.
      reserved_tokens: list of tokens placed first.
      max_unique_chars: how many of the most frequent characters to keep.
      lower_thresh: lowest frequency threshold searched.

    Returns:
      list of token strings: reserved tokens, characters, then the rest by
      decreasing count and then alphabetically.
    """
    counts = list(word_counts.values())
    upper = min(max(counts), UPPER_THRESH)
    lower = max(min(counts), lower_thresh)
    items = [
        (w, c)
        for w, c in word_counts.items()
        if len(w) <= MAX_TOKEN_LENGTH and w not in reserved_tokens
    ]
    words = _input_words(items, _allowed_chars(items, max_unique_chars))
    space = _TokenSpace(words)
    while True:
        threshold = (upper + lower) // 2
        tokens = _learn_with_threshold(space, threshold, reserved_tokens)
        size = len(tokens)
        close = size <= vocab_size and vocab_size - size <= max(SLACK_RATIO * vocab_size, 0)
        if close or lower >= upper or threshold <= 1:
            return tokens
        if size > vocab_size:
            lower = threshold + 1
        else:
            upper = threshold - 1


def _allowed_chars(items, max_unique_chars):
    """The `max_unique_chars` characters of highest total count (ties: smallest first)."""
    char_counts = collections.Counter()
    for word, count in items:
        for char in word:
            char_counts[char] += count
    ranked = sorted(char_counts.items(), key=lambda item: (-item[1], item[0]))
    return {char for char, _ in ranked[:max_unique_chars]}


def _input_words(items, allowed):
    """`(word, count)` of the words of only `allowed` characters, by decreasing
    count (ties in input order), at most MAX_INPUT_TOKENS of them."""
    words = []
    for word, count in sorted(items, key=lambda item: item[1], reverse=True):
        if len(words) >= MAX_INPUT_TOKENS:
            break
        if allowed.issuperset(word):
            words.append((word, count))
    return words


class _TokenSpace:
    """Every string that can become a token, as ids, and the greedy split's candidates as arrays.

    Ids: `strings[i]` is token string i (the words, their joined suffixes,
    every character alone and joined). Nodes: the joined suffixes, ordered
    by length, `node_ids[n]` their string ids. A word (row of `word_*`) or a
    node has piece candidates, longest piece first, in CSR form: `*_starts`
    row offsets into `*_pieces` (the piece's string id) and `*_rests` (the
    node of the joined rest after the piece, or -1 when the piece ends it).

    Attributes also: `chars` (the characters), `is_char` (bool per id: a
    character alone or joined), `word_counts` (per word, in row order),
    `first_whole` and `first_joined` (int64 per id: iteration 0's counts of
    whole words and of joined suffixes), `levels` (node slices of one length,
    longest first).
    """

    def __init__(self, words):
        words = [(word, count) for word, count in words if word]  # "" never counts
        self.chars = sorted({char for word, _ in words for char in word})
        suffix_counts = collections.Counter()
        for word, count in words:
            for start in range(1, len(word)):
                suffix_counts[JOINER + word[start:]] += count
        nodes = sorted(suffix_counts, key=len)
        char_tokens = [*self.chars, *(JOINER + c for c in self.chars)]
        self.strings = list(dict.fromkeys([*char_tokens, *nodes, *(w for w, _ in words)]))
        self.ids = {string: i for i, string in enumerate(self.strings)}
        self.node_ids = np.array([self.ids[node] for node in nodes], np.int64)
        self.node_of = {self.ids[node]: n for n, node in enumerate(nodes)}
        size = len(self.strings)
        self.is_char = np.zeros(size, bool)
        self.is_char[: len(char_tokens)] = True
        self.first_whole = np.zeros(size, np.int64)
        self.first_whole[[self.ids[w] for w, _ in words]] = [count for _, count in words]
        self.first_joined = np.zeros(size, np.int64)
        self.first_joined[self.node_ids] = [suffix_counts[node] for node in nodes]
        self.node_starts, self.node_pieces, self.node_rests = self._csr(nodes, len(JOINER))
        self.word_starts, self.word_pieces, self.word_rests = self._csr([w for w, _ in words], 0)
        self.word_counts = np.array([count for _, count in words], np.int64)
        edges = [0, *(n for n in range(1, len(nodes)) if len(nodes[n]) > len(nodes[n - 1]))]
        edges.append(len(nodes))
        self.levels = [slice(a, b) for a, b in zip(edges[:-1], edges[1:])][::-1]

    def _csr(self, texts, start):
        """(row starts, piece ids, rest nodes) of the candidates of each text:
        the text itself, then `text[:end]` for each shorter end after `start`
        (the joiner's length for joined suffixes) that is a known string."""
        starts, pieces, rests = [0], [], []
        ids, node_of = self.ids, self.node_of
        for text in texts:
            pieces.append(ids[text])
            rests.append(-1)
            for end in range(len(text) - 1, start, -1):
                piece = ids.get(text[:end])
                if piece is not None:
                    pieces.append(piece)
                    rests.append(node_of[ids[JOINER + text[end:]]])
            starts.append(len(pieces))
        return (np.array(starts, np.int64), np.array(pieces, np.int64), np.array(rests, np.int64))


def _learn_with_threshold(space, threshold, reserved_tokens):
    """The vocabulary tensorflow-text's `learn_with_thresh` makes with `threshold`."""
    counts = _kept(space, space.first_whole, space.first_joined, threshold)
    for _ in range(NUM_ITERATIONS - 1):
        joined = _joined_counts(space, counts > 0)
        counts = _kept(space, space.first_whole, joined, threshold)
    kept = np.flatnonzero(counts)
    ranked = sorted(
        zip(counts[kept].tolist(), [space.strings[i] for i in kept]),
        key=lambda item: (-item[0], item[1]),
    )
    return list(dict.fromkeys([*reserved_tokens, *space.chars, *(t for _, t in ranked)]))


def _kept(space, whole, joined, threshold):
    """Count per id of the tokens kept (0: not kept): those counted at least
    `threshold` times (a joined suffix's count over a whole word's of the
    same string), then every character alone and joined (1 unless counted)."""
    kept = np.where(joined >= threshold, joined, np.where(whole >= threshold, whole, 0))
    return np.where(space.is_char & (kept == 0), 1, kept)


def _next_rests(starts, pieces, rests, is_token):
    """Per row: the rest node after its longest piece in `is_token` (-1 when
    that piece ends the text). Every row has one: its last candidate is a
    single character, and every character is a token alone and joined."""
    position = np.where(is_token[pieces], np.arange(len(pieces)), len(pieces))
    if not len(pieces):  # no rows
        return rests
    return rests[np.minimum.reduceat(position, starts[:-1])]


def _joined_counts(space, is_token):
    """Counts per id of the joined suffixes at the split points of each word
    split greedily with the tokens `is_token` (bool per id). (The whole words'
    counts are iteration 0's: every word splits, so each counts at start 0.)"""
    nxt = _next_rests(space.node_starts, space.node_pieces, space.node_rests, is_token)
    rest = _next_rests(space.word_starts, space.word_pieces, space.word_rests, is_token)
    arriving = np.zeros(len(space.node_ids), np.int64)
    going = rest >= 0
    np.add.at(arriving, rest[going], space.word_counts[going])
    for level in space.levels:  # longest first: a rest is shorter than its suffix
        targets = nxt[level]
        on = targets >= 0
        np.add.at(arriving, targets[on], arriving[level][on])
    joined = np.zeros(len(space.strings), np.int64)
    joined[space.node_ids] = arriving
    return joined
