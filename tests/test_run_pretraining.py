import os
import re

import numpy as np
import numpy_bert
import pytest
import shared
import tensorflow as tf
from pretraining_records import write_records

from bert_tf.checkpoints import read_tensors, save_tf1_checkpoint
from bert_tf.config import BertConfig
from bert_tf.errors import CheckpointError, InputError
from bert_tf.modeling import BertPretrainingModel
from bert_tf.options import build, replace
from bert_tf.tasks.pretraining import run_pretraining
from bert_tf.tasks.pretraining_options import PretrainingOptions

SEQ, PRED = 24, 4


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("pretraining")
    config = BertConfig(
        vocab_size=60,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=32,
        type_vocab_size=2,
    )
    config_file = str(tmp_path / "bert_config.json")
    config.to_json_file(config_file)
    files = [
        write_records(str(tmp_path / f"data-{i}.tfrecord"), 64, SEQ, PRED, 60, seed=i)
        for i in range(2)
    ]
    return config_file, ",".join(files), tmp_path


def options(setup, output_dir, **kwargs):
    config_file, input_file, tmp_path = setup
    kwargs = {
        "seed": 1,
        "steps_per_loop": 5,
        "max_eval_steps": 8,
        "num_train_steps": 40,
        "save_checkpoints_steps": 20,
        **kwargs,
    }
    return build(
        PretrainingOptions,
        bert_config_file=config_file,
        input_file=input_file,
        output_dir=str(tmp_path / output_dir),
        max_seq_length=SEQ,
        max_predictions_per_seq=PRED,
        train_batch_size=8,
        eval_batch_size=8,
        learning_rate=2e-3,
        num_warmup_steps=4,
        **kwargs,
    )


def untrained_checkpoint(setup):
    """A freshly initialised model's checkpoint: evaluating needs weights."""
    model = BertPretrainingModel(BertConfig.from_json_file(setup[0]))
    return save_tf1_checkpoint(model, str(setup[2] / "untrained" / "bert_model.ckpt"))


def read_records(files):
    """Every record of `files` as numpy arrays, parsed without bert_tf."""
    columns = {}
    for path in files.split(","):
        for record in tf.data.TFRecordDataset(path).as_numpy_iterator():
            feature = tf.train.Example.FromString(record).features.feature
            for name, value in feature.items():
                values = value.int64_list.value or value.float_list.value
                columns.setdefault(name, []).append(list(values))
    return {name: np.array(rows) for name, rows in columns.items()}


def numpy_eval_metrics(prefix, config_file, files):
    """The original's pre-training eval metrics over every record, from the
    checkpoint's weights through the float64 numpy BERT."""
    reader = tf.train.load_checkpoint(prefix)
    weights = {
        name: reader.get_tensor(name).astype(np.float64)
        for name in reader.get_variable_to_shape_map()
    }
    records = read_records(files)
    inputs = {
        "input_word_ids": records["input_ids"],
        "input_mask": records["input_mask"],
        "input_type_ids": records["segment_ids"],
        "masked_lm_positions": records["masked_lm_positions"],
    }
    outputs = numpy_bert.pretraining(weights, BertConfig.from_json_file(config_file), inputs)
    mlm_log_probs = np.log(numpy_bert.softmax(outputs["masked_lm_logits"]))
    ids, mlm_weights = records["masked_lm_ids"], records["masked_lm_weights"]
    mlm_losses = -np.take_along_axis(mlm_log_probs, ids[..., None], -1)[..., 0]
    correct = mlm_log_probs.argmax(-1) == ids
    nsp_log_probs = np.log(numpy_bert.softmax(outputs["next_sentence_logits"]))
    labels = records["next_sentence_labels"][:, 0]
    metrics = {
        "masked_lm_loss": (mlm_losses * mlm_weights).sum() / mlm_weights.sum(),
        "masked_lm_accuracy": (correct * mlm_weights).sum() / mlm_weights.sum(),
        "next_sentence_loss": -nsp_log_probs[np.arange(len(labels)), labels].mean(),
        "next_sentence_accuracy": (nsp_log_probs.argmax(-1) == labels).mean(),
    }
    metrics["loss"] = metrics["masked_lm_loss"] + metrics["next_sentence_loss"]
    return metrics


@pytest.fixture(scope="module")
def runs(setup, calibration):
    """Eval metrics of the untrained model and of the one trained for 40 steps
    (in `trained/`), each over every record (16 batches of 8)."""
    before = run_pretraining(
        options(
            setup,
            "untrained",
            do_eval=True,
            max_eval_steps=16,
            init_checkpoint=untrained_checkpoint(setup),
        )
    )
    after = run_pretraining(
        options(
            setup,
            "trained",
            do_train=True,
            do_eval=True,
            max_eval_steps=16,
            seed=calibration.seed(1),
        )
    )
    return before, after


@pytest.mark.learning
def test_loss_falls_and_eval_results_have_the_original_keys(setup, runs, calibration):
    before, after = runs
    calibration.record(
        masked_lm_loss_ratio=after["masked_lm_loss"] / before["masked_lm_loss"],
        loss_ratio=after["loss"] / before["loss"],
    )
    assert after["global_step"] == 40 and before["global_step"] == 0
    # Measured (tests/calibrate.py, seeds +0..+4 x CPU settings): the masked-LM loss falls
    # to 0.58 to 0.61 of the untrained model's, the total loss to 0.64 to 0.67.
    assert after["masked_lm_loss"] < 0.7 * before["masked_lm_loss"]
    assert after["loss"] < before["loss"]
    text = open(os.path.join(setup[2], "trained", "eval_results.txt")).read()
    keys = re.findall(r"^(\w+) = ", text, re.M)
    assert keys == [
        "global_step",
        "loss",
        "masked_lm_accuracy",
        "masked_lm_loss",
        "next_sentence_accuracy",
        "next_sentence_loss",
    ]
    checkpoints = sorted(f for f in os.listdir(setup[2] / "trained") if f.endswith(".index"))
    assert checkpoints == ["model.ckpt-20.index", "model.ckpt-40.index"]
    # Every value against numpy on the records (measured difference <= 1e-7;
    # accuracies are counts over 128 records and ~400 masked positions).
    expected = numpy_eval_metrics(str(setup[2] / "trained" / "model.ckpt-40"), *setup[:2])
    for key, value in expected.items():
        assert abs(after[key] - value) < 1e-5, (key, after[key], value)
    written = dict(re.findall(r"^(\w+) = (.*)$", text, re.M))
    assert {k: float(v) for k, v in written.items() if k != "global_step"} == {
        k: float(after[k]) for k in expected
    }


def test_warm_start_and_bad_inputs(setup, runs, tmp_path):
    cold, trained = runs
    warm = options(
        setup,
        "second",
        do_eval=True,
        max_eval_steps=16,
        init_checkpoint=str(setup[2] / "trained" / "model.ckpt-40"),
    )
    warm_metrics = run_pretraining(warm)
    # Warm start from step 40's weights (not its step: global_step is 0).
    assert warm_metrics["global_step"] == 0
    for key in ("masked_lm_loss", "masked_lm_accuracy", "next_sentence_loss"):
        assert abs(warm_metrics[key] - trained[key]) < 1e-6, key
    assert warm_metrics["masked_lm_loss"] < cold["masked_lm_loss"]

    with pytest.raises(InputError, match="at least one of --do_train or --do_eval"):
        run_pretraining(options(setup, "x"))
    with pytest.raises(InputError, match=r"nothing.tfrecord"):
        run_pretraining(
            replace(
                options(setup, "x", do_train=True), input_file=str(tmp_path / "nothing.tfrecord")
            )
        )
    with pytest.raises(InputError, match="data-0.tfrecord"):
        run_pretraining(replace(options(setup, "x", do_train=True), max_seq_length=16))
    other = BertConfig(
        vocab_size=60,
        hidden_size=48,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=32,
        type_vocab_size=2,
    )
    other_file = str(tmp_path / "other.json")
    other.to_json_file(other_file)
    with pytest.raises(
        CheckpointError,
        match=r"model.ckpt-40 does not fit --bert_config_file .*other.json: wrong shape: "
        r"bert/embeddings/word_embeddings \[60, 32\] \(config \[60, 48\]\)",
    ):
        run_pretraining(replace(warm, bert_config_file=other_file))
    with pytest.raises(
        InputError, match="max_seq_length=64 is larger than max_position_embeddings=32"
    ):
        run_pretraining(replace(warm, max_seq_length=64))


@pytest.mark.large
def test_float16_with_accumulation_resumes_like_an_uninterrupted_run(setup):
    """--dtype=mixed_float16 (dynamic loss scaling), 2 accumulated micro-batches:
    the loss scale is saved with the checkpoint, and a run that resumes from
    step 5 ends with the same weights, slots and loss scale at step 10."""
    run = options(
        setup,
        "fp16",
        do_train=True,
        dtype="mixed_float16",
        gradient_accumulation_steps=2,
        deterministic=True,
        num_train_steps=10,
        save_checkpoints_steps=5,
    )
    run_pretraining(run)
    output = setup[2] / "fp16"
    finished = read_tensors(str(output / "model.ckpt-10"))
    scales = [name for name in finished if "scale" in name]
    assert scales and "global_step" in finished

    # As if killed after the step-5 save: step 10's files and entry gone.
    for path in output.glob("model.ckpt-10.*"):
        path.unlink()
    (output / "checkpoint").write_text(
        'model_checkpoint_path: "model.ckpt-5"\nall_model_checkpoint_paths: "model.ckpt-5"\n'
    )
    run_pretraining(run)
    resumed = tf.train.load_checkpoint(str(output / "model.ckpt-10"))
    for name, value in finished.items():
        np.testing.assert_allclose(
            resumed.get_tensor(name), value, rtol=1e-5, atol=1e-7, err_msg=name
        )


def test_recompute_trains_as_keeping_the_activations(setup, monkeypatch):
    """--recompute=layer with accumulated micro-batches: the layers' functions
    are recomputed, and the weights after 6 updates are those of the run
    that keeps every activation."""
    asked = shared.counted_recomputations(monkeypatch)
    weights = {}
    for mode in ("none", "layer"):
        run = options(
            setup,
            f"recompute-{mode}",
            do_train=True,
            recompute=mode,
            gradient_accumulation_steps=2,
            deterministic=True,
            num_train_steps=6,
        )
        run_pretraining(run)
        saved = read_tensors(str(setup[2] / f"recompute-{mode}" / "model.ckpt-6"))
        weights[mode] = {n: v for n, v in saved.items() if n.startswith(("bert/", "cls/"))}
        assert bool(asked) == (mode == "layer")
        del asked[:]
    assert weights["none"].keys() == weights["layer"].keys() and weights["none"]
    for name, value in weights["none"].items():
        np.testing.assert_allclose(
            weights["layer"][name], value, rtol=1e-5, atol=1e-6, err_msg=name
        )


@pytest.mark.numerics
def test_fill_mask_ranks_as_the_trained_checkpoints_masked_lm(setup, runs, tmp_path):
    """Keras users' `fill_mask` on the run's output folder gives the top tokens
    and probabilities of the float64 numpy BERT on the same checkpoint."""
    config_file, _, run_root = setup
    vocab_file = tmp_path / "vocab.txt"
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(55)]
    vocab_file.write_text("\n".join(tokens) + "\n")
    model = BertPretrainingModel.from_pretrained(
        str(run_root / "trained"), bert_config_file=config_file, vocab_file=str(vocab_file)
    )
    filled = model.fill_mask(["W3 w7 [MASK] w12 [MASK]", "[MASK] w1"], top_k=3)

    ids = np.array([[2, 8, 12, 4, 17, 4, 3], [2, 4, 6, 3, 0, 0, 0]])
    inputs = {
        "input_word_ids": ids,
        "input_mask": (ids > 0).astype(np.int64),
        "input_type_ids": np.zeros_like(ids),
        "masked_lm_positions": np.array([[3, 5], [1, 0]]),
    }
    prefix = tf.train.latest_checkpoint(str(run_root / "trained"))
    reader = tf.train.load_checkpoint(prefix)
    weights = {
        n: reader.get_tensor(n).astype(np.float64) for n in reader.get_variable_to_shape_map()
    }
    config = BertConfig.from_json_file(config_file)
    logits = numpy_bert.pretraining(weights, config, inputs)["masked_lm_logits"]
    probabilities = numpy_bert.softmax(logits)
    for row, count in enumerate((2, 1)):
        assert len(filled[row]) == count
        for mask in range(count):
            best = np.argsort(-probabilities[row, mask])[:3]
            assert [token for token, _ in filled[row][mask]] == [tokens[i] for i in best]
            np.testing.assert_allclose(
                [p for _, p in filled[row][mask]], probabilities[row, mask, best], atol=1e-5
            )


def read_history(output):
    with open(output / "eval_history.csv") as f:
        header, *lines = [line.rstrip("\n").split(",") for line in f]
    return [{k: float(v) for k, v in zip(header, line)} for line in lines]


def test_held_out_curves_equal_a_separate_eval_and_continue_after_a_resume(setup, tmp_path):
    """--eval_input_file with --eval_every_steps: each row of eval_history.csv
    equals a separate --do_eval run of that step's checkpoint on the held-out
    file (not on --input_file); a run killed after an evaluation but before
    its checkpoint drops that row on resume and writes it again; the curves'
    PNG is drawn at the end and bert_config.json lies beside the checkpoints."""
    held_out = write_records(str(tmp_path / "heldout.tfrecord"), 24, SEQ, PRED, 60, seed=7)
    run = options(
        setup,
        "curves",
        do_train=True,
        do_eval=True,
        eval_input_file=held_out,
        eval_every_steps=2,
        num_train_steps=4,
        save_checkpoints_steps=2,
        keep_checkpoint_max=0,
        max_eval_steps=100,
        deterministic=True,
    )
    final = run_pretraining(run)
    output = setup[2] / "curves"
    rows = read_history(output)
    assert [row["step"] for row in rows] == [2, 4]
    assert (output / "eval_history.png").stat().st_size > 0
    assert BertConfig.from_json_file(str(output / "bert_config.json")) == BertConfig.from_json_file(
        setup[0]
    )
    keys = ("masked_lm_accuracy", "masked_lm_loss", "next_sentence_accuracy", "next_sentence_loss")
    for key in keys:
        assert rows[1][key] == pytest.approx(final[key], rel=1e-6), key

    def separate_eval(name, step, **kwargs):
        return run_pretraining(
            options(
                setup,
                name,
                do_eval=True,
                max_eval_steps=100,
                init_checkpoint=str(output / f"model.ckpt-{step}"),
                **kwargs,
            )
        )

    at_2 = separate_eval("at_2", 2, eval_input_file=held_out)
    for key in keys:
        assert rows[0][key] == pytest.approx(at_2[key], rel=1e-6), key
    on_train_data = separate_eval("at_2_train", 2)
    assert abs(on_train_data["masked_lm_loss"] - rows[0]["masked_lm_loss"]) > 1e-3

    # As if killed after step 4's evaluation, before its checkpoint.
    for path in output.glob("model.ckpt-4.*"):
        path.unlink()
    (output / "checkpoint").write_text(
        'model_checkpoint_path: "model.ckpt-2"\nall_model_checkpoint_paths: "model.ckpt-2"\n'
    )
    stale = rows[1] | {"masked_lm_loss": 99.0}
    header = list(rows[0])
    (output / "eval_history.csv").write_text(
        ",".join(header)
        + "\n"
        + "".join(",".join(repr(row[k]) for k in header) + "\n" for row in (rows[0], stale))
    )
    run_pretraining(replace(run, num_train_steps=6))
    resumed = read_history(output)
    assert [row["step"] for row in resumed] == [2, 4, 6]
    assert resumed[0] == rows[0]
    for key in keys:
        assert resumed[1][key] == pytest.approx(rows[1][key], rel=1e-5), key


def test_eval_input_file_errors(setup, tmp_path):
    with pytest.raises(InputError, match="--eval_input_file needs --do_eval"):
        run_pretraining(options(setup, "x", do_train=True, eval_input_file="held.tfrecord"))
    with pytest.raises(InputError, match=r"--eval_input_file: no file matches .*nothing"):
        run_pretraining(
            options(
                setup,
                "x",
                do_train=True,
                do_eval=True,
                eval_input_file=str(tmp_path / "nothing"),
            )
        )
    assert not (setup[2] / "x").exists()
    one_record = write_records(str(tmp_path / "one.tfrecord"), 1, SEQ, PRED, 60, seed=3)
    with pytest.raises(
        InputError,
        match=r"--eval_input_file=.*one.tfrecord holds fewer records than one batch of "
        r"--eval_batch_size=8: nothing to evaluate",
    ):
        run_pretraining(
            options(
                setup,
                "x",
                do_eval=True,
                eval_input_file=one_record,
                init_checkpoint=untrained_checkpoint(setup),
            )
        )
