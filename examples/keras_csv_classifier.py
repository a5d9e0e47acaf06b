r"""Fine-tunes a BERT classifier on CSV files with Keras: `compile` / `fit` on raw text.

Shows bert_tf's Keras path: `BertClassifier.from_pretrained` on a released
checkpoint, `fit` on the texts and label names of a CSV file with `text` and
`label` columns (labels are names, kept in sorted order as the model's
`label_names`), the dev set's probabilities and accuracy, and three ways to
keep the model: a `.keras` file, a SavedModel for TF Serving (raw text in,
see serve_saved_model.py) and a checkpoint with the original TF1 names, which
`run_classifier.py --init_checkpoint` and every other tool read.

On real data: a Google release (or a Hugging Face BERT folder) and your CSVs:

  python examples/keras_csv_classifier.py --model=uncased_L-12_H-768_A-12 \
      --train_csv=train.csv --dev_csv=dev.csv --output_dir=keras_out \
      --epochs=3 --batch_size=32 --learning_rate=2e-5 --max_seq_length=128

Writes to --output_dir: classifier.keras, export/ (SavedModel), model.ckpt
(TF1 names) and dev_predictions.csv (text, label, predicted, one probability
column per label name); prints the dev accuracy.
"""

import argparse
import csv
import math
import os

import keras
import numpy as np

import bert_tf
from bert_tf import checkpoints
from bert_tf.export import export_classifier


def read_csv(path):
    """`(texts, labels)` of a CSV file with a header naming `text` and `label`."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return [row["text"] for row in rows], [row["label"] for row in rows]


def softmax(logits):
    exp = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return exp / exp.sum(axis=-1, keepdims=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--model", required=True, help="checkpoint folder (bert_config.json, vocab.txt)"
    )
    parser.add_argument("--train_csv", required=True)
    parser.add_argument("--dev_csv", required=True)
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--learning_rate", type=float, default=2e-5)
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    keras.utils.set_random_seed(args.seed)
    texts, labels = read_csv(args.train_csv)
    dev_texts, dev_labels = read_csv(args.dev_csv)
    names = sorted(set(labels))
    classifier = bert_tf.BertClassifier.from_pretrained(
        args.model, label_names=names, max_seq_length=args.max_seq_length
    )
    # The original AdamW: warm-up over the first 10% of the steps, then linear decay.
    steps = args.epochs * math.ceil(len(texts) / args.batch_size)
    classifier.compile(learning_rate=args.learning_rate, num_train_steps=steps)
    classifier.fit(texts, labels, batch_size=args.batch_size, epochs=args.epochs, verbose=2)

    probabilities = softmax(classifier.predict(dev_texts, batch_size=args.batch_size, verbose=0))
    predicted = [names[i] for i in probabilities.argmax(axis=-1)]
    accuracy = np.mean([p == g for p, g in zip(predicted, dev_labels)])
    print(f"dev accuracy: {accuracy:.4f} ({len(dev_texts)} examples)")

    os.makedirs(args.output_dir, exist_ok=True)
    with open(os.path.join(args.output_dir, "dev_predictions.csv"), "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["text", "label", "predicted", *names])
        for row in zip(dev_texts, dev_labels, predicted, probabilities.tolist()):
            writer.writerow([*row[:3], *row[3]])
    classifier.save(os.path.join(args.output_dir, "classifier.keras"))
    export_classifier(classifier, os.path.join(args.output_dir, "export"), overwrite=True)
    checkpoints.save_tf1_checkpoint(classifier, os.path.join(args.output_dir, "model.ckpt"))


if __name__ == "__main__":
    main()
