"""run_ner.py and run_squad.py with --teacher: a 1-layer student cut from a
2-layer teacher, on the train set and unlabelled text, writes the task's
outputs; a run killed after a checkpoint resumes to the same weights; its
loss is the teacher's per-token (NER) and start/end (SQuAD) distributions."""

import json
import os
import random

import pytest
import tensorflow as tf
from shared import assert_resumes, tiny_model_files

from bert_tf.checkpoints import read_tensors
from bert_tf.errors import InputError
from bert_tf.options import build
from bert_tf.tasks.ner import run_ner
from bert_tf.tasks.ner_options import NerOptions
from bert_tf.tasks.squad import run_squad
from bert_tf.tasks.squad_options import SquadOptions

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
PEOPLE, PLACES = ["alice", "bruno", "carla"], ["paris", "lima", "oslo"]
FILLER = ["the", "met", "in", "went", "to", "today", "city", "is", "a", "."]
CODES = ["amber", "birch", "cedar", "delta"]
QUESTION = ["what", "code", "?"]


def ner_sentence(rng):
    """`(words, tags)`: "<person> met <person> in <place> ." and the like."""
    words, tags = [], []
    for slot in rng.choice([["P", "met", "P", "in", "L", "."], ["P", "went", "to", "L", "today"]]):
        if slot in ("P", "L"):
            words.append(rng.choice(PEOPLE if slot == "P" else PLACES))
            tags.append("B-PER" if slot == "P" else "B-LOC")
        else:
            words.append(slot)
            tags.append("O")
    return words, tags


def write_conll(path, rng, count):
    with open(path, "w") as f:
        for _ in range(count):
            words, tags = ner_sentence(rng)
            f.write("".join(f"{w} X X {t}\n" for w, t in zip(words, tags)) + "\n")


@pytest.fixture(scope="module")
def ner_setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("ner")
    vocab, config = tiny_model_files(str(root), [*SPECIAL, *PEOPLE, *PLACES, *FILLER])
    rng = random.Random(0)
    data = root / "data"
    data.mkdir()
    for split, count in (("train", 48), ("dev", 16), ("test", 8)):
        write_conll(data / f"{split}.txt", rng, count)
    unlabelled = root / "unlabelled.txt"
    unlabelled.write_text("".join(" ".join(ner_sentence(rng)[0]) + "\n" for _ in range(40)))
    teacher = str(root / "teacher")
    run_ner(ner_options(vocab, config, data, teacher, num_train_epochs=2.0))
    return vocab, config, data, teacher, str(unlabelled)


def ner_options(vocab, config, data, output_dir, **more):
    return build(
        NerOptions,
        data_dir=str(data),
        vocab_file=vocab,
        bert_config_file=config,
        output_dir=output_dir,
        max_seq_length=16,
        train_batch_size=8,
        eval_batch_size=8,
        predict_batch_size=8,
        learning_rate=1e-3,
        seed=2,
        do_train=True,
        do_eval=True,
        **more,
    )


@pytest.mark.large
def test_ner_distillation_runs_end_to_end_and_resumes(ner_setup, tmp_path):
    """With intermediate losses (hidden states, attention) on the tokens."""
    vocab, config, data, teacher, unlabelled = ner_setup

    def run(output_dir):
        return run_ner(
            ner_options(
                vocab,
                config,
                data,
                output_dir,
                teacher=teacher,
                student_num_layers=1,
                unlabeled_file=unlabelled,
                hidden_distillation_weight=1.0,
                attention_distillation_weight=1.0,
                num_train_epochs=1.0,
                save_checkpoints_steps=5,
                deterministic=True,
                do_predict=True,
            )
        )

    out = str(tmp_path / "student")
    metrics = run(out)
    steps = (48 + 40) // 8  # sentences, labelled and not, 8 a batch
    assert metrics["global_step"] == steps
    assert os.path.exists(os.path.join(out, "test_predictions.txt"))
    assert "bert/encoder/layer_1/output/dense/kernel" not in read_tensors(
        tf.train.latest_checkpoint(out)
    )
    assert assert_resumes(out, steps, 10, run) == metrics


def write_squad(path, rng, count, answers=True):
    """Contexts that say what the code is; the question asks it."""
    paragraphs = []
    for i in range(count):
        code = rng.choice(CODES)
        before = " ".join(rng.choice(FILLER) for _ in range(rng.randrange(2, 8)))
        context = f"{before} the code is {code} ."
        qa = {"id": f"q{i}", "question": "what is the code ?", "answers": []}
        if answers:
            qa["answers"] = [{"text": code, "answer_start": context.index(f"is {code}") + 3}]
        paragraphs.append({"context": context, "qas": [qa]})
    with open(path, "w") as f:
        json.dump({"version": "1.1", "data": [{"title": "t", "paragraphs": paragraphs}]}, f)
    return str(path)


@pytest.mark.large
def test_squad_distillation_runs_end_to_end_and_resumes(tmp_path):
    """With intermediate losses (cosine, value relations, embeddings)."""
    vocab, config = tiny_model_files(str(tmp_path), [*SPECIAL, *FILLER, *CODES, *QUESTION, "code"])
    rng = random.Random(0)
    train = write_squad(tmp_path / "train.json", rng, 40)
    dev = write_squad(tmp_path / "dev.json", rng, 8)
    unlabelled = write_squad(tmp_path / "more.json", rng, 24, answers=False)

    def squad_options(output_dir, **more):
        return build(
            SquadOptions,
            vocab_file=vocab,
            bert_config_file=config,
            output_dir=output_dir,
            train_file=train,
            predict_file=dev,
            max_seq_length=24,
            doc_stride=8,
            max_query_length=6,
            train_batch_size=8,
            predict_batch_size=8,
            learning_rate=1e-3,
            seed=3,
            do_train=True,
            **more,
        )

    teacher = str(tmp_path / "teacher")
    run_squad(squad_options(teacher, num_train_epochs=2.0))

    def run(output_dir):
        return run_squad(
            squad_options(
                output_dir,
                teacher=teacher,
                student_num_layers=1,
                unlabeled_file=unlabelled,
                cosine_distillation_weight=1.0,
                value_relation_distillation_weight=1.0,
                embedding_distillation_weight=1.0,
                num_train_epochs=1.0,
                save_checkpoints_steps=4,
                deterministic=True,
                do_predict=True,
            )
        )

    out = str(tmp_path / "student")
    scores = run(out)
    assert set(scores) >= {"exact_match", "f1"}
    assert os.path.exists(os.path.join(out, "predictions.json"))
    last = int(tf.train.latest_checkpoint(out).rsplit("-", 1)[1])
    assert last == (40 + 24) // 8  # one window a question here, 8 a batch
    assert assert_resumes(out, last, 4, run) == scores


def test_a_ner_teacher_of_other_labels_is_an_error_before_any_feature(ner_setup, tmp_path):
    vocab, config, data, teacher, _ = ner_setup
    out = str(tmp_path / "student")
    with pytest.raises(InputError, match=r"was trained on the labels \['O', 'B-LOC', 'B-PER'\]"):
        run_ner(
            ner_options(
                vocab,
                config,
                data,
                out,
                teacher=teacher,
                student_num_layers=1,
                labels="O,B-PER,B-LOC",
            )
        )
    assert not os.path.exists(os.path.join(out, "train.tf_record"))
