"""A span labeler and a token classifier fine-tuned by Keras on raw text
compute what run_squad.py and run_ner.py compute: the same windows (ids and
targets), the same loss, and from the Keras-trained weights the same
predictions and scores as the scripts' output files."""

import json
import os

import keras
import numpy as np
import pytest
import tensorflow as tf
from readme_blocks import block_in
from shared import minilm_dir, tiny_model_files, write_release

import bert_tf
from bert_tf import checkpoints
from bert_tf.data import features as feature_files
from bert_tf.data import tagging
from bert_tf.data.squad import features as squad_features
from bert_tf.errors import InputError
from bert_tf.modeling import span_text, tagging_text
from bert_tf.options import build
from bert_tf.tasks.ner import TaggingObjective, run_ner
from bert_tf.tasks.ner_options import NerOptions
from bert_tf.tasks.squad import SquadObjective, run_squad
from bert_tf.tasks.squad_options import SquadOptions

FILLER = ["the town is old .", "a bird sang .", "it was cold .", "the road is long ."]
CODES = ["amber", "birch", "cedar"]
WORDS = sorted({w for s in FILLER for w in s.split()} | set(CODES) | {"what", "code", "?"})
WORDS += ["北", "京", "上", "海", "在"]
SEQ = 24


def squad_questions(count, offset):
    """Questions "What is the code?" on contexts longer than one window
    (English, or Chinese without spaces) and their answers."""
    questions, contexts, texts, starts = [], [], [], []
    for i in range(count):
        code = CODES[(i + offset) % 3].capitalize()
        if i % 4 == 3:
            context = "北京在上海。" * 2 + f"The code is {code}."
        else:
            parts = [FILLER[(i + k) % 4].capitalize() for k in range(3)]
            parts.insert((i + offset) % 4, f"The code is {code}.")
            context = " ".join(parts)
        questions.append("What is the code?")
        contexts.append(context)
        texts.append(code)
        starts.append(context.index(code))
    return (questions, contexts), {"text": texts, "answer_start": starts}


def squad_file(path, x, y):
    paragraphs = [
        {
            "context": context,
            "qas": [{"id": str(i), "question": q, "answers": [{"text": t, "answer_start": s}]}],
        }
        for i, (q, context, t, s) in enumerate(zip(*x, y["text"], y["answer_start"]))
    ]
    path.write_text(json.dumps({"data": [{"paragraphs": paragraphs}]}), encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def model_files(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("raw_text_model"))
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]
    return tiny_model_files(root, tokens, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)


def preprocessor(model_files):
    return bert_tf.BertPreprocessor(
        bert_tf.BertTokenizer(model_files[0]), max_seq_length=SEQ, length_multiple=1
    )


def keras_release(model, folder):
    """The Keras model's weights as a TF1 checkpoint the scripts start from."""
    folder.mkdir()
    return checkpoints.save_tf1_checkpoint(model, str(folder / "model.ckpt"))


def records(path, schema, count):
    dataset = feature_files.make_dataset(path, schema, count, False, shard_by="records")
    return {k: v.numpy() for k, v in next(iter(dataset)).items()}


@pytest.mark.large
def test_span_labeler_on_raw_text_equals_run_squad(model_files, tmp_path):
    keras.utils.set_random_seed(1)
    config = bert_tf.BertConfig.from_json_file(model_files[1])
    settings = dict(doc_stride=6, max_query_length=6, n_best_size=5, max_answer_length=4)
    labeler = bert_tf.BertSpanLabeler(config, preprocessor=preprocessor(model_files), **settings)
    train_x, train_y = squad_questions(12, 0)
    dev_x, dev_y = squad_questions(8, 1)
    labeler.compile(learning_rate=1e-3)
    labeler.fit(train_x, train_y, batch_size=4, epochs=2, verbose=0)
    init = keras_release(labeler, tmp_path / "keras")

    # run_squad.py from the Keras weights: its training does not move them (learning rate
    # 1e-30, far below a float32 ulp of the weights; 0 is refused).
    output_dir = str(tmp_path / "run")
    scores = run_squad(
        build(
            SquadOptions,
            vocab_file=model_files[0],
            bert_config_file=model_files[1],
            init_checkpoint=init,
            output_dir=output_dir,
            train_file=squad_file(tmp_path / "train.json", train_x, train_y),
            predict_file=squad_file(tmp_path / "dev.json", dev_x, dev_y),
            do_train=True,
            do_predict=True,
            max_seq_length=SEQ,
            learning_rate=1e-30,
            num_train_epochs=1.0,
            seed=1,
            **settings,
        )
    )
    # The same windows: ids and answer positions.
    pre, answers = labeler.preprocessor, labeler.label_ids(train_y)
    windows = span_text.training_dataset(pre, labeler.settings, train_x, answers, 100)
    inputs, targets = next(iter(windows))
    schema = squad_features.squad_schema(SEQ, True)
    script = records(os.path.join(output_dir, "train.tf_record"), schema, len(inputs["input_mask"]))
    assert len(script["input_word_ids"]) > len(train_x[0])  # some contexts take two windows
    for name in ("input_word_ids", "input_mask", "input_type_ids"):
        np.testing.assert_array_equal(inputs[name], script[name])
    np.testing.assert_array_equal(targets["start_logits"], script["start_positions"])
    np.testing.assert_array_equal(targets["end_logits"], script["end_positions"])
    # The same loss: compile()'s over the raw text, the script's objective over its records.
    results = labeler.evaluate(dev_x, dev_y, verbose=0, return_dict=True)
    train_loss = labeler.evaluate(train_x, train_y, batch_size=100, verbose=0, return_dict=True)
    outputs = labeler(inputs, training=False)
    features = {k: tf.constant(script[k]) for k in ("start_positions", "end_positions")}
    objective = SquadObjective()
    expected = objective.loss(outputs, features, objective.totals(features))
    np.testing.assert_allclose(train_loss["loss"], float(expected["loss"]), rtol=1e-6)
    # The same answers and scores.
    answers = labeler.predict(dev_x, verbose=0)
    with open(os.path.join(output_dir, "predictions.json")) as f:
        assert [a["answer"] for a in answers] == list(json.load(f).values())
    with open(os.path.join(output_dir, "nbest_predictions.json")) as f:
        nbest = list(json.load(f).values())
    for answer, entries in zip(answers, nbest):
        assert [e["text"] for e in answer["nbest"]] == [e["text"] for e in entries]
        np.testing.assert_allclose(answer["probability"], entries[0]["probability"], rtol=1e-5)
    assert {k: results[k] for k in scores} == scores
    assert any(a["answer"] for a in answers)


def test_span_labeler_raw_text_errors_say_what_was_expected(model_files):
    config = bert_tf.BertConfig.from_json_file(model_files[1])
    labeler = bert_tf.BertSpanLabeler(config, preprocessor=preprocessor(model_files))
    x = (["What is the code?"], ["The code is Amber."])
    labeler.compile()
    with pytest.raises(InputError, match=r"answer_start 3 of question 0 does not point at its "):
        labeler.fit(x, {"text": ["Amber"], "answer_start": [3]}, verbose=0)
    with pytest.raises(InputError, match="unanswerable questions need version_2_with_negative"):
        labeler.fit(x, {"text": [""], "answer_start": [-1]}, verbose=0)
    with pytest.raises(InputError, match=r"takes packed inputs .* or raw \(questions, contexts\)"):
        labeler.predict(["What is the code?"])
    with pytest.raises(InputError, match="doc_stride=0 must be a positive integer"):
        bert_tf.BertSpanLabeler(config, doc_stride=0)
    assert span_text.is_raw(x) and not span_text.is_raw({"input_word_ids": [[1]]})


def conll_sentences(count, offset):
    """Word lists with BIO tags: a code after "the" is an entity; a long
    sentence now and then takes two windows."""
    sentences, tags = [], []
    for i in range(count):
        words, sentence_tags = [], []
        for k in range(3 + (i + offset) % 4 + (22 if i % 5 == 4 else 0)):
            word = WORDS[(i * 7 + k * 3 + offset) % 20]
            if word in CODES:
                words += ["the", word.capitalize()]
                sentence_tags += ["O", "B-CODE"]
            else:
                words.append(word)
                sentence_tags.append("O")
        sentences.append(words)
        tags.append(sentence_tags)
    return sentences, tags


def conll_file(path, sentences, tags):
    blocks = ["".join(f"{w} X X {t}\n" for w, t in zip(s, ts)) for s, ts in zip(sentences, tags)]
    path.write_text("\n".join(blocks), encoding="utf-8")


@pytest.mark.large
@pytest.mark.parametrize("use_crf", [False, True])
def test_token_classifier_on_raw_text_equals_run_ner(model_files, tmp_path, use_crf):
    keras.utils.set_random_seed(2)
    config = bert_tf.BertConfig.from_json_file(model_files[1])
    tagger = bert_tf.BertTokenClassifier(
        config, 2, use_crf=use_crf, preprocessor=preprocessor(model_files)
    )
    train, dev, test = conll_sentences(10, 0), conll_sentences(6, 1), conll_sentences(6, 2)
    tagger.compile(learning_rate=1e-3)
    tagger.fit(*train, batch_size=4, epochs=2, verbose=0)
    assert tagger.label_names == ("O", "B-CODE")  # run_ner.py's order: "O", then sorted
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    for name, (sentences, tags) in (("train", train), ("dev", dev), ("test", test)):
        conll_file(data_dir / f"{name}.txt", sentences, tags)
    output_dir = str(tmp_path / "run")
    run_ner(
        build(
            NerOptions,
            data_dir=str(data_dir),
            vocab_file=model_files[0],
            bert_config_file=model_files[1],
            init_checkpoint=keras_release(tagger, tmp_path / "keras"),
            output_dir=output_dir,
            do_lower_case=True,
            use_crf=use_crf,
            max_seq_length=SEQ,
            do_train=True,
            do_eval=True,
            do_predict=True,
            learning_rate=1e-30,
            num_train_epochs=1.0,
            seed=2,
        )
    )
    # The same windows and labels, and the same loss on them.
    found = tagging_text.sentences(*train)
    windows = tagging_text.training_dataset(
        tagger.preprocessor, found, tagger.label_names, use_crf, 100
    )
    batch = next(iter(windows))
    inputs, y = batch[0], batch[1]
    schema = tagging.tagging_schema(SEQ)
    script = records(os.path.join(output_dir, "train.tf_record"), schema, len(y))
    assert len(script["input_word_ids"]) > len(train[0])  # long sentences take two windows
    for name in ("input_word_ids", "input_mask", "input_type_ids"):
        np.testing.assert_array_equal(inputs[name], script[name])
    label_ids = script["label_ids"]
    np.testing.assert_array_equal(y, label_ids if use_crf else np.maximum(label_ids, 0))
    outputs = tagger(inputs, training=False)
    weights = batch[2] if len(batch) > 2 else None
    keras_loss = tagger.compute_loss(inputs, y, outputs, weights, training=False)
    objective = TaggingObjective(tagger.crf)
    features = {"label_ids": tf.constant(label_ids)}
    totals = {k: tf.cast(v, tf.float32) for k, v in objective.totals(features).items()}
    expected = objective.loss(outputs, features, totals)["loss"]
    np.testing.assert_allclose(float(keras_loss), float(expected), rtol=1e-6)
    # The same tags and scores.
    with open(os.path.join(output_dir, "test_predictions.txt")) as f:
        blocks = f.read().strip().split("\n\n")
    expected_tags = [[row.split()[-1] for row in block.splitlines()] for block in blocks]
    assert tagger.predict(test[0], verbose=0) == expected_tags
    results = tagger.evaluate(*dev, verbose=0, return_dict=True)
    with open(os.path.join(output_dir, "eval_results.txt")) as f:
        script_results = dict(line.split(" = ") for line in f.read().splitlines())
    for name, value in results.items():
        np.testing.assert_allclose(value, float(script_results[name]), rtol=1e-5, err_msg=name)


def cut(value, part, at):
    """The examples before (part 0) or from (part 1) `at` of a list, a tuple
    of lists or a dict of lists."""
    if isinstance(value, dict):
        return {k: cut(v, part, at) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(cut(v, part, at) for v in value)
    return value[:at] if part == 0 else value[at:]


@pytest.mark.large
def test_validation_split_cuts_raw_sentences_and_questions(model_files):
    """validation_split on raw text validates on the last examples, as
    validation_data with them does (two word lists are two sentences, not
    a text pair)."""
    config = bert_tf.BertConfig.from_json_file(model_files[1])
    runs = [
        (bert_tf.BertTokenClassifier, {"label_names": ["O", "B-CODE"]}, *conll_sentences(2, 0), 1),
        (bert_tf.BertSpanLabeler, {}, *squad_questions(2, 0), 1),
    ]
    for model_class, arguments, x, y, at in runs:
        histories = []
        fits = [
            ((x, y), {"validation_split": 0.5}),
            ((cut(x, 0, at), cut(y, 0, at)), {"validation_data": (cut(x, 1, at), cut(y, 1, at))}),
        ]
        for data, validation in fits:
            keras.utils.set_random_seed(3)
            model = model_class(config, preprocessor=preprocessor(model_files), **arguments)
            model.compile(learning_rate=1e-3)
            histories.append(model.fit(*data, verbose=0, **validation).history)
        assert "val_loss" in histories[0]
        assert histories[0] == histories[1], model_class.__name__


def test_token_classifier_takes_strings_and_cluener_spans(model_files):
    """Strings split as the exported tagger splits them (each CJK character a
    word); CLUENER spans tag every character, as run_ner.py's cluener format."""
    config = bert_tf.BertConfig.from_json_file(model_files[1])
    tagger = bert_tf.BertTokenClassifier(config, 3, preprocessor=preprocessor(model_files))
    texts = ["北京 在上海", "the code is amber ."]
    found = tagging_text.sentences(texts, None)
    assert [s.words for s in found] == [
        ("北", "京", "在", "上", "海"),
        ("the", "code", "is", "amber", "."),
    ]
    spans = [{"LOC": {"北京": [[0, 1]], "上海": [[4, 5]]}}, {}]
    tagger.compile()
    tagger.fit(texts, spans, verbose=0)
    assert tagger.label_names == ("O", "B-LOC", "I-LOC")
    assert tagging_text.sentences(texts[:1], spans[:1])[0].tags == (
        "B-LOC", "I-LOC", "O", "O", "B-LOC", "I-LOC",
    )  # fmt: skip
    assert [len(tags) for tags in tagger.predict(texts, verbose=0)] == [5, 5]
    # Named with return_dict, else listed as Keras lists the classifier's: the loss first.
    named = tagger.evaluate(texts, spans, verbose=0, return_dict=True)
    assert list(named)[:4] == ["loss", "precision", "recall", "f1"]
    assert tagger.evaluate(texts, spans, verbose=0) == list(named.values())
    with pytest.raises(
        InputError, match=r"y: sentence 0: LOC '上海' at \[2, 3\] is not the text there"
    ):
        tagger.fit(texts[:1], [{"LOC": {"上海": [[2, 3]]}}], verbose=0)
    with pytest.raises(InputError, match="y: sentence 1 has 5 words but 1 tags"):
        tagger.fit(texts, [["O"] * 5, ["O"]], verbose=0)
    with pytest.raises(InputError, match="y: unknown tag 'B-PER' in sentence 0"):
        tagger.fit(texts[1:], [["B-PER", "O", "O", "O", "O"]], verbose=0)
    path_config = tagger.get_config()
    assert path_config["label_names"] == ["O", "B-LOC", "I-LOC"]


def run_readme_block(readme, section, release_name, tmp_path, monkeypatch):
    """Runs the block of `readme`'s `section` that fine-tunes a span labeler, on
    MiniLM written as the Google release the block names."""
    monkeypatch.chdir(tmp_path)
    write_release(bert_tf.BertEncoder.from_pretrained(minilm_dir()), tmp_path, release_name)
    names = {}
    exec(block_in(readme, section, "BertSpanLabeler.from_pretrained").code, names)
    return names


@pytest.mark.large
def test_readme_raw_text_examples_run_as_written(tmp_path, monkeypatch):
    names = run_readme_block(
        "docs/keras.md",
        "Answers and entities from raw text",
        "uncased_L-12_H-768_A-12",
        tmp_path,
        monkeypatch,
    )
    assert names["answers"][0]["answer"] in names["x"][1][0]
    assert {"loss", "exact_match", "f1"} <= set(names["scores"])
    assert [len(tags) for tags in names["tags"]] == [6]
    assert names["tagger"].label_names == ("O", "B-LOC", "B-PER", "I-PER")


@pytest.mark.large
def test_chinese_readme_raw_text_example_runs_as_written(tmp_path, monkeypatch):
    names = run_readme_block(
        "docs/zh/getting_started.md",
        "在 Python / Keras 中使用",
        "chinese_L-12_H-768_A-12",
        tmp_path,
        monkeypatch,
    )
    assert names["answers"][0]["answer"] in names["x"][1][0]
    assert {"loss", "F1", "EM"} <= set(names["scores"])
    assert [len(tags) for tags in names["tags"]] == [6]
