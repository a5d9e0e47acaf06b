"""Peak memory of `export_model.py --export_format=onnx`, against the weights.

For each model size, a BertClassifier with random weights is exported as the
scripts export it (float32 SavedModel), then converted to ONNX in a process
of its own, which reports its resident memory after its imports and its peak
(ru_maxrss). Prints the weights' size, the export's peak over its imports,
their ratio (issue #41 asks for at most 4x), the export's time and the
largest difference between the ONNX model's and the SavedModel's
probabilities on the same token ids.

    python bench/onnx_export_memory.py [--configs=base,large]
"""

import json
import os
import subprocess
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
from absl import app, flags  # noqa: E402

SIZES = {
    "tiny": dict(hidden_size=128, num_hidden_layers=2, num_attention_heads=2),
    "base": dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12),
    "large": dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16),
}
VOCAB_SIZE = 30522
SEQ = 128

flags.DEFINE_list("configs", ["base"], f"Model sizes: {', '.join(SIZES)}.")
FLAGS = flags.FLAGS

# Run in a fresh process: the imports an export needs, then the export.
EXPORT = """
import json, os, resource, sys, time
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import onnx, onnxruntime.quantization, tensorflow, tf2onnx
from bert_tf.export.deploy import convert

def resident_mb():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) / 1024 for line in f if line.startswith("VmRSS"))

imported = resident_mb()
start = time.perf_counter()
convert(sys.argv[1], sys.argv[2], "onnx")
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"imported_mb": imported, "peak_mb": peak, "seconds": seconds}))
"""


def saved_model(size, folder):
    from bert_tf.config import BertConfig
    from bert_tf.export.classifier import export_classifier
    from bert_tf.modeling import BertClassifier

    vocab = os.path.join(folder, "vocab.txt")
    with open(vocab, "w") as f:
        special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        f.write("\n".join(special + [f"w{i}" for i in range(VOCAB_SIZE - 5)]) + "\n")
    config = BertConfig(
        vocab_size=VOCAB_SIZE,
        intermediate_size=4 * SIZES[size]["hidden_size"],
        max_position_embeddings=512,
        type_vocab_size=2,
        **SIZES[size],
    )
    model = BertClassifier(config, num_labels=2)
    return export_classifier(model, os.path.join(folder, "saved_model"), vocab, True, SEQ)


def largest_difference(saved_model_dir, onnx_file):
    import onnxruntime
    import tensorflow as tf

    rng = np.random.default_rng(0)
    ids = rng.integers(5, VOCAB_SIZE, (8, SEQ)).astype(np.int32)
    mask = (np.arange(SEQ) < rng.integers(16, SEQ + 1, (8, 1))).astype(np.int32)
    inputs = {"input_word_ids": ids * mask, "input_mask": mask, "input_type_ids": 0 * mask}
    expected = tf.saved_model.load(saved_model_dir).signatures["serving_ids"](**inputs)
    session = onnxruntime.InferenceSession(onnx_file, providers=["CPUExecutionProvider"])
    names = [output.name for output in session.get_outputs()]
    got = dict(zip(names, session.run(None, inputs)))
    return float(np.abs(got["probabilities"] - expected["probabilities"].numpy()).max())


def main(argv):
    del argv
    rows = []
    for size in FLAGS.configs:
        with tempfile.TemporaryDirectory() as work:
            source = saved_model(size, work)
            variables = os.path.join(source, "variables")
            weights_mb = (
                sum(
                    os.path.getsize(os.path.join(variables, name)) for name in os.listdir(variables)
                )
                / 2**20
            )
            onnx_file = os.path.join(work, "model.onnx")
            run = subprocess.run(
                [sys.executable, "-c", EXPORT, source, onnx_file],
                capture_output=True,
                text=True,
                check=True,
            )
            report = json.loads(run.stdout.strip().splitlines()[-1])
            over = report["peak_mb"] - report["imported_mb"]
            difference = largest_difference(source, onnx_file)
            rows.append((size, weights_mb, over, report, difference))
    print(
        f"\n{'model':<8}{'weights MB':>12}{'peak over imports MB':>22}{'ratio':>8}"
        f"{'export s':>10}{'max |diff|':>12}"
    )
    for size, weights_mb, over, report, difference in rows:
        print(
            f"{size:<8}{weights_mb:>12.0f}{over:>22.0f}{over / weights_mb:>7.2f}x"
            f"{report['seconds']:>10.1f}{difference:>12.1e}"
        )


if __name__ == "__main__":
    app.run(main)
