"""Contextual token vectors from chosen layers: what `extract_features.py` runs.

Input, as the original extract_features.py: one example per line, `text_a`
or `text_a ||| text_b`, packed like the classifier's inputs (truncated, no
windows). Output (`output_format`):

* `jsonl` (the original's format): one JSON object per line,
  `{"linex_index": i, "features": [{"token": "[CLS]", "layers": [{"index":
  -1, "values": [...]}, ...]}, ...]}` for every real token, values rounded
  to 6 decimals;
* `npz` (for large jobs, written as it goes): `values` float32
  `[total_tokens, num_layers, hidden]` (the examples' real tokens one after
  another), `offsets` int64 `[num_examples + 1]` (example i is rows
  `offsets[i]:offsets[i + 1]`), `tokens` `[total_tokens]` strings and
  `layers` int64 `[num_layers]`.
"""

import json
import re
import zipfile

import keras
import numpy as np
from absl import logging
from keras import ops

from bert_tf import checkpoints
from bert_tf.data.features import (
    Feature,
    FeatureSchema,
    input_features,
    make_dataset,
    write_record_file,
)
from bert_tf.errors import CheckpointError, InputError
from bert_tf.files import atomic_output, check_output_file, open_file, remove
from bert_tf.initializers import deferred_draws
from bert_tf.modeling import BertEncoder
from bert_tf.tasks.model_setup import (
    length_multiple,
    load_model_config,
    parse_layers,
    with_model_text,
)
from bert_tf.text import tokenization
from bert_tf.text.packing import pack_inputs
from bert_tf.training.distribution import check_batch_divisible, runtime_environment
from bert_tf.training.loop import Predictor

_PAIR = re.compile(r"^(.*) \|\|\| (.*)$")
OUTPUT_FORMATS = ("jsonl", "npz")


class LayerOutputs(keras.Model):
    """A `BertEncoder` returning only the chosen layers, stacked: float32
    `[batch, seq, len(layer_indexes), hidden]` (index -1 is the last layer)."""

    def __init__(self, config, layer_indexes, **kwargs):
        super().__init__(**kwargs)
        self.encoder = BertEncoder(config)
        self.layer_indexes = list(layer_indexes)

    def tf1_head_variables(self):
        return {}

    def call(self, inputs, training=None):
        layers = self.encoder(inputs, training=training, skip_padding=True)["encoder_outputs"]
        return ops.stack([ops.cast(layers[i], "float32") for i in self.layer_indexes], axis=2)


def read_examples(input_file):
    """Lines of `input_file` -> `(text_a, text_b or None)` pairs, as the original."""
    examples = []
    for _, line in tokenization.iter_utf8_lines(input_file):
        match = _PAIR.match(line.strip())
        examples.append((match.group(1), match.group(2)) if match else (line.strip(), None))
    if not examples:
        raise InputError(f"--input_file {input_file} has no lines")
    return examples


def _schema(max_seq_length):
    return FeatureSchema(
        [*input_features(max_seq_length), Feature("unique_ids", 1, scalar=True)],
        description="feature",
    )


def _check_options(options):
    """The options' own checks; returns the layer indexes."""
    check_output_file(options.output_file, "--output_file")
    if options.output_format not in OUTPUT_FORMATS:
        raise InputError(
            f"--output_format must be one of {', '.join(OUTPUT_FORMATS)}, got "
            f"{options.output_format!r}"
        )
    return list(parse_layers(options.layers))


def _write_input_records(path, options):
    """Packs every line of `--input_file` into records at `path` (padding
    records with unique id -1 fill the last batch); returns each example's
    tokens."""
    tokenizer = tokenization.FullTokenizer(options.model.vocab_file, options.model.do_lower_case)
    cls_id, sep_id = tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]"])
    tokens, packed = [], []
    for text_a, text_b in read_examples(options.input_file):
        ids_a = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text_a))
        ids_b = (
            tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text_b))
            if text_b is not None
            else None
        )
        inputs = pack_inputs(ids_a, ids_b, options.model.max_seq_length, cls_id, sep_id)
        length = sum(inputs["input_mask"])
        tokens.append(tokenizer.convert_ids_to_tokens(inputs["input_word_ids"][:length]))
        packed.append(inputs)
    tokenizer.check_unknown_share()
    schema = _schema(options.model.max_seq_length)
    padding = -len(packed) % options.batch_size
    zeros = [0] * options.model.max_seq_length

    def write_records(writer):
        for index, inputs in enumerate(packed):
            writer.write(
                schema.serialize(
                    {
                        "input_ids": inputs["input_word_ids"],
                        "input_mask": inputs["input_mask"],
                        "segment_ids": inputs["input_type_ids"],
                        "unique_ids": [index],
                    }
                )
            )
        for _ in range(padding):
            writer.write(
                schema.serialize(
                    {
                        "input_ids": zeros,
                        "input_mask": zeros,
                        "segment_ids": zeros,
                        "unique_ids": [-1],
                    }
                )
            )

    write_record_file(path, write_records)
    return tokens


def _load_encoder(model, path):
    """Every encoder variable must come from `--init_checkpoint` (heads in it are ignored)."""
    report = checkpoints.load_checkpoint(model, path, strict=False)
    if report.left_initialised:
        raise CheckpointError(
            f"--init_checkpoint={path} lacks encoder variables: "
            f"{', '.join(report.left_initialised[:8])}"
        )


def extract_features(options):
    """Writes the features of every line of `input_file` to `output_file`."""
    options = with_model_text(options)
    layer_indexes = _check_options(options)
    if options.use_one_hot_embeddings:
        logging.warning(
            "--use_one_hot_embeddings is ignored: the lookup is the same on every device"
        )
    config = load_model_config(options)
    for index in layer_indexes:
        if not -config.num_hidden_layers <= index < config.num_hidden_layers:
            raise InputError(
                f"--layers: {index} is not a layer of a {config.num_hidden_layers}-layer model"
            )
    records = options.output_file + ".input.tf_record"
    tokens = _write_input_records(records, options)
    try:
        with runtime_environment(options.runtime) as strategy:
            check_batch_divisible(options.batch_size, strategy, "batch_size")
            with strategy.scope(), deferred_draws() as draws:
                model = LayerOutputs(config, layer_indexes)
            _load_encoder(model, options.model.init_checkpoint)
            draws.finish()
            predictor = Predictor(strategy, model, jit_compile=options.runtime.jit_compile)
            multiple = length_multiple(options, strategy, options.runtime.jit_compile)

            def dataset_fn(input_context):
                return make_dataset(
                    records,
                    _schema(options.model.max_seq_length),
                    options.batch_size,
                    is_training=False,
                    input_context=input_context,
                    shard_by="records",
                    length_multiple=multiple,
                )

            rows = (
                (int(uid), values)
                for batch in predictor.predict_batches(dataset_fn, passthrough=("unique_ids",))
                for uid, values in zip(batch["unique_ids"], batch["logits"])
                if uid >= 0
            )
            if options.output_format == "npz":
                _write_npz(options.output_file, rows, tokens, layer_indexes, config.hidden_size)
            else:
                _write_jsonl(options.output_file, rows, tokens, layer_indexes)
    finally:
        remove(records)
    print(f"features: {options.output_file}")


def _write_jsonl(path, rows, tokens, layer_indexes):
    """The original's JSON lines; `rows` yields `(example index, values [seq, layers, hidden])`."""
    with atomic_output(path) as tmp, open_file(tmp, "w") as f:
        for index, values in rows:
            features = [
                {
                    "token": token,
                    "layers": [
                        {
                            "index": layer,
                            "values": [round(float(x), 6) for x in values[position, k]],
                        }
                        for k, layer in enumerate(layer_indexes)
                    ],
                }
                for position, token in enumerate(tokens[index])
            ]
            f.write(json.dumps({"linex_index": index, "features": features}) + "\n")


def _write_npy(zip_file, name, shape, dtype, chunks):
    """Streams an array into `zip_file` as `name.npy` (what np.load reads in an npz)."""
    with zip_file.open(f"{name}.npy", "w", force_zip64=True) as f:
        np.lib.format.write_array_header_1_0(
            f, {"descr": np.dtype(dtype).str, "fortran_order": False, "shape": shape}
        )
        for chunk in chunks:
            f.write(np.ascontiguousarray(chunk, dtype=dtype).tobytes())


class _WriteOnly:
    """Only `write` and `flush` of a file: zipfile then streams its entries
    instead of seeking back (which a remote file's writer cannot)."""

    def __init__(self, file):
        self._file = file

    def write(self, data):
        self._file.write(data)
        return len(data)

    def flush(self):
        self._file.flush()


def _write_npz(path, rows, tokens, layer_indexes, hidden_size):
    """Arrays of all real tokens (see the module docstring), written as they come."""
    lengths = [len(t) for t in tokens]
    flat_tokens = np.array([t for example in tokens for t in example])
    with (
        atomic_output(path) as tmp,
        open_file(tmp, "wb") as f,
        zipfile.ZipFile(_WriteOnly(f), "w", zipfile.ZIP_STORED, allowZip64=True) as archive,
    ):
        _write_npy(
            archive,
            "values",
            (sum(lengths), len(layer_indexes), hidden_size),
            np.float32,
            (values[: lengths[index]] for index, values in rows),
        )
        _write_npy(archive, "offsets", (len(lengths) + 1,), np.int64, [np.cumsum([0, *lengths])])
        _write_npy(archive, "tokens", flat_tokens.shape, flat_tokens.dtype, [flat_tokens])
        _write_npy(archive, "layers", (len(layer_indexes),), np.int64, [layer_indexes])
