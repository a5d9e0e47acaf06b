"""Pins the output files of a small run of each script's library function.

What is promised byte-identical on any machine is pinned by digest: the
pre-training records, the cached feature records, the checkpoints' variable
names, shapes and dtypes, the GLUE submission file and NER's
test_predictions.txt (their labels have a wide margin). Answer texts (SQuAD)
and tokens (extract_features) are pinned exactly, again only where the
logits they come from are far from a tie. What comes out of floating-point
arithmetic (eval_results, test_results.tsv, SQuAD's n-best logits and null
odds, the features) is pinned by value, within a tolerance measured across
CPU settings (tests/calibrate.py --marker=numerics -k pinned): oneDNN picks
other kernels on other CPUs and sums round differently. The pre-training and
classifier pins were taken from the code before the task framework
refactoring (issue 9), the SQuAD, NER, multiple-choice and extract_features
ones later; a change that alters any of them on purpose must say so and
update the pin here.

Each test makes its script's run once (SQuAD's second run is another one:
SQuAD 2.0 prediction with the first run's checkpoint) and checks all of its
outputs.
"""

import csv
import hashlib
import json
import random

import keras
import numpy as np
import pytest
import tensorflow as tf
from shared import tiny_model_files

from bert_tf import checkpoints
from bert_tf.config import BertConfig
from bert_tf.data import tagging
from bert_tf.data.pretraining.writer import PretrainingDataOptions, create_pretraining_data
from bert_tf.data.squad import postprocess
from bert_tf.modeling import BertEncoder
from bert_tf.options import build
from bert_tf.tasks import multiple_choice as multiple_choice_task
from bert_tf.tasks.classifier import run_classifier
from bert_tf.tasks.classifier_options import ClassifierOptions
from bert_tf.tasks.extract import extract_features
from bert_tf.tasks.extract_options import FeatureOptions
from bert_tf.tasks.multiple_choice import run_multiple_choice
from bert_tf.tasks.multiple_choice_options import MultipleChoiceOptions
from bert_tf.tasks.ner import run_ner
from bert_tf.tasks.ner_options import NerOptions
from bert_tf.tasks.pretraining import run_pretraining
from bert_tf.tasks.pretraining_options import PretrainingOptions
from bert_tf.tasks.squad import run_squad
from bert_tf.tasks.squad_options import SquadOptions

WORDS = (
    "the a cat dog sat ran on mat good bad very film plot was is long short music "
    "##s ##ing story funny dull"
).split()


@pytest.fixture(scope="module")
def model_files(tmp_path_factory):
    """`(root, vocab.txt, bert_config.json)`: a folder for the runs and a tiny
    BERT (hidden 32, 2 layers) over `WORDS`."""
    root = tmp_path_factory.mktemp("pins")
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "."]
    return root, *tiny_model_files(str(root), [*special, *WORDS], max_position_embeddings=32)


# Reading the outputs.


def _digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def _records_digest(path):
    """The records' contents (feature names, kinds and values), independent of
    the protobuf map order in the serialized bytes."""
    content = hashlib.sha256()
    for record in tf.data.TFRecordDataset(str(path)):
        features = tf.train.Example.FromString(record.numpy()).features.feature
        for name in sorted(features):
            kind = features[name].WhichOneof("kind")
            content.update(f"{name} {kind} {list(getattr(features[name], kind).value)};".encode())
        content.update(b"\n")
    return content.hexdigest()[:16]


def _checkpoint_digest(prefix):
    """Names, shapes and dtypes of every variable in a checkpoint."""
    reader = tf.train.load_checkpoint(prefix)
    shapes, dtypes = reader.get_variable_to_shape_map(), reader.get_variable_to_dtype_map()
    listing = "\n".join(f"{name} {shapes[name]} {dtypes[name].name}" for name in sorted(shapes))
    return hashlib.sha256(listing.encode()).hexdigest()[:16]


def _output_digests(output_dir, files=(), splits=("train", "eval", "predict")):
    """Digests of a run's feature records of `splits`, of `files` in
    `output_dir` and of its newest checkpoint."""
    digests = {
        f"{split}.tf_record": _records_digest(output_dir / f"{split}.tf_record") for split in splits
    }
    digests.update({name: _digest(output_dir / name) for name in files})
    digests["checkpoint"] = _checkpoint_digest(tf.train.latest_checkpoint(str(output_dir)))
    return digests


def _key_values(path):
    """A `key = value` file (eval_results.txt) as {key: float}, in file order."""
    with open(path) as f:
        return {key: float(value) for key, value in (line.split(" = ") for line in f)}


def _read_json(path):
    with open(path) as f:
        return json.load(f)


def _test_probabilities(output_dir):
    return np.loadtxt(output_dir / "test_results.tsv", delimiter="\t")


def _numbered(name, values):
    """{`name` and the index, e.g. "p3.1": value} of each item of an array,
    for `calibration.record`."""
    return {f"{name}{'.'.join(map(str, i))}": x for i, x in np.ndenumerate(values)}


def _assert_pinned(values, pins, **tolerance):
    """`values` has the keys of `pins`, in that order, and their values within
    `tolerance` (pytest.approx's `rel` and `abs`)."""
    assert list(values) == list(pins), values
    assert values == pytest.approx(pins, **tolerance), values


# The margins that make texts, tags and choices portable: recorded during a
# run, since they are in no output file.


def _gaps(logits, k=1):
    """The difference between the `k`-th and the next largest value of each
    row of `logits` (k=1: between the two largest)."""
    top = np.sort(np.asarray(logits, dtype=np.float64), axis=-1)
    return top[..., -k] - top[..., -k - 1]


def _spy(monkeypatch, owner, name, watch):
    """Makes every call of `owner.<name>` go through `watch(seen, *args)`,
    which adds what it measures to the list `seen` and returns the arguments
    to call the original with; returns `seen`."""
    seen, original = [], getattr(owner, name)
    monkeypatch.setattr(owner, name, lambda *args: original(*watch(seen, *args)))
    return seen


# Running the scripts.


def _sentence(rng, length):
    return " ".join(rng.choice(WORDS[:18]) for _ in range(length)).capitalize() + "."


def _data_dir(root, name, seed, write, sizes):
    """The folder `root/name` of the files of `sizes` ({file name: examples}),
    each written by `write(path, rng, examples)` in turn from one
    `random.Random(seed)`."""
    directory = root / name
    directory.mkdir()
    rng = random.Random(seed)
    for file, n in sizes.items():
        write(directory / file, rng, n)
    return str(directory)


# The flags of a fine-tuning run that trains, evaluates and predicts.
TRAIN_EVAL_PREDICT = dict(
    do_train=True,
    do_eval=True,
    do_predict=True,
    train_batch_size=4,
    eval_batch_size=4,
    predict_batch_size=4,
)


def _run(run, options_class, model_files, name, **flags):
    """Runs `run` (a script's library function) on the tiny model with
    `flags`, into the output folder `name`; returns that folder."""
    root, vocab, config = model_files
    output_dir = root / name
    run(
        build(
            options_class,
            vocab_file=vocab,
            bert_config_file=config,
            output_dir=str(output_dir),
            **flags,
        )
    )
    return output_dir


@pytest.mark.numerics
def test_pretraining_outputs_are_pinned(model_files, calibration):
    root, vocab, config = model_files
    rng = random.Random(5)
    corpus = root / "corpus.txt"
    corpus.write_text(
        "\n\n".join(
            "\n".join(_sentence(rng, rng.randint(3, 9)) for _ in range(6)) for _ in range(12)
        )
        + "\n"
    )
    records, output_dir = root / "train.tfrecord", root / "pretrain"
    create_pretraining_data(
        build(
            PretrainingDataOptions,
            input_file=(str(corpus),),
            output_file=(str(records),),
            vocab_file=vocab,
            max_seq_length=24,
            max_predictions_per_seq=4,
            dupe_factor=2,
            show_progress=False,
        )
    )
    run_pretraining(
        build(
            PretrainingOptions,
            bert_config_file=config,
            input_file=str(records),
            output_dir=str(output_dir),
            max_seq_length=24,
            max_predictions_per_seq=4,
            do_train=True,
            do_eval=True,
            train_batch_size=4,
            eval_batch_size=4,
            learning_rate=2e-3,
            num_train_steps=6,
            num_warmup_steps=2,
            save_checkpoints_steps=3,
            max_eval_steps=3,
            seed=1,
            steps_per_loop=2,
        )
    )
    digests = {
        "records": _digest(records),
        "checkpoint": _checkpoint_digest(str(output_dir / "model.ckpt-6")),
    }
    assert digests == PRETRAINING_PINS, digests
    results = _key_values(output_dir / "eval_results.txt")
    calibration.record(**results)
    _assert_pinned(results, PRETRAINING_EVAL_RESULTS, rel=EVAL_RESULTS_RTOL)


def _mrpc_file(path, rng, n):
    """An MRPC TSV file of `n` pairs (test.tsv: numbered, no labels)."""
    test = path.stem == "test"
    lines = [("index" if test else "Quality") + "\t#1 ID\t#2 ID\t#1 String\t#2 String"]
    for i in range(n):
        label = rng.randrange(2)
        a, b = _sentence(rng, rng.randint(2, 30)), _sentence(rng, rng.randint(2, 8))
        lines.append(f"{i if test else label}\t{i}\t{i}\t{a}\t{b}")
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.numerics
def test_classifier_outputs_are_pinned(model_files, calibration):
    """Windows (long_text_stride), padding rows in eval/predict and a GLUE file."""
    sizes = {"train.tsv": 24, "dev.tsv": 13, "test.tsv": 11}
    output_dir = _run(
        run_classifier,
        ClassifierOptions,
        model_files,
        "classify",
        task_name="MRPC",
        data_dir=_data_dir(model_files[0], "MRPC", 7, _mrpc_file, sizes),
        max_seq_length=20,
        **TRAIN_EVAL_PREDICT,
        learning_rate=1e-3,
        num_train_epochs=2.0,
        save_checkpoints_steps=5,
        long_text_stride=6,
        seed=2,
        steps_per_loop=3,
    )
    digests = _output_digests(output_dir, files=["MRPC.tsv"])
    assert digests == CLASSIFIER_PINS, digests

    results = _key_values(output_dir / "eval_results.txt")
    probabilities = _test_probabilities(output_dir)
    calibration.record(**results, **_numbered("p", probabilities[:, 1]))
    _assert_pinned(results, CLASSIFIER_EVAL_RESULTS, rel=EVAL_RESULTS_RTOL)
    np.testing.assert_allclose(probabilities, CLASSIFIER_TEST_PROBABILITIES, atol=PROBABILITY_ATOL)
    # The submission's labels are portable: no probability is near the threshold.
    assert (
        np.abs(np.asarray(CLASSIFIER_TEST_PROBABILITIES)[:, 1] - 0.5).min() > 100 * PROBABILITY_ATOL
    )


def _squad_file(path, rng, num_paragraphs):
    """SQuAD JSON: contexts of 2 to 6 sentences (up to ~50 tokens: several
    windows), questions on a span of 1 to 3 words of one sentence (with its
    case and punctuation); a file named *_v2 is SQuAD 2.0, 40% of its
    questions unanswerable."""
    impossible_share = 0.4 if path.stem.endswith("_v2") else 0.0
    paragraphs = []
    for p in range(num_paragraphs):
        sentences = [_sentence(rng, rng.randint(4, 8)) for _ in range(rng.randint(2, 6))]
        context = " ".join(sentences)
        qas = []
        for q in range(rng.randint(1, 2)):
            qas_id = f"{path.stem}-{p}-{q}"
            question = _sentence(rng, rng.randint(2, 5))[:-1] + "?"
            if rng.random() < impossible_share:
                qas.append(
                    {"id": qas_id, "question": question, "answers": [], "is_impossible": True}
                )
                continue
            index = rng.randrange(len(sentences))
            words = sentences[index].split()
            first = rng.randrange(len(words))
            text = " ".join(words[first : first + rng.randint(1, 3)])
            start = (
                len(" ".join(sentences[:index]))
                + (index > 0)
                + len(" ".join(words[:first]))
                + (first > 0)
            )
            assert context[start : start + len(text)] == text
            qas.append(
                {
                    "id": qas_id,
                    "question": question,
                    "is_impossible": False,
                    "answers": [{"text": text, "answer_start": start}],
                }
            )
        paragraphs.append({"context": context, "qas": qas})
    with open(path, "w") as f:
        json.dump(
            {
                "version": "v2.0" if impossible_share else "1.1",
                "data": [{"title": "pins", "paragraphs": paragraphs}],
            },
            f,
        )


def _nbest_margins(nbest):
    """The score (start + end logit) difference between consecutive answers
    of every question's n-best list, in a 1-D array. The original's "empty"
    stand-in (logits 0, added when no span is valid) is not ranked: left out."""

    def ranked(entries):
        return [e for e in entries if (e["text"], e["start_logit"], e["end_logit"]) != STAND_IN]

    return np.concatenate(
        [
            -np.diff([e["start_logit"] + e["end_logit"] for e in ranked(entries)])
            for entries in nbest.values()
        ]
    )


STAND_IN = ("empty", 0.0, 0.0)


@pytest.mark.numerics
def test_squad_outputs_are_pinned(model_files, calibration, monkeypatch):
    """v1.1: train and predict (contexts of several windows, padding windows
    in predict); then SQuAD 2.0 prediction with that checkpoint (null_odds):
    a second run, since a run predicts one file in one version."""
    sizes = {"squad_train.json": 6, "squad_dev.json": 3, "squad_dev_v2.json": 3}
    data_dir = _data_dir(model_files[0], "squad_data", 11, _squad_file, sizes)
    train, dev, dev_v2 = (f"{data_dir}/{name}" for name in sizes)
    settings = dict(
        max_seq_length=32,
        doc_stride=8,
        max_query_length=6,
        predict_batch_size=4,
        n_best_size=3,
        max_answer_length=4,
        # 5, not 3, since each embedding table got its own initializer
        # (issue 41): with 3, two answers of one n-best list came 4.8e-4
        # apart, under MIN_MARGIN. 23, not 5, since the initializer's draw
        # and the train loop's Grappler passes changed (issue 41): with 5,
        # a window's 3rd and 4th largest start or end logits came 7.8e-5
        # apart. 23 is the first seed from 6 on whose margins all exceed
        # 2 * MIN_MARGIN and that leaves at most one question to the
        # "empty" stand-in (8 leaves three, and no SQuAD 2.0 answer). The
        # seed leaves the records as they were.
        seed=23,
    )

    def window_gaps(seen, postprocessor, feature, start_logits, end_logits):
        """Which positions make a window's n-best: the gap between the
        n_best_size-th and the next largest start (and end) logit."""
        seen += [_gaps(logits, settings["n_best_size"]) for logits in (start_logits, end_logits)]
        return postprocessor, feature, start_logits, end_logits

    gaps = _spy(monkeypatch, postprocess.SquadPostprocessor, "add", window_gaps)
    output_dir = _run(
        run_squad,
        SquadOptions,
        model_files,
        "squad",
        train_file=train,
        predict_file=dev,
        do_train=True,
        do_predict=True,
        train_batch_size=4,
        learning_rate=2e-3,
        num_train_epochs=2.0,
        save_checkpoints_steps=3,
        steps_per_loop=2,
        **settings,
    )
    output_v2 = _run(
        run_squad,
        SquadOptions,
        model_files,
        "squad_v2",
        predict_file=dev_v2,
        do_predict=True,
        init_checkpoint=tf.train.latest_checkpoint(str(output_dir)),
        version_2_with_negative=True,
        **settings,
    )
    digests = {
        **_output_digests(output_dir, splits=("train", "predict")),
        "predict_v2.tf_record": _records_digest(output_v2 / "predict.tf_record"),
    }
    assert digests == SQUAD_PINS, digests

    nbest = _read_json(output_dir / "nbest_predictions.json")
    scores = _read_json(output_dir / "eval_results.json")
    nbest_v2 = _read_json(output_v2 / "nbest_predictions.json")
    null_odds = _read_json(output_v2 / "null_odds.json")
    scores_v2 = _read_json(output_v2 / "eval_results.json")
    margins = {
        "min_window_gap": min(gaps),
        "min_nbest_margin": _nbest_margins({**nbest, **nbest_v2}).min(),
        "min_abs_null_odds": min(abs(v) for v in null_odds.values()),
    }
    calibration.record(
        **{
            f"{qas_id}.{k}.{key}": entry[key]
            for qas_id, entries in nbest.items()
            for k, entry in enumerate(entries)
            for key in ("probability", "start_logit", "end_logit")
        },
        **scores,
        **{f"v2.{k}": v for k, v in scores_v2.items()},
        **{f"null_odds.{k}": v for k, v in null_odds.items()},
        **margins,
    )
    # The answer texts are portable: no two candidates' scores, no start or
    # end logit at the edge of a window's n-best and no null odds (against
    # null_score_diff_threshold 0) are near a tie.
    assert min(margins.values()) > MIN_MARGIN, margins
    assert _read_json(output_dir / "predictions.json") == SQUAD_PREDICTIONS
    assert {q: [e["text"] for e in entries] for q, entries in nbest.items()} == {
        q: [e[0] for e in entries] for q, entries in SQUAD_NBEST.items()
    }
    entries = [e for entries in nbest.values() for e in entries]
    pinned = np.array([e[1:] for entries in SQUAD_NBEST.values() for e in entries])
    np.testing.assert_allclose(
        [e["probability"] for e in entries], pinned[:, 0], atol=PROBABILITY_ATOL
    )
    np.testing.assert_allclose(
        [(e["start_logit"], e["end_logit"]) for e in entries], pinned[:, 1:], atol=LOGIT_ATOL
    )
    _assert_pinned(scores, SQUAD_SCORES, rel=EVAL_RESULTS_RTOL)
    assert _read_json(output_v2 / "predictions.json") == SQUAD_V2_PREDICTIONS
    assert list(null_odds) == list(SQUAD_V2_NULL_ODDS)
    np.testing.assert_allclose(
        list(null_odds.values()), list(SQUAD_V2_NULL_ODDS.values()), atol=LOGIT_ATOL
    )
    _assert_pinned(scores_v2, SQUAD_V2_SCORES, rel=EVAL_RESULTS_RTOL, abs=LOGIT_ATOL)


# CoNLL tags of the NER pins' words (IOB2: an animal, or a thing with the
# adjective before it); "cats", "dogs" and "films" are two WordPieces.
_NER_WORDS = {
    **dict.fromkeys(["cat", "dog", "cats", "dogs"], "ANI"),
    **dict.fromkeys(["mat", "film", "films", "plot", "music"], "OBJ"),
}


def _conll_file(path, rng, num_sentences):
    """A CoNLL-2003 file: documents of 3 sentences; every 4th sentence has 18
    words, more than one window of the NER pins."""
    rows = []
    for i in range(num_sentences):
        if i % 3 == 0:
            rows += ["-DOCSTART- -X- -X- O", ""]
        length = 18 if i % 4 == 3 else rng.randint(3, 8)
        previous = None
        for _ in range(length):
            word = rng.choice(WORDS[:18] + ["cats", "dogs", "films"])
            tag = "O"
            if word in _NER_WORDS:
                kind = _NER_WORDS[word]
                tag = f"B-{kind}"
                if kind == "OBJ" and previous in ("good", "bad", "long", "short"):
                    rows[-1] = rows[-1].rsplit(" ", 1)[0] + f" B-{kind}"
                    tag = f"I-{kind}"
            rows.append(f"{word} NN I-NP {tag}")
            previous = word
        rows.append("")
    path.write_text("\n".join(rows) + "\n")


def _tag_margins(seen, sentences, batches):
    """The difference between the two largest logits of each labelled word
    that NER tags (eval, then predict)."""

    def watched():
        for batch in batches:
            tagged = (batch["word_ids"] >= 0) & (batch["is_real_example"] == 1)[:, None]
            seen.extend(_gaps(batch["logits"])[tagged])
            yield batch

    return sentences, watched()


@pytest.mark.numerics
def test_ner_outputs_are_pinned(model_files, calibration, monkeypatch):
    """Sentences longer than a window, documents, padding rows in eval / predict."""
    margins = _spy(monkeypatch, tagging, "word_predictions", _tag_margins)
    sizes = {"train.txt": 16, "dev.txt": 7, "test.txt": 5}
    output_dir = _run(
        run_ner,
        NerOptions,
        model_files,
        "ner",
        data_dir=_data_dir(model_files[0], "conll", 13, _conll_file, sizes),
        do_lower_case=True,
        max_seq_length=16,
        **TRAIN_EVAL_PREDICT,
        learning_rate=2e-3,
        num_train_epochs=2.0,
        save_checkpoints_steps=3,
        seed=4,
        steps_per_loop=2,
    )
    digests = _output_digests(output_dir, files=["test_predictions.txt"])
    results = _key_values(output_dir / "eval_results.txt")
    min_margin = float(min(margins))
    calibration.record(**results, min_margin=min_margin)
    # The tags (test_predictions.txt, and the entity scores) are portable: no
    # word's two best tags are near a tie.
    assert min_margin > MIN_MARGIN, min_margin
    assert digests == NER_PINS, digests
    _assert_pinned(results, NER_EVAL_RESULTS, rel=EVAL_RESULTS_RTOL)


def _swag_file(path, rng, n):
    """A SWAG CSV of `n` rows (test.csv: no labels) whose right ending says
    "good" and the others "bad" (learnt a little in a few steps: the choices'
    logits then differ by far more than rounding); every third row has no
    sent2, so choices differ in length and grouped eval / predict batches
    reorder the rows."""
    with_label = path.stem != "test"
    plain = [w for w in WORDS[:18] if w not in ("good", "bad")]
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(
            "video-id fold-ind startphrase sent1 sent2 gold-source ending0 ending1 ending2 "
            f"ending3{' label' if with_label else ''}".split()
        )
        for i in range(n):
            sent1, sent2 = _sentence(rng, rng.randint(3, 9)), "" if i % 3 == 0 else "The"
            label = rng.randrange(4)
            endings = []
            for choice in range(4):
                words = [rng.choice(plain) for _ in range(rng.randint(2, 5))]
                words.insert(rng.randrange(len(words) + 1), "good" if choice == label else "bad")
                endings.append(" ".join(words) + ".")
            row = [f"pins_{i}", str(i), f"{sent1} {sent2}", sent1, sent2, "gold", *endings]
            writer.writerow(row + [str(label)] if with_label else row)


@pytest.mark.numerics
def test_multiple_choice_outputs_are_pinned(model_files, calibration, monkeypatch):
    """Truncated pairs (max_seq_length 16), padding rows in eval / predict."""

    def eval_margins(seen, logits, labels):
        seen.extend(_gaps(logits))
        return logits, labels

    margins = _spy(monkeypatch, multiple_choice_task, "eval_metrics", eval_margins)
    sizes = {"train.csv": 32, "val.csv": 7, "test.csv": 5}
    output_dir = _run(
        run_multiple_choice,
        MultipleChoiceOptions,
        model_files,
        "multiple_choice",
        data_dir=_data_dir(model_files[0], "swag", 17, _swag_file, sizes),
        max_seq_length=16,
        **TRAIN_EVAL_PREDICT,
        learning_rate=5e-3,
        num_train_epochs=3.0,
        save_checkpoints_steps=10,
        seed=5,
        steps_per_loop=4,
    )
    digests = _output_digests(output_dir)
    assert digests == MULTIPLE_CHOICE_PINS, digests

    results = _key_values(output_dir / "eval_results.txt")
    probabilities = _test_probabilities(output_dir)
    min_eval_margin = float(min(margins))
    calibration.record(**results, min_eval_margin=min_eval_margin, **_numbered("p", probabilities))
    # eval_accuracy is portable: no eval example's two best choices are near a tie.
    assert min_eval_margin > MIN_MARGIN, min_eval_margin
    _assert_pinned(results, MULTIPLE_CHOICE_EVAL_RESULTS, rel=EVAL_RESULTS_RTOL)
    np.testing.assert_allclose(
        probabilities, MULTIPLE_CHOICE_TEST_PROBABILITIES, atol=PROBABILITY_ATOL
    )


_FEATURE_LINES = [
    "The cat sat on the mat.",
    "A dog ||| the cats ran",
    "Zebras sat.",
    "The very long film was a very dull story on music and the plot was bad.",
]


def _weighted_sums(values):
    """One number per layer of an example's features `[tokens, layers,
    hidden]`: the sum of all its values, each times its own fixed weight
    (sin 1, sin 2, ... over tokens and hidden units)."""
    values = np.asarray(values, dtype=np.float64)
    tokens, _, hidden = values.shape
    weights = np.sin(1.0 + np.arange(tokens * hidden)).reshape(tokens, hidden)
    return np.einsum("tlh,th->l", values, weights)


@pytest.mark.numerics
def test_extract_features_outputs_are_pinned(model_files, calibration):
    """A fresh encoder (fixed seed) saved as a TF1 checkpoint; a pair, an
    unknown word, truncation and a padding row in the last batch."""
    root, vocab, config = model_files
    features_dir = root / "features"
    features_dir.mkdir()
    keras.utils.set_random_seed(6)
    checkpoints.save_tf1_checkpoint(
        BertEncoder(BertConfig.from_json_file(config)), str(features_dir / "bert_model.ckpt")
    )
    (features_dir / "input.txt").write_text("\n".join(_FEATURE_LINES) + "\n")
    output = features_dir / "features.jsonl"
    extract_features(
        build(
            FeatureOptions,
            input_file=str(features_dir / "input.txt"),
            output_file=str(output),
            vocab_file=vocab,
            bert_config_file=config,
            init_checkpoint=str(features_dir / "bert_model.ckpt"),
            layers="-1,0",
            max_seq_length=12,
            batch_size=3,
            seed=6,
        )
    )
    lines = [json.loads(line) for line in output.read_text().splitlines()]
    assert [line["linex_index"] for line in lines] == list(range(len(_FEATURE_LINES)))
    assert [[feature["token"] for feature in line["features"]] for line in lines] == FEATURE_TOKENS
    # Every token has layers -1 and 0 (--layers' order) of 32 values each.
    assert {
        tuple((layer["index"], len(layer["values"])) for layer in feature["layers"])
        for line in lines
        for feature in line["features"]
    } == {((-1, 32), (0, 32))}
    values = [
        [[layer["values"] for layer in feature["layers"]] for feature in line["features"]]
        for line in lines
    ]
    sums = np.array([_weighted_sums(v) for v in values])
    cls = np.array([v[0][0][:4] for v in values])
    calibration.record(**_numbered("sum", sums), **_numbered("cls", cls))
    np.testing.assert_allclose(sums, FEATURE_WEIGHTED_SUMS, atol=FEATURE_SUM_ATOL)
    np.testing.assert_allclose(cls, FEATURE_CLS_VALUES, atol=FEATURE_ATOL)


# eval_results changed on purpose when AdamW became one fused kernel per
# variable (issue 13): the losses by <= 3e-7 relative after 6 steps; then
# when each embedding table got its own initializer (issue 41), and when the
# initializer's draw and the train loop's Grappler passes changed (issue 41).
PRETRAINING_PINS = {"records": "9a9f12a7c0acd38c", "checkpoint": "9c6373a98306ee1a"}
# eval_results.txt. Measured spread over the CPU settings default, avx2,
# sse41 and eigen of tests/conftest.py on a CPU with AVX-512 and AMX (there
# default runs oneDNN's kernels for that ISA), re-measured when the
# initializer's draw and the train loop's Grappler passes changed (issue 41):
# the losses 8.7e-8 (2.9e-8 relative), the accuracies none.
PRETRAINING_EVAL_RESULTS = {
    "global_step": 6,
    "loss": 3.97563219,
    "masked_lm_accuracy": 0.136363636,
    "masked_lm_loss": 3.29402759,
    "next_sentence_accuracy": 0.75,
    "next_sentence_loss": 0.681604604,
}
# test_results.tsv changed on purpose (issue 13) when eval and predict began
# to skip padding and fuse the feed-forward gelu (probabilities by <= 3e-8),
# then when AdamW became one fused kernel per variable (probabilities by
# <= 7e-7, the loss by 2e-7 relative; same labels), then when each embedding
# table got its own initializer (issue 41; same labels), and when the
# initializer's draw and the train loop's Grappler passes changed (issue 41;
# same labels).
CLASSIFIER_PINS = {
    "train.tf_record": "3c0e13bd59504619",
    "eval.tf_record": "3fae2bea86b55c48",
    "predict.tf_record": "32e9db78f491febd",
    "MRPC.tsv": "d4c85b2c43d5aa94",
    "checkpoint": "4193f6c76f971dfb",
}
# Measured spread over the same four settings (re-measured for the new draw
# and Grappler passes, issue 41): the losses 5.2e-9 (7.5e-9 relative), the
# test probabilities 1e-7 (one float32 step of two written values, under
# avx2).
CLASSIFIER_EVAL_RESULTS = {
    "acc_and_f1": 0.619230769,
    "eval_accuracy": 0.538461538,
    "eval_loss": 0.695477245,
    "f1": 0.7,
    "global_step": 30,
    "loss": 0.695477245,
}
CLASSIFIER_TEST_PROBABILITIES = [
    [1 - p, p]
    for p in (
        0.58934075,
        0.58933854,
        0.58934265,
        0.5893365,
        0.58934164,
        0.5893369,
        0.58933455,
        0.5893425,
        0.5893337,
        0.58933884,
        0.5893397,
    )
]
SQUAD_PINS = {
    "train.tf_record": "a19b71ceca20e9b5",
    "predict.tf_record": "7d89eaeaa4514020",
    "predict_v2.tf_record": "f7555d94ef1848c3",
    "checkpoint": "4793e518ef159152",
}
# The outputs changed on purpose when each embedding table got its own
# initializer (issue 41), and again when the initializer's draw and the train
# loop's Grappler passes changed (issue 41); both times so did the test's
# training seed (see there). Measured spread over the same four settings,
# re-measured then: the start logits 8.6e-7 (1.1e-5 relative: against Eigen's
# kernels, oneDNN's default, AVX2 and SSE4.1 ones shift every start logit by
# +8e-8, +8.5e-7 and +1e-7 to +1.5e-7), the end logits 1.1e-6 (1.4e-5
# relative), the null odds 4.3e-7, the n-best probabilities 2.3e-8, the scores
# none. The margins the texts ride on: smallest window n-best edge gap 2.2e-3,
# n-best score step 7.7e-3, |null odds| 6.9e-2 (each moved by 4.3e-7 at most).
SQUAD_PREDICTIONS = {
    "squad_dev-0-0": "long good on.",
    "squad_dev-0-1": ".",
    "squad_dev-1-0": "dog music film.",
    "squad_dev-2-0": ".",
    "squad_dev-2-1": "empty",
}
# (text, probability, start_logit, end_logit) of each n-best answer.
SQUAD_NBEST = {
    "squad_dev-0-0": [
        ("long good on.", 0.342886185, 0.128831208, 0.231823355),
        ("good on.", 0.340271860, 0.121177524, 0.231823355),
        (".", 0.316841954, 0.0872825608, 0.194376513),
    ],
    "squad_dev-0-1": [
        (".", 0.389585128, 0.140521348, 0.304227442),
        ("long mat very.", 0.313019543, 0.0764807016, 0.149451315),
        ("long film", 0.297395328, 0.0764764175, 0.0982522964),
    ],
    "squad_dev-1-0": [
        ("dog music film.", 0.342108594, 0.138457373, 0.149637833),
        ("dog", 0.338136059, 0.138457373, 0.137957975),
        ("dog music film", 0.319755347, 0.138457373, 0.0820657834),
    ],
    "squad_dev-2-0": [(".", 1.0, 0.121966101, 0.194662675)],
    "squad_dev-2-1": [("empty", 1.0, 0.0, 0.0)],
}
SQUAD_SCORES = {"exact_match": 0.0, "f1": 6.66666667}
SQUAD_V2_PREDICTIONS = {
    "squad_dev_v2-0-0": "good long.",
    "squad_dev_v2-1-0": "dog",
    "squad_dev_v2-1-1": "",
    "squad_dev_v2-2-0": "dog",
    "squad_dev_v2-2-1": "dog",
}
SQUAD_V2_NULL_ODDS = {
    "squad_dev_v2-0-0": -0.471011858,
    "squad_dev_v2-1-0": -0.374469575,
    "squad_dev_v2-1-1": -0.0687530935,
    "squad_dev_v2-2-0": -0.374513645,
    "squad_dev_v2-2-1": -0.374555632,
}
SQUAD_V2_SCORES = {
    "exact": 20.0,
    "f1": 33.3333333,
    "total": 5,
    "HasAns_exact": 0.0,
    "HasAns_f1": 33.3333333,
    "HasAns_total": 2,
    "NoAns_exact": 33.3333333,
    "NoAns_f1": 33.3333333,
    "NoAns_total": 3,
    "best_exact": 60.0,
    "best_exact_thresh": 0.0,
    "best_f1": 60.0,
    "best_f1_thresh": 0.0,
}
# test_predictions.txt and eval_results changed on purpose when each
# embedding table got its own initializer (issue 41), and again when the
# initializer's draw and the train loop's Grappler passes changed (issue 41).
NER_PINS = {
    "train.tf_record": "14ad531945d531bc",
    "eval.tf_record": "63a1b5376f87d6f1",
    "predict.tf_record": "dec83b2a70a036c3",
    "test_predictions.txt": "39280a2b64344220",
    "checkpoint": "74fb61719df51328",
}
# Measured spread over the same four settings, re-measured for the new draw
# and Grappler passes (issue 41): the losses 5.5e-9 (4.6e-9 relative), the
# entity scores none. The smallest margin between a word's two best tags
# (eval and test) is 1.2e-3; it moved by 3e-8.
NER_EVAL_RESULTS = {
    "eval_loss": 1.18348637,
    "f1": 0.5,
    "f1_ANI": 0.0,
    "f1_OBJ": 0.666666667,
    "global_step": 8,
    "loss": 1.18348637,
    "precision": 0.636363636,
    "precision_ANI": 0.0,
    "precision_OBJ": 0.636363636,
    "recall": 0.411764706,
    "recall_ANI": 0.0,
    "recall_OBJ": 0.7,
}
MULTIPLE_CHOICE_PINS = {
    "train.tf_record": "8738b53a26eab863",
    "eval.tf_record": "a2c84db0dc0a7027",
    "predict.tf_record": "928c9b27d32a599d",
    "checkpoint": "202ca4dce902a659",
}
# eval_results and test_results.tsv changed on purpose when each embedding
# table got its own initializer (issue 41), and again when the initializer's
# draw and the train loop's Grappler passes changed (issue 41).
# Measured spread over the same four settings, re-measured then: the losses
# 7.4e-9 (5.4e-9 relative), eval_accuracy none, the test probabilities 2e-8
# (8.1e-8 relative). The smallest margin between an eval example's two best
# choices (logits) is 5.6e-3; it moved by 3.4e-8.
MULTIPLE_CHOICE_EVAL_RESULTS = {
    "eval_accuracy": 0.714285714,
    "eval_loss": 1.36745471,
    "global_step": 24,
    "loss": 1.36745471,
}
MULTIPLE_CHOICE_TEST_PROBABILITIES = [
    [0.24292761, 0.25670758, 0.25033268, 0.25003213],
    [0.24593878, 0.24094185, 0.26027983, 0.25283954],
    [0.24630965, 0.25151643, 0.2458375, 0.25633642],
    [0.2493551, 0.24927561, 0.24193475, 0.25943455],
    [0.24563019, 0.25152785, 0.2511329, 0.25170907],
]
FEATURE_TOKENS = [
    ["[CLS]", "the", "cat", "sat", "on", "the", "mat", ".", "[SEP]"],
    ["[CLS]", "a", "dog", "[SEP]", "the", "cat", "##s", "ran", "[SEP]"],
    ["[CLS]", "[UNK]", "sat", ".", "[SEP]"],
    ["[CLS]", "the", "very", "long", "film", "was", "a", "very", "dull", "story", "on", "[SEP]"],
]
# The features changed on purpose when each embedding table got its own
# initializer (issue 41), and again when the initializer's draw changed
# (issue 41).
# Measured spread over the same four settings, re-measured then: the written
# values are rounded to 6 decimals, and up to 19 of the 2240 values were one
# rounding step (1e-6) apart between two settings (none between default and
# avx2; no [CLS] value pinned); the weighted sums 9.5e-7 (4.5e-7 relative).
# The tokens are the same.
# `_weighted_sums` of each line's layers -1 and 0.
FEATURE_WEIGHTED_SUMS = [
    [0.966221561, 0.930997901],
    [-4.19057708, -4.25839510],
    [3.35411965, 3.22429958],
    [-22.0023922, -22.0761358],
]
# The first 4 values of each line's [CLS] vector in layer -1, as written (6 decimals).
FEATURE_CLS_VALUES = [
    [2.180321, -0.190687, 0.37331, 1.326672],
    [2.181848, -0.183796, 0.366537, 1.324453],
    [2.177807, -0.186628, 0.372782, 1.334996],
    [2.184234, -0.190967, 0.373267, 1.330186],
]
# Tolerances: 40x the largest relative spread measured, for AVX-512 kernels
# (which an AVX2-only CPU cannot run) and a trajectory that drifts over
# training; still of the order of what a change of arithmetic moves (issue
# 13's fused AdamW: losses by up to 3e-7 relative, probabilities by up to
# 7e-7). Re-measured when the initializer's draw and the train loop's
# Grappler passes changed (issue 41): 34x the losses' 2.9e-8 relative, 10x
# the probabilities' 1e-7.
EVAL_RESULTS_RTOL = 1e-6
PROBABILITY_ATOL = 1e-6
# The same for the quantities of their own scale: SQuAD's logits and null odds
# (45x the end logits' 1.1e-6; since issue 41's embedding initializers, 53x
# the start logits' 9.5e-7; since its new draw and Grappler passes, 44x the
# end logits' 1.14e-6), the features as written (40x one rounding step) and
# their weighted sums (40x 2.6e-6; since issue 41's embedding initializers,
# 59x 1.7e-6; since its new draw, 105x 9.5e-7).
LOGIT_ATOL = 5e-5
FEATURE_ATOL = 4e-5
FEATURE_SUM_ATOL = 1e-4
# Predicted tags, answer texts and choices are pinned exactly (or by digest)
# only where the logits they come from are this far from a tie: 10x
# LOGIT_ATOL, 450x the largest logit spread measured (530x after issue 41's
# embedding initializers, 440x after its new draw and Grappler passes); the
# margins themselves moved by 4.3e-7 at most (re-measured then; the smallest
# is NER's 1.2e-3).
MIN_MARGIN = 5e-4
