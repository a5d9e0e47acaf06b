"""Start/end logits -> SQuAD answers, as the original `run_squad.py`'s `write_predictions`.

`SquadPostprocessor` takes the windows' logits one window at a time
(`add`) and keeps only each window's best candidate answers, so the caller
never holds the logits of a whole dev set. `finish()` then gives the three
dicts the original writes as predictions.json, nbest_predictions.json and
(SQuAD 2.0) null_odds.json; `write_prediction_files` writes them.

Per window, as the original: the `n_best_size` highest start and end
positions are paired; a pair is dropped if either position is outside the
window's tokens or its document part, the start is not the window that gives
it maximum context, end < start, or the answer is longer than
`max_answer_length` sub-tokens. Per question, the candidates of all windows
are ranked by `start_logit + end_logit` (ties: earlier window, then the
original's pair order); each distinct text (`get_final_text`) is kept once,
up to `n_best_size`. With SQuAD 2.0 the null answer "" competes with score
`min over windows of start_logits[0] + end_logits[0]`, and the question is
answered "" when `score_null - best non-null score > null_score_diff_threshold`;
null_odds.json holds that difference.

Keeping only the first `n_best_size` distinct texts of each window gives
exactly the original's n-best: an answer that is not among its own window's
first `n_best_size` distinct texts has at least that many distinct texts
ranked before it.

Differences from the original, on cases it crashes on: a SQuAD 2.0 question
whose n-best holds no non-null answer (every candidate invalid, or no
window; google-research/bert issue #476) is answered "", its n-best gets the
original's placeholder {"text": "empty", logits 0.0} after the null answer,
and its null_odds value is `score_null` (the placeholder's score is 0).
"""

import collections
import dataclasses
import heapq
import json
import math
import os

from absl import logging

from bert_tf.files import write_text_atomically
from bert_tf.text import tokenization

PREDICTIONS_FILE = "predictions.json"
NBEST_FILE = "nbest_predictions.json"
NULL_ODDS_FILE = "null_odds.json"
# The original's starting value of the minimum null score (a question with
# no window keeps it, with null logits 0.0).
_NO_WINDOW_NULL_SCORE = 1000000.0
# Answer of a question without any valid span, as the original (v1.1).
_PLACEHOLDER_TEXT = "empty"


@dataclasses.dataclass
class WindowMeta:
    """What postprocessing needs of one packed window (the original's feature).

    example_index: index of the window's example in the `examples` list.
    tokens: the packed tokens `[CLS] query [SEP] window [SEP]` (no padding).
    token_to_orig_map: {position in tokens: word index} for the window part.
    token_is_max_context: {position in tokens: bool} for the window part.
    Any object with these four attributes can be passed to `add`.
    """

    example_index: int
    tokens: list
    token_to_orig_map: dict
    token_is_max_context: dict


# One kept answer: `rank` orders equal scores as the original's stable sort.
_Candidate = collections.namedtuple(
    "_Candidate", ["score", "window", "rank", "text", "start_logit", "end_logit"]
)

SquadPredictions = collections.namedtuple("SquadPredictions", ["predictions", "nbest", "null_odds"])
SquadPredictions.__doc__ = """What `SquadPostprocessor.finish` returns.

predictions: {qas_id: answer text} (predictions.json).
nbest: {qas_id: [{"text", "probability", "start_logit", "end_logit"}, ...]},
  best first (nbest_predictions.json).
null_odds: {qas_id: score_null - best non-null score} (null_odds.json), or
  None without version_2_with_negative.
"""


class SquadPostprocessor:
    """Collects windows' logits and turns them into the original's prediction dicts.

    Args:
      examples: the `SquadExample`s the windows were made from.
      n_best_size: start / end positions considered per window and answers
        kept per question.
      max_answer_length: longest answer, in sub-tokens.
      do_lower_case: how the tokenizer was set (for `get_final_text`).
      version_2_with_negative: SQuAD 2.0 (null answers).
      null_score_diff_threshold: predict "" above this score difference.
      verbose_logging: log why `get_final_text` falls back.
    """

    def __init__(
        self,
        examples,
        n_best_size=20,
        max_answer_length=30,
        do_lower_case=True,
        version_2_with_negative=False,
        null_score_diff_threshold=0.0,
        verbose_logging=False,
    ):
        self.examples = examples
        self.n_best_size = n_best_size
        self.max_answer_length = max_answer_length
        self.do_lower_case = do_lower_case
        self.version_2_with_negative = version_2_with_negative
        self.null_score_diff_threshold = null_score_diff_threshold
        self.verbose_logging = verbose_logging
        self._candidates = [[] for _ in examples]
        self._num_windows = [0] * len(examples)
        # Per example: (min null score, its start logit, its end logit).
        self._null = [(_NO_WINDOW_NULL_SCORE, 0.0, 0.0)] * len(examples)

    def add(self, feature, start_logits, end_logits):
        """Adds one window's logits.

        `feature`: a `WindowMeta` (or anything with its attributes);
        `start_logits`, `end_logits`: 1-D sequences (lists, NumPy arrays) over
        the packed positions, at least `len(feature.tokens)` long. Pass the
        full `max_seq_length` logits to match the original exactly: its
        n-best positions are chosen among the padding positions too.
        Windows of one example must be added in window order.
        """
        start_logits = [float(x) for x in start_logits]
        end_logits = [float(x) for x in end_logits]
        if min(len(start_logits), len(end_logits)) < len(feature.tokens):
            raise ValueError(
                f"{len(start_logits)} start / {len(end_logits)} end logits for a "
                f"window of {len(feature.tokens)} tokens"
            )
        index = feature.example_index
        window = self._num_windows[index]
        self._num_windows[index] += 1
        null_score = start_logits[0] + end_logits[0]
        if self.version_2_with_negative and null_score < self._null[index][0]:
            self._null[index] = (null_score, start_logits[0], end_logits[0])
        pairs = self._valid_pairs(feature, start_logits, end_logits)
        pairs.sort(key=lambda pair: pair[0], reverse=True)
        seen = set()
        kept = self._candidates[index]
        for score, start, end in pairs:
            if len(seen) >= self.n_best_size:
                break
            text = self._answer_text(feature, start, end)
            if text not in seen:
                seen.add(text)
                kept.append(
                    _Candidate(score, window, len(seen), text, start_logits[start], end_logits[end])
                )

    def finish(self):
        """Returns `SquadPredictions(predictions, nbest, null_odds)`, keyed by
        qas_id in example order."""
        predictions = {}
        nbest_json = {}
        null_odds = {} if self.version_2_with_negative else None
        for index, example in enumerate(self.examples):
            nbest = self._nbest(index)
            best = next((entry for entry in nbest if entry[0]), None)
            if best is None:
                nbest.append((_PLACEHOLDER_TEXT, 0.0, 0.0))
            probabilities = _softmax([start + end for _, start, end in nbest])
            nbest_json[example.qas_id] = [
                {"text": text, "probability": p, "start_logit": start, "end_logit": end}
                for (text, start, end), p in zip(nbest, probabilities)
            ]
            if not self.version_2_with_negative:
                predictions[example.qas_id] = nbest[0][0]
                continue
            _, best_start, best_end = best or (None, 0.0, 0.0)
            score_diff = self._null[index][0] - best_start - best_end
            null_odds[example.qas_id] = score_diff
            if best is None or score_diff > self.null_score_diff_threshold:
                predictions[example.qas_id] = ""
            else:
                predictions[example.qas_id] = best[0]
        return SquadPredictions(predictions, nbest_json, null_odds)

    def _valid_pairs(self, feature, start_logits, end_logits):
        """[(score, start, end)] of the window's allowed n-best position pairs,
        in the original's order (by start rank, then end rank)."""
        starts = _best_indexes(start_logits, self.n_best_size)
        ends = _best_indexes(end_logits, self.n_best_size)
        num_tokens = len(feature.tokens)
        pairs = []
        for start in starts:
            if (
                start >= num_tokens
                or start not in feature.token_to_orig_map
                or not feature.token_is_max_context.get(start, False)
            ):
                continue
            for end in ends:
                if (
                    end >= num_tokens
                    or end not in feature.token_to_orig_map
                    or end < start
                    or end - start + 1 > self.max_answer_length
                ):
                    continue
                pairs.append((start_logits[start] + end_logits[end], start, end))
        return pairs

    def _answer_text(self, feature, start, end):
        """The original-text answer of window positions [start, end]."""
        example = self.examples[feature.example_index]
        pieces = " ".join(feature.tokens[start : end + 1])
        # Undo WordPiece: "un ##aff ##able" -> "unaffable".
        pred_text = " ".join(pieces.replace(" ##", "").replace("##", "").split())
        first_word = feature.token_to_orig_map[start]
        last_word = feature.token_to_orig_map[end]
        orig_text = example.words_text(first_word, last_word)
        return get_final_text(pred_text, orig_text, self.do_lower_case, self.verbose_logging)

    def _nbest(self, index):
        """[(text, start_logit, end_logit)] of one example, best first; with
        SQuAD 2.0 the null answer "" is always included."""
        ranked = [
            ((-c.score, 0, c.window, c.rank), c.text, c.start_logit, c.end_logit)
            for c in self._candidates[index]
        ]
        null_entry = None
        if self.version_2_with_negative:
            score_null, null_start, null_end = self._null[index]
            null_entry = ("", null_start, null_end)
            # The null answer comes after non-null ones of equal score.
            ranked.append(((-score_null, 1, 0, 0), *null_entry))
        ranked.sort(key=lambda entry: entry[0])
        nbest = []
        seen = set()
        for _, text, start, end in ranked:
            if len(nbest) >= self.n_best_size:
                break
            if text not in seen:
                seen.add(text)
                nbest.append((text, start, end))
        if null_entry is not None and "" not in seen:
            nbest.append(null_entry)
        return nbest


def get_final_text(pred_text, orig_text, do_lower_case, verbose_logging=False):
    """Projects a normalised prediction back onto the original text.

    `pred_text` is the detokenized WordPiece answer (lower-cased and
    accent-stripped with `do_lower_case`); `orig_text` the whole words it
    came from, e.g. "steve smith" in "Steve Smith's". Returns the matching
    characters of `orig_text` ("Steve Smith"), found by aligning
    `orig_text` with its BasicTokenizer tokens character by character once
    spaces are removed; returns `orig_text` itself when the prediction is not
    in the tokenized text or tokenization changed the number of non-space
    characters (e.g. decomposed accents).
    """
    tok_text = " ".join(
        tokenization.BasicTokenizer(do_lower_case=do_lower_case).tokenize(orig_text)
    )
    start = tok_text.find(pred_text)
    if start == -1:
        return _fallback(
            verbose_logging, orig_text, "unable to find text '%s' in '%s'", pred_text, orig_text
        )
    end = start + len(pred_text) - 1
    orig_ns_text, orig_positions = _strip_spaces(orig_text)
    tok_ns_text, tok_positions = _strip_spaces(tok_text)
    if len(orig_ns_text) != len(tok_ns_text):
        return _fallback(
            verbose_logging,
            orig_text,
            "length not equal after stripping spaces: '%s' vs '%s'",
            orig_ns_text,
            tok_ns_text,
        )
    tok_to_ns = {position: i for i, position in enumerate(tok_positions)}
    if start not in tok_to_ns:
        return _fallback(verbose_logging, orig_text, "couldn't map start position")
    if end not in tok_to_ns:
        return _fallback(verbose_logging, orig_text, "couldn't map end position")
    return orig_text[orig_positions[tok_to_ns[start]] : orig_positions[tok_to_ns[end]] + 1]


def _fallback(verbose_logging, orig_text, message, *args):
    """Logs why `get_final_text` gives up (if verbose) and returns `orig_text`."""
    if verbose_logging:
        logging.info(message, *args)
    return orig_text


def _strip_spaces(text):
    """(`text` without " ", position in `text` of each remaining character)."""
    positions = [i for i, char in enumerate(text) if char != " "]
    return "".join(text[i] for i in positions), positions


def _best_indexes(logits, n_best_size):
    """Indices of the `n_best_size` largest logits, largest first (ties: lower index)."""
    return heapq.nlargest(n_best_size, range(len(logits)), key=logits.__getitem__)


def _softmax(scores):
    """Probabilities of a list of floats (max-subtracted for stability)."""
    top = max(scores)
    exps = [math.exp(score - top) for score in scores]
    total = sum(exps)
    return [e / total for e in exps]


def write_json(path, obj):
    """Writes `obj` as JSON (indent 4, newline-terminated, as the original), atomically."""
    write_text_atomically(path, json.dumps(obj, indent=4) + "\n")


def write_prediction_files(output_dir, outputs):
    """Writes a `SquadPredictions` as the original's files in `output_dir`;
    null_odds.json only for SQuAD 2.0. Returns the paths written."""
    files = [(PREDICTIONS_FILE, outputs.predictions), (NBEST_FILE, outputs.nbest)]
    if outputs.null_odds is not None:
        files.append((NULL_ODDS_FILE, outputs.null_odds))
    paths = []
    for name, obj in files:
        path = os.path.join(output_dir, name)
        write_json(path, obj)
        paths.append(path)
    return paths
