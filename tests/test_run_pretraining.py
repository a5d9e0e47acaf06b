import os
import re

import pytest
from pretraining_records import write_records

from bert_tf.checkpoints import save_tf1_checkpoint
from bert_tf.config import BertConfig
from bert_tf.errors import CheckpointError, InputError
from bert_tf.modeling.models import BertPretrainingModel
from bert_tf.tasks.pretraining import PretrainingOptions, run_pretraining
from bert_tf.training.distribution import TrainingOptions

SEQ, PRED = 24, 4


@pytest.fixture
def setup(tmp_path):
    config = BertConfig(vocab_size=60, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=32, type_vocab_size=2)
    config_file = str(tmp_path / "bert_config.json")
    config.to_json_file(config_file)
    files = [write_records(str(tmp_path / f"data-{i}.tfrecord"), 64, SEQ, PRED, 60, seed=i)
             for i in range(2)]
    return config_file, ",".join(files), tmp_path


def options(setup, output_dir, **kwargs):
    config_file, input_file, tmp_path = setup
    training = kwargs.pop("training", TrainingOptions(seed=1, steps_per_loop=5))
    return PretrainingOptions(
        bert_config_file=config_file, input_file=input_file,
        output_dir=str(tmp_path / output_dir), max_seq_length=SEQ, max_predictions_per_seq=PRED,
        train_batch_size=8, eval_batch_size=8, learning_rate=2e-3, num_train_steps=40,
        num_warmup_steps=4, save_checkpoints_steps=20, max_eval_steps=8, training=training,
        **kwargs)


def untrained_checkpoint(setup):
    """A freshly initialised model's checkpoint: evaluating needs weights."""
    model = BertPretrainingModel(BertConfig.from_json_file(setup[0]))
    return save_tf1_checkpoint(model, str(setup[2] / "untrained" / "bert_model.ckpt"))


def test_loss_falls_and_eval_results_have_the_original_keys(setup):
    before = run_pretraining(options(setup, "untrained", do_eval=True,
                                     init_checkpoint=untrained_checkpoint(setup)))
    after = run_pretraining(options(setup, "trained", do_train=True, do_eval=True))
    assert after["global_step"] == 40 and before["global_step"] == 0
    assert after["masked_lm_loss"] < 0.7 * before["masked_lm_loss"]
    assert after["loss"] < before["loss"]
    text = open(os.path.join(setup[2], "trained", "eval_results.txt")).read()
    keys = re.findall(r"^(\w+) = ", text, re.M)
    assert keys == ["global_step", "loss", "masked_lm_accuracy", "masked_lm_loss",
                    "next_sentence_accuracy", "next_sentence_loss"]
    checkpoints = sorted(f for f in os.listdir(setup[2] / "trained") if f.endswith(".index"))
    assert checkpoints == ["model.ckpt-20.index", "model.ckpt-40.index"]


def test_warm_start_and_bad_inputs(setup, tmp_path):
    trained = options(setup, "first", do_train=True)
    run_pretraining(trained)
    warm = options(setup, "second", do_eval=True,
                   init_checkpoint=os.path.join(trained.output_dir, "model.ckpt-40"))
    cold = run_pretraining(options(setup, "cold", do_eval=True,
                                   init_checkpoint=untrained_checkpoint(setup)))
    assert run_pretraining(warm)["masked_lm_loss"] < cold["masked_lm_loss"]

    with pytest.raises(InputError, match="at least one of --do_train or --do_eval"):
        run_pretraining(options(setup, "x"))
    with pytest.raises(InputError, match=r"nothing.tfrecord"):
        run_pretraining(dict_replace(options(setup, "x", do_train=True),
                                     input_file=str(tmp_path / "nothing.tfrecord")))
    with pytest.raises(InputError, match="data-0.tfrecord"):
        run_pretraining(dict_replace(options(setup, "x", do_train=True), max_seq_length=16))
    other = BertConfig(vocab_size=60, hidden_size=48, num_hidden_layers=2, num_attention_heads=2,
                       intermediate_size=64, max_position_embeddings=32, type_vocab_size=2)
    other_file = str(tmp_path / "other.json")
    other.to_json_file(other_file)
    with pytest.raises(CheckpointError, match=r"bert/embeddings/word_embeddings \[60, 32\] "
                       r"\(model \[60, 48\]\)"):
        run_pretraining(dict_replace(warm, bert_config_file=other_file))
    with pytest.raises(InputError, match="max_seq_length=64 is larger than "
                       "max_position_embeddings=32"):
        run_pretraining(dict_replace(warm, max_seq_length=64))


def dict_replace(opts, **changes):
    return opts.__class__(**{**opts.__dict__, **changes})
