"""CONTRIBUTING.md's recipe for a new fine-tuning task, followed to the
letter for a small one (one sentence per line, `label<TAB>text`, two labels),
and run end to end. What the task writes is checked against its own model
run by hand on the same texts: the runner's plumbing (tokenizer, feature
files padded to the batch, dynamic padding and grouping by length, the
order restored, predict-then-score) must not change a number."""

import dataclasses
import os

import numpy as np
import pytest
import tensorflow as tf

from bert_tf import checkpoints
from bert_tf.config import BertConfig
from bert_tf.data import features as feature_files
from bert_tf.modeling import BertClassifier
from bert_tf.options import build, option
from bert_tf.tasks import fine_tuning
from bert_tf.tasks.classifier import ClassifierRunner
from bert_tf.tasks.fine_tuning import FineTuningRunner
from bert_tf.tasks.logits import ClassificationObjective, combine_windows, softmax
from bert_tf.tasks.multiple_choice import MultipleChoiceRunner
from bert_tf.tasks.ner import NerRunner
from bert_tf.tasks.options import FineTuningOptions
from bert_tf.tasks.run import run_task
from bert_tf.tasks.squad import SquadRunner
from bert_tf.text import tokenization
from bert_tf.text.packing import pack_inputs

# --- 1. The data module (bert_tf/data/<task>.py) -----------------------------

SPLIT_FILES = {"train": "train.tsv", "eval": "dev.tsv", "predict": "test.tsv"}


def schema(max_seq_length):
    return feature_files.FeatureSchema(
        [
            *feature_files.input_features(max_seq_length),
            feature_files.Feature("label_ids", 1, scalar=True),
            feature_files.Feature("is_real_example", 1, scalar=True),
            feature_files.Feature("example_index", 1, scalar=True),
        ],
        description="sentence label",
    )


def read_examples(path):
    """`(label, text)` of each line."""
    with open(path, encoding="utf-8") as f:
        return [tuple(line.rstrip("\n").split("\t")) for line in f if line.strip()]


def ensure_features(path, input_file, text, pad_to):
    tokenizer, max_seq_length = text.tokenizer, text.max_seq_length

    def write_records(writer):
        examples = read_examples(input_file)
        cls_id, sep_id = tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]"])
        rows = [(int(label), text) for label, text in examples]
        padding = -len(rows) % pad_to if pad_to else 0
        for index, (label, text) in enumerate(rows + [(0, "")] * padding):
            ids = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text))
            inputs = pack_inputs(ids, None, max_seq_length, cls_id, sep_id)
            record = {
                "input_ids": inputs["input_word_ids"],
                "input_mask": inputs["input_mask"],
                "segment_ids": inputs["input_type_ids"],
                "label_ids": [label],
                "is_real_example": [int(index < len(rows))],
                "example_index": [index],
            }
            writer.write(schema(max_seq_length).serialize(record))
        return len(rows), len(rows), len(rows) + padding

    fingerprint = {
        **feature_files.text_fingerprint(text),
        "input_file": feature_files.file_stamp(input_file),
        "pad_to": pad_to,
    }
    return feature_files.ensure_feature_file(path, fingerprint, write_records)


def make_dataset(path, max_seq_length, batch_size, is_training, **kwargs):
    return feature_files.make_dataset(
        path, schema(max_seq_length), batch_size, is_training, shard_by="records", **kwargs
    )


# --- 2. The runner (bert_tf/tasks/<task>.py) ---------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True)
class SentenceLabelOptions(FineTuningOptions):
    data_dir: str = option(help="Folder with train.tsv, dev.tsv and test.tsv.")


class SentenceLabelRunner(FineTuningRunner):
    make_dataset = staticmethod(make_dataset)

    def split_features(self, split, pad_to):
        options = self.options
        return ensure_features(
            os.path.join(options.run.output_dir, f"{split}.tf_record"),
            os.path.join(options.data_dir, SPLIT_FILES[split]),
            self.text,
            pad_to,
        )

    def build_model(self, config):
        return BertClassifier(config, 2)

    def objective(self):
        return ClassificationObjective(is_regression=False)

    def score(self, predictions):
        logits, labels = combine_windows(predictions)
        return {"eval_accuracy": float(np.mean(logits.argmax(axis=1) == labels))}

    def write_predictions(self, predictions):
        logits, _ = combine_windows(predictions)
        path = os.path.join(self.options.run.output_dir, "test_results.tsv")
        np.savetxt(path, softmax(logits), delimiter="\t")
        self.wrote("predictions", path)


# --- 3. The test ---------------------------------------------------------------

WORDS = ["good", "bad", "fine", "awful", "the", "film", "plot", "was", "very", "not"]


@pytest.fixture(scope="module")
def task_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("recipe")
    (root / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", *WORDS]) + "\n")
    BertConfig(
        vocab_size=len(WORDS) + 4,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=32,
    ).to_json_file(str(root / "bert_config.json"))
    rng = np.random.default_rng(0)
    for name, count in (("train.tsv", 24), ("dev.tsv", 11), ("test.tsv", 13)):
        lines = [
            f"{rng.integers(2)}\t{' '.join(rng.choice(WORDS, rng.integers(1, 12)))}"
            for _ in range(count)
        ]
        (root / name).write_text("\n".join(lines) + "\n")
    return root


@pytest.mark.numerics
def test_a_task_made_by_the_recipe_writes_what_its_model_computes(task_dir, tmp_path):
    options = build(
        SentenceLabelOptions,
        data_dir=str(task_dir),
        vocab_file=str(task_dir / "vocab.txt"),
        bert_config_file=str(task_dir / "bert_config.json"),
        output_dir=str(tmp_path / "out"),
        max_seq_length=16,
        do_train=True,
        do_eval=True,
        do_predict=True,
        train_batch_size=8,
        eval_batch_size=4,
        predict_batch_size=4,
        num_train_epochs=2.0,
        seed=1,
        steps_per_loop=2,
    )
    metrics = run_task(SentenceLabelRunner(options))
    assert metrics["global_step"] == 6  # 24 examples / 8 * 2 epochs

    model = BertClassifier(BertConfig.from_json_file(options.model.bert_config_file), 2)
    checkpoints.load_checkpoint(model, tf.train.latest_checkpoint(options.run.output_dir))
    tokenizer = tokenization.FullTokenizer(options.model.vocab_file, do_lower_case=True)

    def probabilities(split):
        rows = read_examples(task_dir / SPLIT_FILES[split])
        packed = [
            pack_inputs(tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text)), None, 16, 2, 3)
            for _, text in rows
        ]
        inputs = {k: np.array([p[k] for p in packed], np.int32) for k in packed[0]}
        logits = model(inputs, training=False).numpy().astype(np.float64)
        return softmax(logits), np.array([int(label) for label, _ in rows])

    dev, dev_labels = probabilities("eval")
    assert metrics["eval_accuracy"] == pytest.approx(np.mean(dev.argmax(axis=1) == dev_labels))
    test, _ = probabilities("predict")
    written = np.loadtxt(os.path.join(options.run.output_dir, "test_results.tsv"), delimiter="\t")
    np.testing.assert_allclose(written, test, atol=1e-5)


# What a task overrides beyond the contract, and why.
BEYOND_THE_CONTRACT = {
    # Windows of the predict file are made when predicting (post-processing
    # needs them then), and every batch has the static --max_seq_length shape.
    "SquadRunner": {"prepare", "batch_size_options", "pads_dynamically", "dev_results"},
}
# The hooks a task leaves out, and why.
WITHOUT = {"SquadRunner": {"score"}}  # no --do_eval: the predictions are scored


@pytest.mark.parametrize(
    "runner",
    [SentenceLabelRunner, ClassifierRunner, MultipleChoiceRunner, NerRunner, SquadRunner],
    ids=lambda runner: runner.__name__,
)
def test_a_task_defines_the_six_hooks_and_overrides_only_the_contract(runner):
    """The contract a task must know is `fine_tuning.TASK_HOOKS` (all
    defined) and `OPTIONAL_HOOKS`; nothing else of the skeleton is overridden."""
    skeleton = {
        name
        for base in runner.__mro__[1:]
        if base.__module__.startswith("bert_tf.tasks.")
        and base.__name__ in ("FineTuningRunner", "TaskRunner")
        for name in vars(base)
        if not name.startswith("__")
    }
    own = {name for name in vars(runner) if not name.startswith("__")}
    assert set(fine_tuning.TASK_HOOKS) - own == WITHOUT.get(runner.__name__, set())
    beyond = own & skeleton - set(fine_tuning.TASK_HOOKS) - set(fine_tuning.OPTIONAL_HOOKS)
    assert beyond == BEYOND_THE_CONTRACT.get(runner.__name__, set())
