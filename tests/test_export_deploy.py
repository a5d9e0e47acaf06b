"""export_model.py's formats: LiteRT (the tokenizer inside) and ONNX, float32
and int8, from a small classifier trained here on a learnable set.

Each converted model is run in a process that does not import bert_tf, on
raw text (LiteRT) and on token ids, and compared with the SavedModel's
outputs; the LiteRT tokenizer and packing are compared with the original's
`FullTokenizer` and `_truncate_seq_pair`."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
from shared import minilm_dir

from bert_tf.config import BertConfig
from bert_tf.data.classification.processor import InputExample
from bert_tf.errors import InputError
from bert_tf.export.classifier import export_classifier
from bert_tf.export.deploy import accuracy_check, convert, format_name, formats, onnx_export
from bert_tf.export.deploy.litert import (
    fast_tokenizer,
    lower_casing_differences,
    pack_dense,
    read_vocab,
)
from bert_tf.modeling import BertClassifier
from bert_tf.text.tokenization import FullTokenizer

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
POSITIVE = ["good", "great", "fine", "lovely"]
NEGATIVE = ["bad", "awful", "poor", "dull"]
NEUTRAL = ["the", "movie", "was", "very", "plot", "and", "it", "a", "film", "."]
WORDS = SPECIAL + POSITIVE + NEGATIVE + NEUTRAL
SEQ = 16
LABELS = ["neg", "pos"]
INPUT_NAMES = ("input_word_ids", "input_mask", "input_type_ids")


def sentences(count, seed):
    """Texts of neutral words and one sentiment word; the label is its kind."""
    rng = np.random.default_rng(seed)
    texts, labels = [], []
    for _ in range(count):
        words = list(rng.choice(NEUTRAL, rng.integers(2, 9)))
        label = int(rng.integers(2))
        words.insert(int(rng.integers(len(words) + 1)), rng.choice([NEGATIVE, POSITIVE][label]))
        texts.append(" ".join(words).capitalize())
        labels.append(label)
    return texts, labels


def original_packing(tokens_a, tokens_b, max_seq_length):
    """The original run_classifier's `_truncate_seq_pair` and packing, on ids:
    an empty b (given or left by truncation) makes a single text (`if tokens_b:`)."""
    tokens_a, tokens_b = list(tokens_a), list(tokens_b or [])
    if not tokens_b:
        tokens_a = tokens_a[: max_seq_length - 2]
    else:
        while len(tokens_a) + len(tokens_b) > max_seq_length - 3:
            (tokens_a if len(tokens_a) > len(tokens_b) else tokens_b).pop()
    ids = [2, *tokens_a, 3]
    types = [0] * len(ids)
    if tokens_b:
        ids += [*tokens_b, 3]
        types += [1] * (len(tokens_b) + 1)
    pad = [0] * (max_seq_length - len(ids))
    return ids + pad, [1] * len(ids) + pad, types + pad


def original_inputs(tokenizer, texts):
    """Model inputs of single `texts` as the original tokenizes and packs them."""
    rows = [
        original_packing(tokenizer.convert_tokens_to_ids(tokenizer.tokenize(t)), None, SEQ)
        for t in texts
    ]
    return {
        name: np.array([row[i] for row in rows], np.int32)
        for i, name in enumerate(("input_word_ids", "input_mask", "input_type_ids"))
    }


@pytest.fixture(scope="module")
def classifier(tmp_path_factory, calibration):
    """A SavedModel of a tiny classifier trained on `sentences`, its dev
    file and vocab, and its conversion to every format."""
    root = tmp_path_factory.mktemp("deploy")
    vocab = root / "vocab.txt"
    vocab.write_text("\n".join(WORDS) + "\n")
    tokenizer = FullTokenizer(str(vocab), do_lower_case=True)
    config = BertConfig(
        vocab_size=len(WORDS),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=SEQ,
        type_vocab_size=2,
    )
    tf.keras.utils.set_random_seed(calibration.seed(0))
    model = BertClassifier(config, num_labels=2)
    texts, labels = sentences(256, seed=calibration.seed(1))
    inputs = original_inputs(tokenizer, texts)
    model.compile(
        tf.keras.optimizers.Adam(1e-3),
        tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    model.fit(inputs, np.array(labels), batch_size=32, epochs=8, verbose=0)
    saved_model = export_classifier(
        model, str(root / "saved_model"), str(vocab), True, SEQ, label_names=LABELS
    )
    dev_texts, dev_labels = sentences(64, seed=calibration.seed(2))
    data_dir = root / "data"
    data_dir.mkdir()
    (data_dir / "dev.tsv").write_text(
        "sentence\tlabel\n" + "".join(f"{t}\t{LABELS[y]}\n" for t, y in zip(dev_texts, dev_labels))
    )
    paths = {
        fmt: convert(saved_model, str(root / f"{fmt}.{fmt.split('_')[0]}"), fmt)
        for fmt in ("litert", "litert_int8", "onnx", "onnx_int8")
    }
    return saved_model, data_dir, dev_texts, paths, root


# Loads each format with its runtime only (and tensorflow-text's LiteRT
# kernels), runs it on raw text and on token ids, saves the outputs.
RUN_WITHOUT_BERT_TF = """
import sys, numpy as np
import onnxruntime
from ai_edge_litert.interpreter import InterpreterWithCustomOps
from tensorflow_text.core.pybinds import tflite_registrar
paths, texts, ids, out = sys.argv[1].split(","), sys.argv[2].split("|"), np.load(sys.argv[3]), {}
for path in paths:
    if "onnx" in path:
        session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
        names = [o.name for o in session.get_outputs()]
        result = dict(zip(names, session.run(None, dict(ids))))
    else:
        interpreter = InterpreterWithCustomOps(
            model_path=path, custom_op_registerers=tflite_registrar.SELECT_TFTEXT_OPS)
        result = interpreter.get_signature_runner("serving_ids")(**ids)
        text = interpreter.get_signature_runner("serving_default")(
            text_a=np.array([t.encode() for t in texts], dtype=object))
        result |= {"text_" + k: v for k, v in text.items()}
    out |= {path + ":" + k: v.astype(str) if v.dtype == object else v for k, v in result.items()}
assert "bert_tf" not in sys.modules
np.savez(sys.argv[4], **out)
"""


# The tests on `classifier` train a model and compare floats that depend on the CPU's kernels.
@pytest.mark.learning
@pytest.mark.numerics
def test_formats_equal_the_saved_model_in_a_process_without_bert_tf(classifier, calibration):
    saved_model, _, dev_texts, paths, root = classifier
    loaded = tf.saved_model.load(saved_model)
    reference_text = loaded.signatures["serving_default"](text_a=tf.constant(dev_texts))
    tokenizer = FullTokenizer(os.path.join(saved_model, "assets", "vocab.txt"), True)
    ids = original_inputs(tokenizer, dev_texts)
    np.savez(root / "ids.npz", **ids)
    reference = loaded.signatures["serving_ids"](**ids)
    subprocess.run(
        [
            sys.executable,
            "-c",
            RUN_WITHOUT_BERT_TF,
            ",".join(paths.values()),
            "|".join(dev_texts),
            str(root / "ids.npz"),
            str(root / "outputs.npz"),
        ],
        check=True,
        cwd=root,
    )
    outputs = np.load(root / "outputs.npz")
    probabilities = reference["probabilities"].numpy()
    labels = reference["labels"].numpy().astype(str)
    # The texts tokenized and packed inside the LiteRT model: as the SavedModel.
    np.testing.assert_array_equal(reference_text["labels"].numpy().astype(str), labels)
    margin = np.abs(probabilities[:, 1] - probabilities[:, 0])
    for fmt, path in paths.items():
        got = {
            key.split(":")[-1]: outputs[key] for key in outputs.files if key.startswith(path + ":")
        }
        kinds = [""] + (["text_"] if fmt.startswith("litert") else [])
        for kind in kinds:
            error = np.abs(got[kind + "probabilities"] - probabilities).max()
            if fmt.endswith("_int8"):
                calibration.record(**{f"{fmt}_{kind}error": error})
                # Measured: LiteRT at most 9.3e-05, ONNX 0.026 (4 seeds x 2 CPU settings).
                assert error < 0.05, (fmt, kind, error)
                # Labels may differ only where the float model is nearly undecided.
                changed = got[kind + "labels"] != labels
                assert np.all(margin[changed] < 2 * error), (fmt, kind, margin[changed])
            else:
                assert error < 1e-4, (fmt, kind, error)
                np.testing.assert_array_equal(got[kind + "labels"], labels)
    calibration.record(min_margin=margin.min(), accuracy_margin=np.mean(margin > 0.1))


@pytest.mark.learning
@pytest.mark.numerics
def test_export_model_script_checks_dev_accuracy_and_refuses_past_the_drop(classifier, calibration):
    saved_model, data_dir, _, _, root = classifier
    output = root / "checked.tflite"
    flags = [
        f"--saved_model_dir={saved_model}",
        "--export_format=litert",
        "--int8",
        "--task_name=generic",
        f"--data_dir={data_dir}",
        "--text_a_column=sentence",
        "--label_column=label",
        f"--labels={','.join(LABELS)}",
    ]
    script = os.path.join(REPO, "export_model.py")
    done = subprocess.run(
        [sys.executable, script, *flags, f"--output_file={output}"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads((root / "checked.tflite.accuracy.json").read_text())
    assert report["examples"] == 64 and report["format"] == "litert_int8" and report["written"]
    calibration.record(
        accuracy=report["saved_model_accuracy"],
        int8_accuracy_change=report["litert_int8_accuracy"] - report["saved_model_accuracy"],
    )
    # The trained model separates the dev set; int8 keeps (nearly) every label.
    assert report["saved_model_accuracy"] > 0.9, report
    assert abs(report["litert_int8_accuracy"] - report["saved_model_accuracy"]) <= 0.02, report
    assert f"dev accuracy on 64 examples: SavedModel {report['saved_model_accuracy']:.4f}" in (
        done.stdout
    )
    assert output.stat().st_size > 0

    refused = root / "refused.onnx"
    done = subprocess.run(
        [
            sys.executable,
            script,
            *flags,
            "--export_format=onnx",
            "--max_accuracy_drop=-100",
            f"--output_file={refused}",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2, done.stderr[-3000:]
    error = done.stderr.strip().splitlines()[-1]
    assert error.startswith("error: dev accuracy on 64 examples") and "not written" in error
    assert not refused.exists()
    assert json.loads((root / "refused.onnx.accuracy.json").read_text())["written"] is False


@pytest.mark.learning
def test_unsupported_requests_get_one_line_errors(classifier, monkeypatch):
    saved_model, _, _, _, root = classifier
    with pytest.raises(InputError, match="--export_format must be litert or onnx, got 'tflite'"):
        format_name("tflite", False)
    with pytest.raises(InputError, match="holds no SavedModel"):
        convert(str(root), str(root / "x.tflite"), "litert")
    text_only = tf.Module()
    text_only.serve = tf.function(
        lambda text: {"length": tf.strings.length(text)},
        input_signature=[tf.TensorSpec([None], tf.string)],
    )
    tf.saved_model.save(text_only, str(root / "text_only"), signatures=text_only.serve)
    with pytest.raises(InputError, match="has no 'serving_ids' signature .token ids in."):
        convert(str(root / "text_only"), str(root / "x.tflite"), "litert")
    assert not (root / "x.tflite").exists()
    monkeypatch.setattr(onnx_export, "available_memory", lambda: 1e9)
    with pytest.raises(InputError, match=r"the export needs about \d+ GB of memory .* 1.0 GB are"):
        convert(saved_model, str(root / "x.onnx"), "onnx")
    monkeypatch.undo()
    monkeypatch.setitem(sys.modules, "tf2onnx", None)
    with pytest.raises(
        InputError, match=r"onnx needs tf2onnx and onnxruntime \(tf2onnx is missing"
    ):
        convert(saved_model, str(root / "x.onnx"), "onnx")
    assert not (root / "x.onnx").exists()


def test_onnx_text_path_tokenizes_with_the_given_casing(tmp_path, monkeypatch):
    """ONNX takes ids: its text path (the dev check) tokenizes with --do_lower_case,
    which the SavedModel does not record. Stand-ins keep it fast: a SavedModel of the
    two signatures the path reads, and an ONNX runner that records the ids it gets."""
    module = tf.Module()
    ids_spec = [tf.TensorSpec([None, 8], tf.int32, name) for name in INPUT_NAMES]
    module.ids = tf.function(
        lambda input_word_ids, input_mask, input_type_ids: {"labels": input_mask[:, 0]},
        input_signature=ids_spec,  # only its input length is read
    )
    module.text = tf.function(
        lambda text_a: {"labels": tf.fill(tf.shape(text_a), "neg")},
        input_signature=[tf.TensorSpec([None], tf.string, "text_a")],
    )
    saved_model = str(tmp_path / "saved_model")
    tf.saved_model.save(
        module, saved_model, {"serving_ids": module.ids, "serving_default": module.text}
    )
    os.makedirs(os.path.join(saved_model, "assets"), exist_ok=True)
    with open(os.path.join(saved_model, "assets", "vocab.txt"), "w") as f:
        f.write("".join(f"{t}\n" for t in [*SPECIAL, "John", "john", "met"]))
    seen = []

    def onnx_runner(path, fmt):
        def run(inputs):
            seen.append(inputs["input_word_ids"].tolist())
            return {"labels": np.array([b"neg"] * len(inputs["input_word_ids"]))}

        return run

    monkeypatch.setattr(formats, "load_runner", onnx_runner)
    examples = [InputExample("dev-0", "John met john", label="neg")]
    for do_lower_case, john in ((False, 5), (True, 6)):
        report = accuracy_check(saved_model, "model.onnx", "onnx", examples, do_lower_case)
        assert report["onnx_accuracy"] == 1.0
        assert seen.pop() == [[2, john, 7, 6, 3, 0, 0, 0]], do_lower_case


@pytest.mark.parametrize("seq", [SEQ, 3, 4])  # at 3 and 4 truncation can empty b
def test_litert_packing_is_the_original_truncation(seq):
    rng = np.random.default_rng(seq)
    for pairs in (False, True):
        lengths = rng.integers(0, 2 * SEQ, (200, 2))
        lengths[::5, 1] = 0  # pairs with an empty b
        tokens_a = [list(rng.integers(5, 50, n)) for n in lengths[:, 0]]
        tokens_b = [list(rng.integers(5, 50, n)) for n in lengths[:, 1]] if pairs else None
        packed = pack_dense(
            tf.ragged.constant(tokens_a, tf.int32, ragged_rank=1, row_splits_dtype=tf.int64),
            None
            if tokens_b is None
            else tf.ragged.constant(tokens_b, tf.int32, ragged_rank=1, row_splits_dtype=tf.int64),
            seq,
            cls_id=2,
            sep_id=3,
        )
        for i in range(len(tokens_a)):
            want = original_packing(tokens_a[i], None if tokens_b is None else tokens_b[i], seq)
            got = [packed[name][i].numpy().tolist() for name in packed]
            assert got == list(want), (pairs, lengths[i])


def test_litert_tokenizer_gives_full_tokenizer_ids_on_text():
    vocab_file = os.path.join(minilm_dir(), "vocab.txt")
    texts = [
        line
        for name in ("corpus.txt", "classify/dev.tsv")
        for line in open(os.path.join(REPO, "demo", "data", name), encoding="utf-8")
        if line.strip()
    ][:2000]
    texts += ["Über café naïve", "北京大学的学生在图书馆里看书。", "tab\there  «quoted» 3.5%"]
    # Lower-cased otherwise by tensorflow-text (compatibility mappings).
    different = ["Straße", "ﬁne", "学生，图书馆", "x²"]
    for do_lower_case in (True, False):
        original = FullTokenizer(vocab_file, do_lower_case)
        fast = fast_tokenizer(read_vocab(vocab_file), do_lower_case)
        got = fast.tokenize(tf.constant(texts + different)).to_list()
        for i, (text, ids) in enumerate(zip(texts + different, got)):
            equal = ids == original.convert_tokens_to_ids(original.tokenize(text))
            assert equal == (i < len(texts) or not do_lower_case), (text, do_lower_case)
    differences = lower_casing_differences(read_vocab(vocab_file))
    assert len(differences) == 221 and {"ß", "²", "，"} <= set(differences)


def test_onnx_export_says_what_its_long_steps_do(tmp_path, monkeypatch, caplog):
    """tf2onnx takes about a minute on a small BERT, the quantizer more
    seconds, both silently: a line says when each starts. Stand-ins keep it
    fast: a SavedModel with a `serving_ids` signature, converters that copy."""
    module = tf.Module()
    module.scale = tf.Variable(2, dtype=tf.int32)
    module.ids = tf.function(
        lambda input_word_ids, input_mask, input_type_ids: {
            "label_ids": input_word_ids[:, 0] * module.scale
        },
        input_signature=[tf.TensorSpec([None, 8], tf.int32, name) for name in INPUT_NAMES],
    )
    saved_model = str(tmp_path / "saved_model")
    tf.saved_model.save(module, saved_model, {"serving_ids": module.ids})
    steps = []

    def convert_graph(*args, **kwargs):
        steps.append("tf2onnx")
        return onnx.helper.make_model(onnx.helper.make_graph([], "stand-in", [], [])), None

    def quantize(source, target, **kwargs):
        steps.append("quantize")
        with open(source, "rb") as f, open(target, "wb") as g:
            g.write(f.read())

    import onnx
    import onnxruntime.quantization
    import tf2onnx

    monkeypatch.setattr(tf2onnx.convert, "from_graph_def", convert_graph)
    monkeypatch.setattr(onnxruntime.quantization, "quantize_dynamic", quantize)
    caplog.set_level("INFO", logger="absl")
    convert(saved_model, str(tmp_path / "model.onnx"), "onnx_int8")
    assert steps == ["tf2onnx", "quantize"]
    lines = [record.getMessage() for record in caplog.records]
    converting = [i for i, line in enumerate(lines) if line.startswith("converting to ONNX")]
    quantizing = [i for i, line in enumerate(lines) if line.startswith("quantizing")]
    assert converting and quantizing and converting[0] < quantizing[0], lines
    assert "tf2onnx" in lines[converting[0]] and "minute" in lines[converting[0]]


@pytest.mark.numerics
def test_onnx_weights_behind_a_transpose_are_stored_transposed(tmp_path):
    """The export takes the large weights out of the graph tf2onnx converts
    and stores them as initializers; a weight only read transposed (as the
    classifier's `[labels, hidden]` output_weights) is stored transposed, its
    Transpose dropped. A stand-in SavedModel (a real conversion of the tiny
    BERT takes seconds more) with such weights, square (a weight left
    untransposed still fits: only the outputs tell) and not, and one also
    read untransposed (stored as it is, its Transpose kept); onnxruntime's
    outputs are the SavedModel's."""
    import onnx
    import onnxruntime

    rng = np.random.default_rng(0)
    module = tf.Module()
    # 1024 values and more: WEIGHT_MIN_SIZE, taken out of the graph.
    module.embeddings = tf.Variable(rng.normal(size=(40, 32)), dtype=tf.float32)
    module.square = tf.Variable(rng.normal(size=(32, 32)), dtype=tf.float32)
    module.wide = tf.Variable(rng.normal(size=(48, 32)), dtype=tf.float32)
    module.both = tf.Variable(rng.normal(size=(32, 32)), dtype=tf.float32)

    def ids(input_word_ids, input_mask, input_type_ids):
        # Tokens of the second segment count twice.
        mask = tf.cast(input_mask * (1 + input_type_ids), tf.float32)[..., None]
        pooled = tf.reduce_sum(tf.gather(module.embeddings, input_word_ids) * mask, 1)
        return {
            "square": tf.matmul(pooled, tf.transpose(module.square)),
            "wide": tf.matmul(pooled, module.wide, transpose_b=True),
            "both": tf.matmul(pooled, module.both, transpose_b=True)
            + tf.matmul(pooled, module.both),
        }

    module.ids = tf.function(
        ids, input_signature=[tf.TensorSpec([None, 8], tf.int32, name) for name in INPUT_NAMES]
    )
    saved_model = str(tmp_path / "saved_model")
    tf.saved_model.save(module, saved_model, {"serving_ids": module.ids})
    path = convert(saved_model, str(tmp_path / "model.onnx"), "onnx")

    graph = onnx.load(path).graph
    assert [tensor.name for tensor in graph.input] == list(INPUT_NAMES)
    # Stored: the embeddings, `both` as it is, `square` and `wide` transposed.
    stored = sorted(tuple(t.dims) for t in graph.initializer if np.prod(t.dims) >= 1024)
    assert stored == [(32, 32), (32, 32), (32, 48), (40, 32)]
    assert [node.op_type for node in graph.node].count("Transpose") == 1
    inputs = {
        "input_word_ids": rng.integers(0, 40, (3, 8)).astype(np.int32),
        "input_mask": (np.arange(8) < np.array([[8], [5], [2]])).astype(np.int32),
        "input_type_ids": (np.arange(8) >= 6).astype(np.int32)[None].repeat(3, 0),
    }
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    got = dict(zip([o.name for o in session.get_outputs()], session.run(None, inputs)))
    expected = module.ids(**inputs)
    assert sorted(got) == ["both", "square", "wide"]
    for name, value in got.items():
        np.testing.assert_allclose(value, expected[name].numpy(), rtol=1e-4, atol=1e-3)


@pytest.mark.large
@pytest.mark.numerics
def test_onnx_of_a_bert_base_shaped_classifier_equals_the_saved_model(tmp_path):
    """BERT-Base's layer shapes (768 hidden, 12 heads, 3072 intermediate; two
    layers, a small vocabulary): every weight comes back as an initializer,
    the classifier's `transpose_b` one included, and the outputs are the
    SavedModel's. The export's memory is measured by bench/onnx_export_memory.py."""
    from shared import with_random_weights

    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(SPECIAL + [f"w{i}" for i in range(995)]) + "\n")
    config = BertConfig(
        vocab_size=1000,
        hidden_size=768,
        num_hidden_layers=2,
        num_attention_heads=12,
        intermediate_size=3072,
        max_position_embeddings=128,
        type_vocab_size=2,
    )
    model = BertClassifier(config, num_labels=3)
    with_random_weights(model)
    saved_model = export_classifier(model, str(tmp_path / "saved_model"), str(vocab), True, 128)
    path = str(tmp_path / "model.onnx")
    convert(saved_model, path, "onnx")

    import onnx
    import onnxruntime

    graph = onnx.load(path).graph
    assert [tensor.name for tensor in graph.input] == list(INPUT_NAMES)
    stored = sum(int(np.prod(tensor.dims)) for tensor in graph.initializer)
    assert model.count_params() <= stored < model.count_params() + 10_000
    rng = np.random.default_rng(0)
    ids = {
        "input_word_ids": rng.integers(5, 1000, (4, 128)).astype(np.int32),
        "input_mask": (np.arange(128) < rng.integers(10, 129, (4, 1))).astype(np.int32),
        "input_type_ids": (np.arange(128) >= 40).astype(np.int32)[None].repeat(4, 0),
    }
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    got = dict(zip([o.name for o in session.get_outputs()], session.run(None, ids)))
    expected = tf.saved_model.load(saved_model).signatures["serving_ids"](**ids)
    np.testing.assert_allclose(got["probabilities"], expected["probabilities"].numpy(), atol=1e-4)
    assert got["label_ids"].tolist() == expected["label_ids"].numpy().tolist()


@pytest.mark.parametrize(
    "export_format, missing", [("litert", "ai_edge_litert"), ("onnx", "tf2onnx")]
)
def test_a_missing_deploy_extra_is_named_before_any_work(
    tmp_path, monkeypatch, export_format, missing
):
    """Without the deploy extra, export_model names it at once (after a
    --saved_model_dir that holds no SavedModel, which is named first)."""
    from bert_tf.export.deploy.conversion import convert_saved_model
    from bert_tf.options import build
    from bert_tf.tasks.options import ExportModelOptions

    module = tf.Module()
    module.serve = tf.function(lambda x: x + 1, input_signature=[tf.TensorSpec([None], tf.int32)])
    saved_model = str(tmp_path / "saved_model")
    tf.saved_model.save(module, saved_model, signatures=module.serve)
    monkeypatch.setitem(sys.modules, missing, None)

    def options(saved_model_dir):
        return build(
            ExportModelOptions,
            saved_model_dir=saved_model_dir,
            export_format=export_format,
            output_file=str(tmp_path / "model.out"),
        )

    with pytest.raises(InputError, match=r"^--saved_model_dir '\S+/nothing' holds no SavedModel$"):
        convert_saved_model(options(str(tmp_path / "nothing")))
    with pytest.raises(InputError) as raised:
        convert_saved_model(options(saved_model))
    assert str(raised.value) == (
        f"--export_format={export_format} needs {missing}, of the deploy extra: "
        "pip install 'bert_tf[deploy]'"
    )
    assert sorted(os.listdir(tmp_path)) == ["saved_model"]
