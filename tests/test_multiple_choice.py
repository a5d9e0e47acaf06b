"""SWAG-style multiple choice: the CSV reader, the packed features, the model,
and run_multiple_choice end to end (train, eval, predict, raw-text SavedModel)."""

import csv
import json
import os
import random
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
from shared import HANG_TIMEOUT, random_inputs, tiny_model_files

from bert_tf.data import multiple_choice as mc_data
from bert_tf.errors import InputError
from bert_tf.modeling import BertMultipleChoice
from bert_tf.options import build
from bert_tf.tasks.multiple_choice import run_multiple_choice
from bert_tf.tasks.multiple_choice_options import MultipleChoiceOptions
from bert_tf.text import tokenization

HEADER = (
    "video-id,fold-ind,startphrase,sent1,sent2,gold-source,ending0,ending1,ending2,ending3,label"
)
# Rows as in SWAG's val.csv: quoted fields, one with commas.
SWAG_ROWS = [
    'anetv_jkn6uvmqwh4,3416,"Members of the procession walk down the street holding small horn '
    'brass instruments. A drum line","Members of the procession walk down the street holding '
    'small horn brass instruments.",A drum line,gold,passes by walking down the street playing '
    "their instruments.,has heard approaching them.,\"arrives and they're outside dancing and "
    'asleep.",turns the lead singer watches the performance.,0',
    'lsmdc3001_21_JUMP_STREET-422,16,"Then, the man writes over the snow covering the window of '
    'a car, and a woman wearing winter clothes smiles. Then","Then, the man writes over the snow '
    'covering the window of a car, and a woman wearing winter clothes smiles.",Then,gold,", the '
    'man adds wax to the windshield and cuts it.",", a person board a ski lift, while two men '
    'supporting the head of the person wearing winter clothes snow as the we girls sled.",", '
    'the man puts on a christmas coat, knitted with netting.",", the man continues removing the '
    'snow on his car.",3',
]


def write_csv(path, lines):
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return str(path)


def test_reader_parses_swag_rows(tmp_path):
    examples = mc_data.read_swag_examples(write_csv(tmp_path / "val.csv", [HEADER, *SWAG_ROWS]))
    assert [e.label for e in examples] == [0, 3]
    assert examples[0].context == (
        "Members of the procession walk down the street holding small horn brass instruments."
    )
    assert (
        examples[0].choices[0] == "A drum line passes by walking down the street playing "
        "their instruments."
    )
    assert examples[1].context.startswith(
        "Then, the man writes over the snow covering the window of a car, and a woman"
    )
    assert examples[1].choices[3] == "Then , the man continues removing the snow on his car."
    assert examples[1].choices[1].startswith("Then , a person board a ski lift, while two men")

    # A test file: no label column, every label 0.
    test_lines = [HEADER.rsplit(",", 1)[0]] + [row.rsplit(",", 1)[0] for row in SWAG_ROWS]
    test = mc_data.read_swag_examples(write_csv(tmp_path / "test.csv", test_lines))
    assert [e.label for e in test] == [0, 0]
    assert [e.choices for e in test] == [e.choices for e in examples]


def test_reader_takes_swag_files_as_released_with_their_index_column(tmp_path):
    # swagaf's train.csv / val.csv / test.csv, written by pandas: an unnamed
    # row index first.
    plain = mc_data.read_swag_examples(write_csv(tmp_path / "val.csv", [HEADER, *SWAG_ROWS]))
    released = [f",{HEADER}"] + [f"{i},{row}" for i, row in enumerate(SWAG_ROWS)]
    assert mc_data.read_swag_examples(write_csv(tmp_path / "val.csv", released)) == plain
    test = [line.rsplit(",", 1)[0] for line in released]
    examples = mc_data.read_swag_examples(write_csv(tmp_path / "test.csv", test))
    assert [(e.context, e.choices, e.label) for e in examples] == [
        (e.context, e.choices, 0) for e in plain
    ]
    short = [f",{HEADER}", f"0,{SWAG_ROWS[0]}", SWAG_ROWS[1]]
    with pytest.raises(InputError, match=r"val\.csv:3: 11 columns, expected 12"):
        mc_data.read_swag_examples(write_csv(tmp_path / "val.csv", short))


@pytest.mark.parametrize(
    "bad_row, message",
    [
        (SWAG_ROWS[1].rsplit(",", 2)[0] + ",3", r"bad\.csv:3: 10 columns, expected 11"),
        (SWAG_ROWS[1][:-1] + "4", r"bad\.csv:3: label '4' is not one of 0\.\.3"),
    ],
)
def test_reader_names_file_and_line_of_bad_rows(tmp_path, bad_row, message):
    path = write_csv(tmp_path / "bad.csv", [HEADER, SWAG_ROWS[0], bad_row])
    with pytest.raises(InputError, match=message):
        mc_data.read_swag_examples(path)
    with pytest.raises(InputError, match="header .* is not SWAG's"):
        mc_data.read_swag_examples(write_csv(tmp_path / "nohead.csv", SWAG_ROWS))


def test_features_pack_each_choice_as_a_pair(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text(
        "\n".join(
            ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "man", "runs", "he", "falls", "stops", "."]
        )
        + "\n"
    )
    tokenizer = tokenization.FullTokenizer(str(vocab), do_lower_case=True)
    example = mc_data.MultipleChoiceExample(
        "x", "A man runs.", ("He falls.", "He stops.", "He runs.", "He zzz."), label=2
    )
    values = mc_data.convert_example(example, 8, tokenizer)
    ids = np.reshape(values["input_ids"], (4, 8))
    # "a man runs ." (4) + "he falls ." (3) > 8 - 3: the longer A pops ".", then B (tie) pops ".".
    assert ids[0].tolist() == [2, 4, 5, 6, 3, 7, 8, 3]
    assert ids[1].tolist() == [2, 4, 5, 6, 3, 7, 9, 3]
    assert ids[3].tolist() == [2, 4, 5, 6, 3, 7, 1, 3]
    assert np.reshape(values["input_mask"], (4, 8)).tolist() == [[1] * 8] * 4
    assert np.reshape(values["segment_ids"], (4, 8)).tolist() == [[0] * 5 + [1] * 3] * 4
    padded = mc_data.convert_example(example, 12, tokenizer)
    assert padded["input_ids"][24:36] == [2, 4, 5, 6, 10, 3, 7, 6, 10, 3, 0, 0]
    assert padded["input_mask"][24:36] == [1] * 10 + [0] * 2
    assert padded["segment_ids"][24:36] == [0] * 6 + [1] * 4 + [0] * 2
    assert values["label_ids"] == [2] and values["is_real_example"] == [1]


def write_records(path, seq, lengths):
    """Multiple-choice records, one per entry of `lengths` (each choice's
    length): choice c of record i holds the token 100 * i + c, label i % 4."""
    schema = mc_data.multiple_choice_schema(seq)
    with tf.io.TFRecordWriter(str(path)) as writer:
        for index, example in enumerate(lengths):
            rows = [[100 * index + c] * n + [0] * (seq - n) for c, n in enumerate(example)]
            masks = [[1] * n + [0] * (seq - n) for n in example]
            writer.write(
                schema.serialize(
                    {
                        "input_ids": sum(rows, []),
                        "input_mask": sum(masks, []),
                        "segment_ids": [0] * (4 * seq),
                        "label_ids": [index % 4],
                        "is_real_example": [1],
                    }
                )
            )
    return str(path)


def test_eval_batches_grouped_by_longest_pair_carry_their_example_index(tmp_path):
    """Sorted on each example's longest pair (not the last pair of the flat
    record), trimmed to the batch's longest, and traceable to the record."""
    seq = 12
    lengths = [
        [3, 3, 3, 11],
        [11, 3, 3, 3],
        [2, 2, 2, 2],
        [5, 7, 5, 5],
        [4, 4, 9, 4],
        [6, 6, 6, 6],
        [2, 8, 2, 2],
        [3, 3, 3, 3],
    ]
    path = write_records(tmp_path / "eval.tf_record", seq, lengths)
    batches = list(
        mc_data.make_dataset(path, seq, 2, False, length_multiple=1, group_by_length=True)
    )
    indexes = [int(i) for b in batches for i in b["example_index"]]
    assert sorted(indexes) == list(range(len(lengths)))
    longest = [max(lengths[i]) for i in indexes]
    assert longest == sorted(longest)
    for batch in batches:
        batch_indexes = batch["example_index"].numpy()
        assert batch["input_mask"].shape == (2, 4, max(max(lengths[i]) for i in batch_indexes))
        for row, index in zip(batch["input_word_ids"].numpy(), batch_indexes):
            assert row[:, 0].tolist() == [100 * index + c for c in range(4)]


@pytest.mark.parametrize("pipeline", [0, 1])
def test_each_input_pipeline_numbers_its_records_by_their_place_in_the_file(tmp_path, pipeline):
    """Under two input pipelines (two replicas), each reads every other
    record; example_index is the record's position in the file, not in the
    pipeline's share, so the predictions of every pipeline go back in place."""
    path = write_records(tmp_path / "eval.tf_record", 4, [[4, 3, 2, 1]] * 6)
    context = tf.distribute.InputContext(
        num_input_pipelines=2, input_pipeline_id=pipeline, num_replicas_in_sync=2
    )
    batches = list(mc_data.make_dataset(path, 4, 2, False, input_context=context))
    expected = [pipeline, pipeline + 2, pipeline + 4]
    assert [b["input_word_ids"].shape for b in batches] == [(1, 4, 4)] * 3  # per-replica batch 1
    assert [int(i) for b in batches for i in b["example_index"]] == expected
    assert [int(b["input_word_ids"][0, 0, 0]) for b in batches] == [100 * i for i in expected]
    assert [int(i) for b in batches for i in b["label_ids"]] == [i % 4 for i in expected]


def test_model_scores_each_choice_alone(tiny_config):
    model = BertMultipleChoice(tiny_config)
    flat = random_inputs(tiny_config, batch=6, seq=10, lengths=[10, 8, 7, 5, 4, 9])
    inputs = {
        name: np.concatenate([value, value[::-1]]).reshape(3, 4, 10) for name, value in flat.items()
    }
    logits = np.asarray(model(inputs, training=False))
    assert logits.shape == (3, 4)
    pooled = model.encoder(flat)["pooled_output"]
    alone = np.asarray(model.classifier(pooled))[:, 0]
    np.testing.assert_allclose(logits.reshape(-1)[:6], alone, atol=1e-5)
    np.testing.assert_allclose(logits.reshape(-1)[6:], alone[::-1], atol=1e-5)


# -- end to end on a learnable synthetic SWAG ------------------------------------------

KEYWORDS = ["ball", "cup", "hat", "dog", "book", "box", "key", "pen"]
WORDS = [
    "a",
    "man",
    "woman",
    "holds",
    "sees",
    "the",
    "he",
    "she",
    "then",
    "picks",
    "up",
    "drops",
    "looks",
    "at",
    *KEYWORDS,
]


def synthetic_rows(rng, n, with_label=True):
    """SWAG rows whose right ending goes on from the context: its pronoun
    agrees with the context's subject, and it names the context's object.
    The wrong endings have the other pronoun and name other objects.

    The pronoun is what a 2-layer, hidden-32 model learns on every seed; with
    the object alone (the same token in context and ending) it reached 0.32 to
    1.0 eval accuracy over 5 seeds."""
    rows = []
    for i in range(n):
        subject = rng.choice(["man", "woman"])
        pronoun, other = ("he", "she") if subject == "man" else ("she", "he")
        keyword, *others = rng.sample(KEYWORDS, 4)
        label = rng.randrange(4)
        sent1 = f"A {subject} {rng.choice(['holds', 'sees'])} the {keyword}."
        endings = [
            f"{other} {rng.choice(['picks up', 'drops', 'looks at'])} the {o}." for o in others
        ]
        endings.insert(
            label, f"{pronoun} {rng.choice(['picks up', 'drops', 'looks at'])} the {keyword}."
        )
        row = [f"synthetic_{i}", str(i), f"{sent1} Then", sent1, "Then", "gold", *endings]
        rows.append(row + [str(label)] if with_label else row)
    return rows


def write_swag(data_dir, rng, sizes=(320, 60, 30)):
    """The three CSVs; in test.csv every third row has no sent2 ("Then"),
    so its pairs are shorter and grouped eval batches reorder the rows."""
    os.makedirs(data_dir, exist_ok=True)
    rows = {}
    for name, n in zip(("train.csv", "val.csv", "test.csv"), sizes):
        with_label = name != "test.csv"
        rows[name] = synthetic_rows(rng, n, with_label)
        if not with_label:
            for row in rows[name][::3]:
                row[2], row[4] = row[3], ""
        with open(os.path.join(data_dir, name), "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(HEADER.split(",")[: 11 if with_label else 10])
            writer.writerows(rows[name])
    return rows


@pytest.fixture(scope="module")
def model_files(tmp_path_factory):
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "."]
    return tiny_model_files(
        str(tmp_path_factory.mktemp("model")),
        [*special, *WORDS],
        max_position_embeddings=32,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )


IDS = ("input_word_ids", "input_mask", "input_type_ids")
SERVE = """
import json, sys
import tensorflow as tf
import tensorflow_text  # noqa: F401
assert "bert_tf" not in sys.modules
model = tf.saved_model.load(sys.argv[1])
texts = json.load(open(sys.argv[2]))
out = model.signatures["serving_default"](**{k: tf.constant(v) for k, v in texts.items()})
json.dump({k: v.numpy().tolist() for k, v in out.items()}, open(sys.argv[3], "w"))
"""


def serve_in_fresh_process(export_dir, texts, tmp_path):
    texts_file, out_file = tmp_path / "texts.json", tmp_path / "served.json"
    texts_file.write_text(json.dumps(texts))
    result = subprocess.run(
        [sys.executable, "-c", SERVE, export_dir, str(texts_file), str(out_file)],
        capture_output=True,
        text=True,
        timeout=HANG_TIMEOUT,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(out_file.read_text())


@pytest.fixture(scope="module")
def swag_run(model_files, tmp_path_factory, calibration):
    """One run_multiple_choice on the synthetic SWAG set: train, eval, predict
    and export. Returns (rows, options, metrics)."""
    vocab, config = model_files
    root = tmp_path_factory.mktemp("swag")
    data_dir = str(root / "swag")
    rows = write_swag(data_dir, random.Random(0))
    options = build(
        MultipleChoiceOptions,
        data_dir=data_dir,
        vocab_file=vocab,
        bert_config_file=config,
        output_dir=str(root / "out"),
        max_seq_length=16,
        train_batch_size=16,
        eval_batch_size=8,
        predict_batch_size=8,
        learning_rate=1e-3,
        num_train_epochs=25.0,
        do_train=True,
        do_eval=True,
        do_predict=True,
        export_dir=str(root / "export"),
        seed=calibration.seed(3),
        steps_per_loop=50,
    )
    return rows, options, run_multiple_choice(options)


@pytest.mark.large
@pytest.mark.learning
def test_swag_learns_to_pick_the_ending(swag_run, calibration):
    metrics = swag_run[2]
    calibration.record(eval_accuracy=metrics["eval_accuracy"], eval_loss=metrics["eval_loss"])
    # Chance is 0.25. Measured (tests/calibrate.py): 1.0 over seeds +0..+5
    # (default) and +0..+2 (avx2, sse41) at learning rate 1e-3. At 3e-3, 1 or
    # 2 of 4 seeds never left chance (0.35-0.47, loss ln 4), with Keras's
    # truncated-normal draws as with today's (issue 41).
    assert metrics["eval_accuracy"] >= 0.9, metrics


@pytest.mark.large
def test_swag_eval_results_and_feature_files(swag_run):
    output_dir = swag_run[1].run.output_dir
    results = dict(
        line.split(" = ")
        for line in open(os.path.join(output_dir, "eval_results.txt")).read().splitlines()
    )
    assert sorted(results) == ["eval_accuracy", "eval_loss", "global_step", "loss"]
    assert int(results["global_step"]) == 500  # 320 / 16 * 25 epochs
    assert float(results["eval_accuracy"]) == pytest.approx(swag_run[2]["eval_accuracy"])
    sidecar = json.load(open(os.path.join(output_dir, "eval.tf_record.json")))
    assert (sidecar["num_examples"], sidecar["num_records"]) == (60, 64)


@pytest.mark.large
def test_swag_predictions_are_in_file_order_and_served_alike(swag_run, tmp_path):
    """Predict groups rows by length; test_results.tsv must come back in file
    order, which the exported model, fed the rows in file order, confirms."""
    rows, options, _ = swag_run
    output_dir, export_dir = options.run.output_dir, options.export.export_dir
    probabilities = np.array(
        [
            [float(x) for x in line.split("\t")]
            for line in open(os.path.join(output_dir, "test_results.tsv"))
        ]
    )
    assert probabilities.shape == (30, 4)
    np.testing.assert_allclose(probabilities.sum(1), 1, atol=1e-5)

    test_rows = rows["test.csv"]
    texts = {
        "context": [row[3] for row in test_rows],
        **{f"ending{i}": [f"{row[4]} {row[6 + i]}" for row in test_rows] for i in range(4)},
    }
    served = serve_in_fresh_process(export_dir, texts, tmp_path)
    np.testing.assert_allclose(served["probabilities"], probabilities, atol=1e-5)
    assert served["label_ids"] == probabilities.argmax(1).tolist()
    # serving_ids on the predict records gives the same probabilities.
    serve_ids = tf.saved_model.load(export_dir).signatures["serving_ids"]
    batches = mc_data.make_dataset(os.path.join(output_dir, "predict.tf_record"), 16, 8, False)
    from_ids = np.concatenate(
        [serve_ids(**{k: batch[k] for k in IDS})["probabilities"] for batch in batches]
    )
    np.testing.assert_allclose(from_ids[:30], probabilities, atol=1e-5)


@pytest.mark.large
def test_swag_second_run_keeps_an_existing_export(swag_run):
    with pytest.raises(InputError, match="--export_dir .* already exists; pass --overwrite"):
        run_multiple_choice(swag_run[1])
