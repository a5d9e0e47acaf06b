"""run_ner: the CoNLL reader, sub-token alignment and windows, conlleval's
entity scores (against seqeval), and end to end on a small learnable set,
fine-tuned and feature-based, with the SavedModel served in a fresh process."""

import json
import os
import random
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import tensorflow as tf
from seqeval import metrics as seqeval_metrics
from shared import random_inputs, tiny_model_files

from bert_tf.checkpoints import save_tf1_checkpoint
from bert_tf.config import BertConfig
from bert_tf.data import tagging
from bert_tf.errors import InputError
from bert_tf.export import tagging as export_tagging
from bert_tf.metrics.entities import entity_scores
from bert_tf.modeling import BertEncoder
from bert_tf.modeling.tagging import BertFeatureTagger, BertTokenClassifier
from bert_tf.options import build
from bert_tf.tasks.ner import TaggingObjective, run_ner
from bert_tf.tasks.ner_options import NerOptions
from bert_tf.text import tokenization
from bert_tf.text.graph_tokenizer import BertTokenizer
from bert_tf.text.packing import pack_example_windows
from bert_tf.text.tags import chunks

CONLL = """-DOCSTART- -X- -X- O

EU NNP B-NP B-ORG
rejects VBZ B-VP O
German JJ B-NP B-MISC

Peter NNP B-NP B-PER
Blackburn NNP I-NP I-PER

-DOCSTART- -X- -X- O

BRUSSELS NNP B-NP B-LOC
"""

# A learnable set: names from fixed lists are PER (first name, maybe a
# surname) and LOC; everything else is O. Tags are BIO.
FIRST = ["Alice", "Bruno", "Carla", "Dmitri", "Elena", "Farid"]
LAST = ["Smith", "Jones", "Novak", "Costa"]
PLACES = ["Paris", "Berlin", "Lagos", "Lima", "Oslo", "Quito"]
TEMPLATES = [
    "{P} met {P} in {L} .",
    "{P} went to {L} today .",
    "the team from {L} visited {L} .",
    "a big city is {L} , said {P} .",
]
FILLER = sorted({w for t in TEMPLATES for w in t.split() if "{" not in w})
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *FILLER, *FIRST, *LAST, *PLACES, "##ville"]
MAX_SEQ_LENGTH = 24


def fill(template, rng):
    """(words, BIO tags) of a template with random names."""
    words, tags = [], []
    for slot in template.split():
        if slot == "{P}":
            names = [rng.choice(FIRST)] + ([rng.choice(LAST)] if rng.random() < 0.5 else [])
            words += names
            tags += ["B-PER"] + ["I-PER"] * (len(names) - 1)
        elif slot == "{L}":
            words.append(rng.choice(PLACES))
            tags.append("B-LOC")
        else:
            words.append(slot)
            tags.append("O")
    return words, tags


def synthetic_sentences(num, seed, long_every=0):
    """Sentences; every `long_every`-th one joins five templates (longer
    than one window of MAX_SEQ_LENGTH)."""
    rng = random.Random(seed)
    sentences = []
    for i in range(num):
        parts = 5 if long_every and i % long_every == long_every - 1 else 1
        words, tags = [], []
        for _ in range(parts):
            w, t = fill(rng.choice(TEMPLATES), rng)
            words += w
            tags += t
        sentences.append((words, tags))
    return sentences


def write_conll(path, sentences, per_document=4):
    lines = []
    for i, (words, tags) in enumerate(sentences):
        if i % per_document == 0:
            lines += ["-DOCSTART- -X- -X- O", ""]
        lines += [f"{w} NN O {t}" for w, t in zip(words, tags)] + [""]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.fixture(scope="module")
def model_files(tmp_path_factory):
    return tiny_model_files(
        str(tmp_path_factory.mktemp("ner_model")),
        VOCAB,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )


# -- reader --------------------------------------------------------------------


def test_reader_documents_sentences_and_labels(tmp_path):
    path = tmp_path / "train.txt"
    path.write_text(CONLL)
    documents = tagging.read_conll(str(path))
    assert [[s.words for s in d] for d in documents] == [
        [("EU", "rejects", "German"), ("Peter", "Blackburn")],
        [("BRUSSELS",)],
    ]
    assert documents[0][1].tags == ("B-PER", "I-PER")
    assert documents[0][1].line_numbers == (7, 8)
    assert tagging.label_list(documents) == ["O", "B-LOC", "B-MISC", "B-ORG", "B-PER", "I-PER"]
    assert tagging.parse_labels("O, B-PER,I-PER") == ["O", "B-PER", "I-PER"]
    with pytest.raises(InputError, match="--labels"):
        tagging.parse_labels("O,O")


def test_reader_names_bad_rows_and_unknown_tags(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text(CONLL.replace("rejects VBZ B-VP O", "rejects VBZ O"))
    with pytest.raises(InputError, match=r"bad.txt:4: 3 columns, expected 4"):
        tagging.read_conll(str(path))
    path.write_text(CONLL)
    with pytest.raises(InputError, match=r"bad.txt:12: tag 'B-LOC' is not one of the labels"):
        tagging.check_tags(
            str(path), tagging.read_conll(str(path)), ["O", "B-ORG", "B-MISC", "B-PER", "I-PER"]
        )


# -- alignment and windows -----------------------------------------------------------


@pytest.fixture(scope="module")
def tokenizer(model_files):
    return tokenization.FullTokenizer(model_files[0], do_lower_case=False)


def labelled_words(windows):
    return [word for _, labelled in windows for _, word in labelled]


def test_first_sub_token_gets_the_label(tokenizer):
    words = ("Parisville", "met", "Zzyzx", "Alice")
    ids, firsts = tagging.word_pieces(words, tokenizer)
    assert tokenizer.convert_ids_to_tokens(ids) == ["Paris", "##ville", "met", "[UNK]", "Alice"]
    assert firsts == [0, 2, 3, 4]
    sentence = tagging.Sentence(words, ("B-LOC", "O", "B-PER", "B-PER"), (1, 2, 3, 4))
    [(_, windows)] = tagging.document_windows([sentence], tokenizer, 16, False)
    [(packed, labelled)] = windows
    record = tagging.window_record(packed, labelled, [1, 0, 2, 2], 7, 16)
    # [CLS] Paris ##ville met [UNK] Alice [SEP]: one label per word, on its first piece.
    assert record["label_ids"][:8] == [-1, 1, -1, 0, 2, 2, -1, -1]
    assert record["word_ids"][:8] == [-1, 0, -1, 1, 2, 3, -1, -1]
    batch = {key: np.array([record[key]]) for key in ("word_ids", "label_ids")}
    batch.update(
        sentence_index=np.array([0]),
        is_real_example=np.array([1]),
        predicted=np.where(batch["word_ids"] >= 0, batch["label_ids"], 5),
    )
    assert tagging.word_predictions([sentence], [batch]) == [[1, 0, 2, 2]]
    del batch["predicted"]
    batch["predicted"] = np.zeros_like(batch["word_ids"])
    batch["word_ids"] = np.where(batch["word_ids"] == 3, -1, batch["word_ids"])
    with pytest.raises(InputError, match="word 3 was not predicted"):
        tagging.word_predictions([sentence], [batch])


def test_long_sentence_windows_label_every_word_once(tokenizer):
    words = tuple("Parisville met Alice Smith in Lima .".split() * 6)  # 48 sub-tokens
    sentence = tagging.Sentence(words, ("O",) * len(words), tuple(range(len(words))))
    [(_, windows)] = tagging.document_windows([sentence], tokenizer, MAX_SEQ_LENGTH, False)
    assert len(windows) > 2
    assert sorted(labelled_words(windows)) == list(range(len(words)))
    for packed, labelled in windows:
        for position, word in labelled:
            piece = tokenizer.convert_ids_to_tokens([packed["input_word_ids"][position]])[0]
            assert words[word].startswith(piece)


def test_document_context_fills_the_window_around_the_sentence(tokenizer):
    document = [
        tagging.Sentence((w, "a"), ("B-LOC", "O"), (1, 2))
        for w in [
            "Paris",
            "Lima",
            "Oslo",
            "Quito",
            "Lagos",
            "Berlin",
            "Alice",
            "Bruno",
            "Carla",
            "Elena",
        ]
    ]
    results = list(tagging.document_windows(document, tokenizer, 8, True))
    _, [(packed, labelled)] = results[5]  # "Berlin a", centred in 6 context tokens
    assert tokenizer.convert_ids_to_tokens(packed["input_word_ids"]) == [
        "[CLS]",
        "Lagos",
        "a",
        "Berlin",
        "a",
        "Alice",
        "a",
        "[SEP]",
    ]
    assert labelled == [(3, 0), (4, 1)]
    _, [(packed, labelled)] = results[0]  # at the document's start: context on the right
    assert tokenizer.convert_ids_to_tokens(packed["input_word_ids"])[1:4] == ["Paris", "a", "Lima"]
    assert labelled == [(1, 0), (2, 1)]


def test_graph_windows_match_the_feature_files(model_files, tokenizer):
    """The export's in-graph packing and word positions equal the records'."""
    texts = [
        "Parisville met Zzyzx",
        "Alice  Smith",
        " ".join("Parisville met Alice Smith in Lima .".split() * 6),
    ]
    graph_tokenizer = BertTokenizer(model_files[0], do_lower_case=False)
    word_starts, _, ids, is_first, token_words = export_tagging.sentence_pieces(
        graph_tokenizer, tf.constant(texts)
    )
    inputs, example_ids, starts = pack_example_windows(
        [ids],
        MAX_SEQ_LENGTH,
        graph_tokenizer.cls_id,
        graph_tokenizer.sep_id,
        stride=tagging.window_stride(MAX_SEQ_LENGTH),
    )
    chosen, token = export_tagging.labelled_positions(
        inputs["input_mask"], example_ids, starts, tf.cast(ids.row_starts(), tf.int32), is_first
    )
    word_ids = np.where(chosen, tf.gather(token_words, tf.where(chosen, token, 0)), -1)
    word_ids -= np.where(chosen, word_starts.row_starts().numpy()[example_ids][:, None], 0)
    expected_ids, expected_words = [], []
    for text in texts:
        sentence = tagging.Sentence(tuple(text.split()), (), ())
        [(_, windows)] = tagging.document_windows([sentence], tokenizer, MAX_SEQ_LENGTH, False)
        for packed, labelled in windows:
            record = tagging.window_record(
                packed, labelled, [0] * len(sentence.words), 0, MAX_SEQ_LENGTH
            )
            expected_ids.append(record["input_ids"])
            expected_words.append(record["word_ids"])
    assert len(expected_ids) > len(texts)
    assert inputs["input_word_ids"].numpy().tolist() == expected_ids
    assert word_ids.tolist() == expected_words


# -- conlleval scores ------------------------------------------------------------------


def seqeval_scores(gold, predicted):
    report = seqeval_metrics.classification_report(
        gold, predicted, output_dict=True, zero_division=0
    )
    return (
        seqeval_metrics.precision_score(gold, predicted),
        seqeval_metrics.recall_score(gold, predicted),
        seqeval_metrics.f1_score(gold, predicted),
        {
            name: (r["precision"], r["recall"], r["f1-score"])
            for name, r in report.items()
            if "avg" not in name
        },
    )


def assert_same_as_seqeval(gold, predicted):
    overall, by_type = entity_scores(gold, predicted)
    precision, recall, f1, types = seqeval_scores(gold, predicted)
    assert (overall.precision, overall.recall, overall.f1) == pytest.approx(
        (precision, recall, f1), abs=1e-12
    )
    for name, scores in by_type.items():
        if scores.num_gold:  # seqeval reports the gold types
            assert (scores.precision, scores.recall, scores.f1) == pytest.approx(
                types[name], abs=1e-12
            ), name


def test_iob1_chunks_as_conlleval():
    # IOB1: I- after O or after another type starts a chunk; B- only splits same-type neighbours.
    tags = ["I-PER", "I-PER", "B-PER", "O", "I-LOC", "I-ORG", "I-ORG", "O", "B-LOC"]
    assert chunks(tags) == {
        ("PER", 0, 1),
        ("PER", 2, 2),
        ("LOC", 4, 4),
        ("ORG", 5, 6),
        ("LOC", 8, 8),
    }
    gold = [tags, ["I-MISC", "O"]]
    predicted = [
        ["I-PER", "I-PER", "I-PER", "O", "I-LOC", "I-LOC", "I-ORG", "O", "I-LOC"],
        ["I-MISC", "I-MISC"],
    ]
    overall, by_type = entity_scores(gold, predicted)
    assert (overall.num_gold, overall.num_predicted, overall.num_correct) == (6, 5, 1)
    assert by_type["LOC"].num_correct == 1 and by_type["PER"].num_correct == 0
    assert_same_as_seqeval(gold, predicted)


def test_bio_and_random_tags_match_seqeval():
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["O", "B-ORG", "I-ORG", "I-ORG"]]
    predicted = [["B-PER", "I-PER", "O", "B-ORG"], ["O", "B-ORG", "I-ORG", "O"]]
    assert_same_as_seqeval(gold, predicted)
    rng = random.Random(0)
    tags = ["O", "O", "B-PER", "I-PER", "B-LOC", "I-LOC", "I-MISC"]
    for _ in range(20):
        lengths = [rng.randint(1, 12) for _ in range(5)]
        gold = [[rng.choice(tags) for _ in range(n)] for n in lengths]
        predicted = [[t if rng.random() < 0.7 else rng.choice(tags) for t in s] for s in gold]
        assert_same_as_seqeval(gold, predicted)


def test_bad_tags_are_refused():
    with pytest.raises(InputError, match="'PER' is neither O nor"):
        entity_scores([["PER"]], [["O"]])
    with pytest.raises(InputError, match="^2 gold sentences but 1 predicted$"):
        entity_scores([["O"], ["O"]], [["O"]])
    with pytest.raises(InputError, match="^sentence 1: 2 gold tags but 1 predicted$"):
        entity_scores([["O"], ["O", "O"]], [["O"], ["O"]])


def test_entity_types_may_contain_hyphens():
    # The prefix ends at the first "-", the type is the rest (as seqeval reads it).
    assert chunks(["B-ORG-POL", "I-ORG-POL", "O", "I-X-Y"]) == {("ORG-POL", 0, 1), ("X-Y", 3, 3)}
    gold = [["B-ORG-POL", "I-ORG-POL", "O", "B-X-Y"], ["B-X-Y", "O"]]
    predicted = [["B-ORG-POL", "I-ORG-POL", "O", "O"], ["B-X-Y", "I-X-Y"]]
    assert_same_as_seqeval(gold, predicted)


def test_a_type_only_predicted_scores_zero_as_conlleval():
    # conlleval: precision, recall and F1 are 0 where their denominator is 0.
    overall, by_type = entity_scores([["B-LOC", "O", "O"]], [["B-LOC", "B-PER", "I-PER"]])
    assert (by_type["PER"].num_gold, by_type["PER"].num_predicted) == (0, 1)
    assert (by_type["PER"].precision, by_type["PER"].recall, by_type["PER"].f1) == (0.0, 0.0, 0.0)
    assert (overall.precision, overall.recall) == (0.5, 1.0)
    overall, _ = entity_scores([["O", "O"]], [["B-PER", "O"]])
    assert (overall.precision, overall.recall, overall.f1) == (0.0, 0.0, 0.0)


# -- the training loss -------------------------------------------------------------


def test_loss_is_the_mean_cross_entropy_over_labelled_positions(tiny_config):
    """Only a word's first sub-token in its own window's span carries a label
    (the others, [CLS], [SEP] and padding are -1); the loss averages over
    those, so that it is the mean cross-entropy per word whatever the
    windows' lengths."""
    num_labels = 5
    inputs = random_inputs(tiny_config, batch=4, seq=10, seed=3, lengths=[10, 7, 4, 0])
    rng = np.random.default_rng(4)
    labels = rng.integers(0, num_labels, (4, 10)).astype(np.int32)
    unlabelled = np.zeros((4, 10), bool)
    unlabelled[:, 0] = True  # [CLS]
    unlabelled[0, [2, 3, 9]] = True  # ## pieces and [SEP]
    unlabelled[1, [1, 2, 5, 6]] = True  # context outside the sentence, [SEP]
    unlabelled[2, 3] = True  # [SEP]
    unlabelled |= inputs["input_mask"] == 0  # padding, and a padding window
    labels[unlabelled] = -1
    assert (labels >= 0).sum() < inputs["input_mask"].sum()
    features = {**inputs, "label_ids": labels}
    model = BertTokenClassifier(tiny_config, num_labels)
    logits = model(inputs, training=False)

    task = TaggingObjective()
    totals = {k: tf.cast(v, tf.float32) for k, v in task.totals(features).items()}
    loss = float(task.loss(logits, features, totals)["loss"])

    shifted = np.asarray(logits, np.float64) - np.max(logits, axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    gold = np.take_along_axis(log_probs, np.maximum(labels, 0)[..., None], axis=-1)[..., 0]
    np.testing.assert_allclose(loss, -gold[labels >= 0].mean(), rtol=1e-5)


# -- end to end --------------------------------------------------------------------


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("conll")
    write_conll(root / "train.txt", synthetic_sentences(400, seed=1, long_every=40))
    write_conll(root / "valid.txt", synthetic_sentences(40, seed=2, long_every=10))
    write_conll(root / "test.txt", synthetic_sentences(30, seed=3, long_every=10))
    return str(root)


def ner_options(model_files, data_dir, output_dir, seed=3, **kwargs):
    vocab, config = model_files
    settings = dict(
        max_seq_length=MAX_SEQ_LENGTH,
        train_batch_size=16,
        eval_batch_size=8,
        predict_batch_size=8,
        learning_rate=3e-3,
        num_train_epochs=4.0,
        do_train=True,
        do_eval=True,
        seed=seed,
        steps_per_loop=100,
    )
    return build(
        NerOptions,
        data_dir=data_dir,
        vocab_file=vocab,
        bert_config_file=config,
        output_dir=output_dir,
        **{**settings, **kwargs},
    )


SERVE = textwrap.dedent("""
    import json, sys
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (the tokenizer's ops)
    assert "bert_tf" not in sys.modules
    serve = tf.saved_model.load(sys.argv[1]).signatures["serving_default"]
    out = serve(text=tf.constant(json.loads(sys.stdin.read())))
    print(json.dumps({k: v.numpy().tolist() for k, v in out.items()},
                     default=lambda b: b.decode()))
""")


def served(export_dir, texts):
    result = subprocess.run(
        [sys.executable, "-c", SERVE, export_dir],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"},
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def predicted_sentences(path):
    """(words, predicted tags) per sentence of a test_predictions.txt."""
    sentences, words, tags = [], [], []
    for line in open(path).read().split("\n"):
        fields = line.split()
        if not fields or fields[0] == "-DOCSTART-":
            if words:
                sentences.append((words, tags))
            words, tags = [], []
            continue
        assert len(fields) == 5, line
        words.append(fields[0])
        tags.append(fields[-1])
    return sentences


@pytest.mark.learning
def test_fine_tuned_ner_end_to_end(model_files, data_dir, tmp_path, calibration):
    output_dir, export_dir = str(tmp_path / "out"), str(tmp_path / "export")
    results = run_ner(
        ner_options(
            model_files,
            data_dir,
            output_dir,
            calibration.seed(3),
            do_predict=True,
            export_dir=export_dir,
        )
    )
    calibration.record(f1=results["f1"], f1_PER=results["f1_PER"], f1_LOC=results["f1_LOC"])
    # Measured (tests/calibrate.py, seeds +0..+4 x CPU settings): 1.0 everywhere.
    assert results["f1"] > 0.95 and results["f1_PER"] > 0.9 and results["f1_LOC"] > 0.9, results
    stored = dict(
        line.split(" = ")
        for line in open(os.path.join(output_dir, "eval_results.txt")).read().splitlines()
    )
    assert float(stored["f1"]) == results["f1"] and stored["loss"] == stored["eval_loss"]
    # Every test word has exactly one prediction, long sentences too, and the
    # file scores as the gold tags say (conlleval columns: ... gold predicted).
    test = tagging.sentences_of(tagging.read_conll(os.path.join(data_dir, "test.txt")))
    predicted = predicted_sentences(os.path.join(output_dir, "test_predictions.txt"))
    assert [words for words, _ in predicted] == [list(s.words) for s in test]
    assert max(len(s.words) for s in test) > MAX_SEQ_LENGTH
    overall, _ = entity_scores([list(s.tags) for s in test], [tags for _, tags in predicted])
    assert overall.f1 > 0.95
    # The SavedModel, in a process without bert_tf, tags raw text the same way.
    texts = [" ".join(words) for words, _ in predicted]
    outputs = served(export_dir, texts)
    for text, (words, tags), row_tags, starts, ends in zip(
        texts, predicted, outputs["tags"], outputs["word_starts"], outputs["word_ends"]
    ):
        assert row_tags[: len(words)] == tags and set(row_tags[len(words) :]) <= {""}
        assert [text[s:e] for s, e in zip(starts, ends) if s >= 0] == words


@pytest.mark.learning
def test_document_context_ner_learns(model_files, data_dir, tmp_path, calibration):
    results = run_ner(
        ner_options(
            model_files, data_dir, str(tmp_path / "doc"), calibration.seed(3), document_context=True
        )
    )
    calibration.record(f1=results["f1"])
    assert results["f1"] > 0.95, results  # 1.0 on every seed and CPU setting measured


@pytest.mark.learning
def test_feature_based_ner_learns(model_files, data_dir, tmp_path, calibration):
    config = BertConfig.from_json_file(model_files[1])
    tagger = BertFeatureTagger(config, 5, layers=(-1, -2), combine="sum", lstm_units=8)
    assert not any(
        v.path in {w.path for w in tagger.encoder.weights} for v in tagger.trainable_variables
    )
    assert tagger.features(
        {"input_word_ids": tf.ones([2, 6], tf.int32), "input_mask": tf.ones([2, 6], tf.int32)}
    ).shape == (2, 6, 32)
    results = run_ner(
        ner_options(
            model_files,
            data_dir,
            str(tmp_path / "fb"),
            calibration.seed(3),
            feature_based=True,
            layers="-1,-2",
            lstm_units=32,
            learning_rate=1e-2,
            num_train_epochs=8.0,
        )
    )
    calibration.record(f1=results["f1"])
    # Measured (tests/calibrate.py, seeds +0..+4 x CPU settings): F1 0.948 to
    # 1.0; chance is about 0.
    assert results["f1"] > 0.85, results


def test_bad_flags_are_named(model_files, data_dir, tmp_path):
    # Eval / predict without training need weights: any checkpoint will do,
    # each case stops before loading it.
    trained_checkpoint = save_tf1_checkpoint(
        BertEncoder(BertConfig.from_json_file(model_files[1])), str(tmp_path / "ckpt" / "m")
    )
    with pytest.raises(InputError, match="at least one of --do_train"):
        run_ner(
            ner_options(model_files, data_dir, str(tmp_path / "x"), do_train=False, do_eval=False)
        )
    with pytest.raises(InputError, match="--layers='a'"):
        run_ner(ner_options(model_files, data_dir, str(tmp_path / "x"), layers="a"))
    with pytest.raises(InputError, match="no train.txt to take the labels from: pass --labels"):
        run_ner(
            ner_options(
                model_files,
                str(tmp_path),
                str(tmp_path / "x"),
                do_train=False,
                init_checkpoint=trained_checkpoint,
            )
        )
    with pytest.raises(InputError, match="has no test.txt"):
        run_ner(
            ner_options(
                model_files,
                str(tmp_path),
                str(tmp_path / "x"),
                do_train=False,
                do_eval=False,
                do_predict=True,
                labels="O,B-PER",
                init_checkpoint=trained_checkpoint,
            )
        )


def test_the_casing_is_the_models_and_mostly_unknown_tokens_warn(tmp_path, caplog):
    # An uncased vocab: a folder whose tokenizer_config.json says so is
    # lower-cased (run_ner.py's own fallback is cased); one that says nothing
    # keeps the names' capitals, which become [UNK], and the run says so.
    uncased = [t if t.startswith("[") else t.lower() for t in VOCAB]
    data = tmp_path / "data"
    data.mkdir()
    write_conll(data / "dev.txt", synthetic_sentences(8, seed=5))
    warnings = {}
    for name, says in (("says", True), ("silent", False)):
        folder = tmp_path / name
        folder.mkdir()
        _, config = tiny_model_files(str(folder), uncased)
        if says:
            (folder / "tokenizer_config.json").write_text('{"do_lower_case": true}')
        checkpoint = save_tf1_checkpoint(
            BertEncoder(BertConfig.from_json_file(config)), str(folder / "bert_model.ckpt")
        )
        caplog.clear()
        run_ner(
            build(
                NerOptions,
                data_dir=str(data),
                init_checkpoint=checkpoint,
                output_dir=str(tmp_path / f"out_{name}"),
                do_eval=True,
                labels="O,B-PER,I-PER,B-LOC",
                max_seq_length=MAX_SEQ_LENGTH,
            )
        )
        warnings[name] = [r.getMessage() for r in caplog.records if "[UNK]" in r.getMessage()]
    assert warnings["says"] == []
    (warning,) = warnings["silent"]
    assert f"[UNK] with the vocab {tmp_path}/silent/vocab.txt and do_lower_case=False" in warning


@pytest.mark.learning
def test_crf_ner_end_to_end(model_files, data_dir, tmp_path, calibration):
    """--use_crf: learns, saves the transitions (TF1 names `crf/...`) that a
    rerun restores, and the SavedModel decodes with them (Viterbi) as
    test_predictions.txt does."""
    output_dir, export_dir = str(tmp_path / "out"), str(tmp_path / "export")
    options = dict(use_crf=True, do_predict=True, num_train_epochs=2.0)
    results = run_ner(
        ner_options(
            model_files,
            data_dir,
            output_dir,
            calibration.seed(3),
            export_dir=export_dir,
            **options,
        )
    )
    calibration.record(f1=results["f1"], eval_loss=results["eval_loss"])
    # Measured (tests/calibrate.py, seeds +0..+3 x default, avx2): F1 1.0,
    # eval_loss 0.108 to 0.124 (NLL per word; chance is about ln 4 = 1.39).
    assert results["f1"] > 0.95 and results["eval_loss"] < 0.3, results
    prefix = tf.train.latest_checkpoint(output_dir)
    transitions = tf.train.load_checkpoint(prefix).get_tensor("crf/transitions")
    assert transitions.shape == (4, 4) and np.abs(transitions).max() > 0.05
    # Evaluating again restores the checkpoint, transitions included.
    rerun = run_ner(ner_options(model_files, data_dir, output_dir, do_train=False, use_crf=True))
    assert rerun["f1"] == results["f1"]
    np.testing.assert_allclose(rerun["eval_loss"], results["eval_loss"], rtol=1e-5)
    predicted = predicted_sentences(os.path.join(output_dir, "test_predictions.txt"))
    texts = [" ".join(words) for words, _ in predicted]
    export = tf.saved_model.load(export_dir)
    served_tags = export.signatures["serving_default"](text=tf.constant(texts))["tags"].numpy()
    for (words, tags), row_tags in zip(predicted, served_tags):
        assert [t.decode() for t in row_tags[: len(words)]] == tags
    # It decodes with its CRF: forced transitions force the tags.
    crf_variables = {v.name: v for v in export.variables if v.name.startswith("crf/")}
    transitions, start = cycle_transitions()
    crf_variables["crf/transitions:0"].assign(transitions)
    crf_variables["crf/start_transitions:0"].assign(start)
    served_tags = export.signatures["serving_default"](text=tf.constant(texts[:2]))["tags"]
    for (words, _), row_tags in zip(predicted, served_tags.numpy()):
        assert [t.decode() for t in row_tags[: len(words)]] == [
            ["O", "B-LOC", "B-PER", "I-PER"][i % 4] for i in range(len(words))
        ]


def test_crf_taggers_name_their_transitions_and_start_from_a_checkpoint_without(
    model_files, tmp_path
):
    """`crf/transitions`, `crf/start_transitions`, `crf/end_transitions` in
    the TF1 map; a checkpoint without them (an --init_checkpoint) loads with
    the CRF left initialised (zeros)."""
    from bert_tf.checkpoints import load_checkpoint, tf1_variable_map

    config = BertConfig.from_json_file(model_files[1])
    plain = BertTokenClassifier(config, 5)
    prefix = save_tf1_checkpoint(plain, str(tmp_path / "plain" / "model.ckpt"))
    crf_names = {"crf/transitions", "crf/start_transitions", "crf/end_transitions"}
    for tagger in (
        BertTokenClassifier(config, 5, use_crf=True),
        BertFeatureTagger(config, 5, layers=(-1,), lstm_units=4, use_crf=True),
    ):
        assert crf_names <= set(tf1_variable_map(tagger))
        report = load_checkpoint(tagger, prefix, strict=False)
        assert crf_names <= set(report.left_initialised)
        assert not np.any(tagger.crf.transitions.numpy())
    np.testing.assert_array_equal(
        tagger.encoder.embeddings.word_embeddings.numpy(),
        plain.encoder.embeddings.word_embeddings.numpy(),
    )


def cycle_transitions():
    """(transitions, start) that allow only tag 0 first, then 0 -> 1 -> 2 -> 3 -> 0."""
    allowed = np.roll(np.eye(4), 1, axis=1)
    return np.where(allowed > 0, 0.0, -1e4), np.array([0.0, -1e4, -1e4, -1e4])


def test_crf_tagger_decodes_its_viterbi_path(model_files):
    """With `cycle_transitions`, `tag_sentences` and `decode_tags` give that
    cycle over the words of each window, whatever the logits (the argmax
    would not)."""
    from bert_tf.export.common import model_call
    from bert_tf.modeling.tagging import decode_tags

    labels = ["O", "B-PER", "I-PER", "B-LOC"]
    model = BertTokenClassifier(BertConfig.from_json_file(model_files[1]), 4, use_crf=True)
    transitions, start = cycle_transitions()
    model.crf.transitions.assign(transitions)
    model.crf.start_transitions.assign(start)
    texts = ["Parisville met Alice Smith in Lima .", "Zzyzx Oslo"]
    cycle = [[labels[i % 4] for i in range(len(t.split()))] for t in texts]
    graph_tokenizer = BertTokenizer(model_files[0], do_lower_case=False)
    tags = {
        crf: export_tagging.tag_sentences(
            model_call(model), graph_tokenizer, labels, MAX_SEQ_LENGTH, tf.constant(texts), crf=crf
        )["tags"].numpy()
        for crf in (model.crf, None)
    }
    decoded = tags[model.crf]
    assert [[t.decode() for t in row[: len(c)]] for row, c in zip(decoded, cycle)] == cycle
    assert (tags[None] != decoded).any()
    inputs = random_inputs(model.config, batch=2, seq=6, seed=1, lengths=[6, 4])
    mask = np.array([[0, 1, 0, 1, 1, 0], [0, 1, 1, 0, 0, 0]], bool)
    decoded = decode_tags(model.crf, model(inputs), mask).numpy()
    np.testing.assert_array_equal(decoded, [[-1, 0, -1, 1, 2, -1], [-1, 0, 1, -1, -1, -1]])
