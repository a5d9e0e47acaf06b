r"""Answers a TF Serving REST request with a bert_tf SavedModel: raw text in, JSON out.

Shows what serving a bert_tf export takes: `tensorflow` and `tensorflow_text`
(whose import registers the in-graph tokenizer's ops), not bert_tf. The
request is TF Serving's row format, `{"instances": [{"text_a": ...}, ...]}`
(the signature's input names: `text_a`/`text_b` for run_classifier.py,
`question`/`context` for run_squad.py, `text` for run_ner.py); the answer is
what TF Serving's `:predict` returns, `{"predictions": [{output: value}, ...]}`
with one object per instance.

On real data: a SavedModel written by `run_classifier.py --export_dir=export`
(or run_squad.py, run_ner.py, keras_csv_classifier.py), and a request file:

  echo '{"instances": [{"text_a": "The cat sat.", "text_b": "A cat was sitting."}]}' > request.json
  python examples/serve_saved_model.py --export_dir=export --request=request.json

The same SavedModel under TF Serving (a build with the tensorflow-text ops):

  mkdir -p models/bert && cp -r export models/bert/1
  tensorflow_model_server --rest_api_port=8501 --model_name=bert --model_base_path=$PWD/models/bert
  curl -d @request.json http://localhost:8501/v1/models/bert:predict
"""

import argparse
import json

import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the tokenizer's ops)


def as_json(value):
    """A numpy value as JSON: bytes decoded, arrays as lists."""
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if hasattr(value, "tolist"):
        return as_json(value.tolist())
    if isinstance(value, list):
        return [as_json(v) for v in value]
    return value


def predict(signature, instances):
    """TF Serving's row format: the instances batched into one call of
    `signature`, each output split back into one value per instance."""
    _, inputs = signature.structured_input_signature
    batch = {
        name: tf.constant([row[name] for row in instances], spec.dtype)
        for name, spec in inputs.items()
    }
    outputs = {name: tensor.numpy() for name, tensor in signature(**batch).items()}
    return [
        {name: as_json(values[i]) for name, values in outputs.items()}
        for i in range(len(instances))
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--export_dir", required=True, help="a bert_tf SavedModel")
    parser.add_argument("--request", required=True, help='JSON file: {"instances": [...]}')
    parser.add_argument("--signature", default="serving_default")
    args = parser.parse_args()

    signature = tf.saved_model.load(args.export_dir).signatures[args.signature]
    with open(args.request, encoding="utf-8") as f:
        instances = json.load(f)["instances"]
    print(json.dumps({"predictions": predict(signature, instances)}, ensure_ascii=False))


if __name__ == "__main__":
    main()
