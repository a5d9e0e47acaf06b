"""`TaskModel`: the base of the task models, with what a Keras user needs:
`from_pretrained`, raw text through an attached preprocessor in `fit`,
`evaluate` and `predict`, and `compile()` defaults computing the scripts'
losses."""

import numbers

import keras
import tensorflow as tf

from bert_tf import optimization
from bert_tf.checkpoints.loading import load_pretrained
from bert_tf.compat import build_compiled_loss
from bert_tf.config import BertConfig
from bert_tf.errors import InputError
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.modeling.first_step import FirstStepNotice
from bert_tf.options import Range
from bert_tf.text.preprocessor import (
    INPUT_NAMES,
    dataset_text_layout,
    split_off_validation,
    text_dataset,
    text_layout,
)


class TaskModel(keras.Model):
    """A keras.Model around one BertEncoder; serialises as its BertConfig.

    `from_pretrained` loads any checkpoint the scripts take. With a
    `preprocessor` (a `BertPreprocessor`; `from_pretrained` attaches one when
    it finds the vocab), models with a `text_layout` `fit`, `evaluate` and
    `predict` on raw text of that layout too. `compile()` defaults to the
    original's AdamW and the task's loss and metrics. `recompute`: the
    encoder's (`BertEncoder`), "none", "layer" or "attention", to train in
    less memory; `model.encoder.recompute` changes it before `fit`.
    """

    # The raw text `fit` / `evaluate` / `predict` take through the preprocessor
    # (`preprocessor.TEXTS` or `CHOICES`), or None.
    text_layout = None

    def __init__(self, config, preprocessor=None, recompute="none", **kwargs):
        super().__init__(**kwargs)
        self.config = config if isinstance(config, BertConfig) else BertConfig.from_dict(config)
        self.encoder = BertEncoder(self.config, recompute=recompute)
        if isinstance(preprocessor, dict):
            preprocessor = keras.saving.deserialize_keras_object(preprocessor)
        self.preprocessor = preprocessor

    @classmethod
    def from_pretrained(cls, path, **kwargs):
        """The model with the weights at `path` (see `bert_tf.checkpoints.loading.load_pretrained`).

        The encoder must load whole; a head the checkpoint lacks (a new
        classifier) starts initialised as the original initialises it, except
        the pre-training model's, which must be there.

        Args:
            path: Any checkpoint the scripts take: a Google release folder or
                `bert_model.ckpt` prefix, a run's output folder (its newest
                checkpoint), a Model Garden checkpoint or a Hugging Face folder.
            **kwargs: `bert_config_file` (the config to build the model as; by
                default the one beside the checkpoint), `vocab_file` (by
                default the `vocab.txt` beside it; with a vocab the model gets
                a `BertPreprocessor`), `do_lower_case` (by default what the
                folder says, else True), `max_seq_length` (of the
                preprocessor: by default 128, or the model's positions when
                fewer), and the model's own arguments (`num_labels`, ...).

        Returns:
            The model; `load_report` says what was loaded, left initialised
                and unused.

        Raises:
            CheckpointError: `path` holds no checkpoint, no config is beside
                it and none is given, or the checkpoint lacks weights the
                model needs or has them in other shapes.
            ConfigError: The config file is invalid.
            InputError: `max_seq_length` is below 2 or past the model's
                positions, or `do_lower_case` contradicts the folder.

        Examples:
            >>> import os, tempfile
            >>> import bert_tf
            >>> from bert_tf import checkpoints
            >>> folder = tempfile.mkdtemp()  # a release folder, as Google's
            >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "movie", "good"]
            >>> with open(os.path.join(folder, "vocab.txt"), "w") as f:
            ...     _ = f.write("".join(token + "\\n" for token in vocab))
            >>> config = bert_tf.preset("bert_tiny", vocab_size=len(vocab))
            >>> config.to_json_file(os.path.join(folder, "bert_config.json"))
            >>> encoder = bert_tf.BertEncoder(config)
            >>> _ = checkpoints.save_tf1_checkpoint(encoder, os.path.join(folder, "bert_model.ckpt"))
            >>> model = bert_tf.BertClassifier.from_pretrained(folder, num_labels=2)
            >>> model.load_report.left_initialised
            ['output_bias', 'output_weights']
            >>> model.preprocessor.max_seq_length
            128
            >>> tuple(model(model.preprocessor(["the movie", "good"])).shape)
            (2, 2)
        """
        return load_pretrained(cls, path, **kwargs)

    def get_config(self):
        config = {"name": self.name, "config": self.config.to_dict()}
        if self.encoder.recompute != "none":
            config["recompute"] = self.encoder.recompute
        if self.preprocessor is not None:
            config["preprocessor"] = keras.saving.serialize_keras_object(self.preprocessor)
        return config

    def encode(self, inputs, training, return_states, **options):
        """The encoder's outputs on `inputs`; with `return_states`, every
        layer's, whatever `options` (`pooled_only`) say."""
        if return_states:
            options.pop("pooled_only", None)
        return self.encoder(inputs, training=training, **options)

    def freeze_unused_pooler(self):
        """For heads on the sequence output: the pooler (whose weights
        checkpoints still hold) is not trained, as in the original, which
        gets no gradient for it; Keras would warn of that at every fit."""
        self.encoder.pooler.trainable = False

    def tf1_head_variables(self):
        """`{original TF1 name: variable}` of the head's weights (the encoder's
        are named by `checkpoints.tf1_variable_map`)."""
        raise NotImplementedError

    def _preprocessor_for(self, what):
        if self.preprocessor is None:
            raise InputError(
                f"{what} needs a preprocessor: load {self.name} with "
                "from_pretrained(..., vocab_file=...) or set model.preprocessor"
            )
        return self.preprocessor

    def label_ids(self, y):
        """`y` as the loss takes it (a classifier maps label names to ids)."""
        return y

    def default_loss(self):
        """The task's loss for `compile()`: the head's loss from
        `bert_tf.modeling.losses`, the one the scripts train with; a dict
        of them for a model of several outputs."""
        raise InputError(f"{type(self).__name__} has no default loss: pass compile(loss=...)")

    def default_metrics(self):
        return []

    def default_loss_weights(self):
        return None

    def compile(
        self,
        optimizer="auto",
        loss="auto",
        metrics="auto",
        *,
        learning_rate=5e-5,
        num_train_steps=None,
        warmup_proportion=0.1,
        **kwargs,
    ):
        """Keras `compile` with the scripts' defaults for "auto": the original
        AdamW (weight decay 0.01 off LayerNorm and biases, epsilon 1e-6,
        gradients clipped to global norm 1.0) with `learning_rate` warmed up
        over `warmup_proportion` of `num_train_steps` and decayed linearly to
        0 (constant without `num_train_steps`); the task's loss and metrics.

        Args:
            optimizer: A Keras optimizer, or "auto" (above).
            loss: A Keras loss, or "auto": the task's (`default_loss`).
            metrics: Keras metrics, or "auto": the task's.
            learning_rate: The peak learning rate of the "auto" optimizer.
            num_train_steps: The updates the "auto" schedule spans; None keeps
                the learning rate constant after the warm-up.
            warmup_proportion: The share of `num_train_steps` spent warming up.
            **kwargs: Keras `compile` arguments (`jit_compile`, ...).

        Raises:
            InputError: `loss="auto"` for a model with no default loss (a
                feature-based tagger, a sentence embedder).

        Examples:
            >>> import bert_tf
            >>> model = bert_tf.BertClassifier(bert_tf.preset("bert_tiny", vocab_size=100), num_labels=3)
            >>> model.compile(learning_rate=2e-5, num_train_steps=1000)
            >>> type(model.optimizer).__name__, type(model.loss).__name__
            ('AdamW', 'SoftmaxCrossEntropy')
        """
        if isinstance(optimizer, str) and optimizer == "auto":
            optimizer = optimization.default_optimizer(
                learning_rate, num_train_steps, warmup_proportion
            )
        if isinstance(loss, str) and loss == "auto":
            loss = self.default_loss()
            kwargs.setdefault("loss_weights", self.default_loss_weights())
        if isinstance(metrics, str) and metrics == "auto":
            metrics = self.default_metrics()
        super().compile(optimizer=optimizer, loss=loss, metrics=metrics, **kwargs)

    def compile_from_config(self, config):
        # The saved config holds what "auto" resolved to: Keras's own compile restores it.
        keras.Model.compile(self, **keras.saving.deserialize_keras_object(config))
        if self.built:
            self.optimizer.build(self.trainable_variables)

    def save(self, filepath, overwrite=True, zipped=None, include_optimizer=True, **kwargs):
        """Keras `save`. `include_optimizer=False` leaves out the optimizer's
        state (AdamW's two slots per weight: two thirds of the file) and the
        compile settings, as Keras 2 did: the file loads uncompiled, to
        predict, export, or `compile()` again and train anew.

        Args:
            filepath: The `.keras` file to write.
            overwrite: Whether to replace an existing file.
            zipped: As Keras's `save`.
            include_optimizer: Whether to save the optimizer's state and the
                compile settings.
            **kwargs: Keras `save` arguments.

        Examples:
            >>> import os, tempfile
            >>> import keras
            >>> import bert_tf
            >>> config = bert_tf.preset("bert_tiny", vocab_size=100)
            >>> model = bert_tf.BertClassifier(config, label_names=["neg", "pos"])
            >>> model.compile()
            >>> path = os.path.join(tempfile.mkdtemp(), "classifier.keras")
            >>> model.save(path, include_optimizer=False)
            >>> loaded = keras.saving.load_model(path)
            >>> loaded.label_names, loaded.compiled
            (('neg', 'pos'), False)
        """
        if include_optimizer or not self.compiled:
            return super().save(filepath, overwrite, zipped, **kwargs)
        # Keras saves a compiled model's optimizer and compile config: uncompiled for the save.
        compiled, optimizer = self.compiled, self.optimizer
        self.compiled, self.optimizer = False, None
        try:
            return super().save(filepath, overwrite, zipped, **kwargs)
        finally:
            self.compiled, self.optimizer = compiled, optimizer

    def takes_raw_text(self, x):
        """Whether `x` is raw text (of any layout) rather than packed inputs."""
        return text_layout(x) is not None

    def split_raw_text(self, x, y, sample_weight, validation_split):
        """Raw text `x` with its `y` and `sample_weight` -> `(training,
        validation)`, each `(x, y, sample_weight)`: the last `validation_split`
        of the examples validate, as Keras cuts arrays."""
        return split_off_validation(x, y, sample_weight, validation_split)

    def text_data(self, x, y=None, sample_weight=None, batch_size=None, shuffle=False):
        """`(x, y, sample_weight, batch_size)` as this model's `fit` takes
        them: raw text through the preprocessor (one dataset, label names as
        ids), other data as it is (what a `Distiller` of it trains on)."""
        return self._text_data(x, self.label_ids(y), sample_weight, batch_size, shuffle)

    def _text_data(self, x, y, sample_weight, batch_size, shuffle):
        """Raw text -> `(dataset, None, None, None)` through the preprocessor;
        other data as it is."""
        if isinstance(x, (list, tuple)) and len(x) == 0:
            raise InputError(f"{type(self).__name__} got no examples: x is empty")
        layout = dataset_text_layout(x) if isinstance(x, tf.data.Dataset) else text_layout(x)
        if layout is None:
            return x, y, sample_weight, batch_size
        if layout != self.text_layout:
            takes = f"packed inputs ({', '.join(INPUT_NAMES)})"
            if self.text_layout:
                takes += f" or raw {self.text_layout}"
            raise InputError(f"{type(self).__name__} takes {takes}, not raw {layout}")
        self._preprocessor_for("raw text")
        dataset = text_dataset(self.preprocessor, x, y, sample_weight, batch_size, shuffle)
        return dataset, None, None, None

    def fit(
        self,
        x=None,
        y=None,
        batch_size=None,
        validation_data=None,
        shuffle=True,
        validation_split=0.0,
        **kwargs,
    ):
        y = self.label_ids(y)
        if validation_split and validation_data is None and self.takes_raw_text(x):
            # Keras splits arrays, not the dataset raw text becomes: split the text.
            training, validation_data = self.split_raw_text(
                x, y, kwargs.get("sample_weight"), validation_split
            )
            x, y, kwargs["sample_weight"] = training
            validation_split = 0.0
        if validation_data is not None:
            if isinstance(validation_data, tf.data.Dataset):
                validation = (validation_data, None, None)
            else:
                validation = (tuple(validation_data) + (None, None))[:3]
                validation = (validation[0], self.label_ids(validation[1]), validation[2])
            val_batch_size = kwargs.get("validation_batch_size") or batch_size
            converted = self._text_data(*validation, val_batch_size, False)[0]
            if converted is not validation[0]:
                validation_data = converted
                kwargs.pop("validation_batch_size", None)
        x, y, kwargs["sample_weight"], batch_size = self._text_data(
            x, y, kwargs.get("sample_weight"), batch_size, shuffle
        )
        if isinstance(x, tf.data.Dataset):
            shuffle = False  # text_dataset shuffled it; Keras only warns for datasets
            self._build_metrics_from(x)
        if kwargs.get("verbose", "auto") != 0:
            kwargs["callbacks"] = [*(kwargs.get("callbacks") or []), FirstStepNotice()]
        return super().fit(
            x,
            y,
            batch_size=batch_size,
            validation_data=validation_data,
            shuffle=shuffle,
            validation_split=validation_split,
            **kwargs,
        )

    def _build_metrics_from(self, dataset):
        # Built from an undistributed batch first: see compat.build_compiled_loss.
        strategy = self.distribute_strategy
        if strategy.num_replicas_in_sync > 1:
            with strategy.scope():
                build_compiled_loss(self, next(iter(dataset.take(1))))

    def evaluate(self, x=None, y=None, batch_size=None, *, sample_weight=None, **kwargs):
        y = self.label_ids(y)
        x, y, sample_weight, batch_size = self._text_data(x, y, sample_weight, batch_size, False)
        if isinstance(x, tf.data.Dataset):
            self._build_metrics_from(x)
        return super().evaluate(x, y, batch_size=batch_size, sample_weight=sample_weight, **kwargs)

    def predict(self, x, batch_size=None, **kwargs):
        x, _, _, batch_size = self._text_data(x, None, None, batch_size, False)
        return super().predict(x, batch_size=batch_size, **kwargs)


def with_states(outputs, encoded, inputs, return_states):
    """`outputs`, or with `return_states` `(outputs, states)`: the encoder's
    `hidden_states` (the embedding output, then every layer's) and the
    `input_mask` they cover, as intermediate-layer distillation compares
    them (`modeling.layer_distillation`)."""
    if not return_states:
        return outputs
    mask = inputs.get("input_mask")
    if mask is None:
        mask = tf.ones_like(inputs["input_word_ids"])
    states = [encoded["embedding_output"], *encoded["encoder_outputs"]]
    return outputs, {"hidden_states": states, "input_mask": mask}


def label_count(num_labels, num_classes=None, label_names=None):
    """The number of labels a task model is given: `num_labels`, or
    keras-hub's `num_classes`, or the length of `label_names` (which must
    match the others)."""
    given = {
        name: positive_count(name, value)
        for name, value in (("num_labels", num_labels), ("num_classes", num_classes))
        if value is not None
    }
    if len(set(given.values())) > 1:
        raise InputError(f"num_labels={num_labels} and num_classes={num_classes} differ: pass one")
    count = next(iter(given.values()), None)
    if label_names is not None:
        if count is not None and len(label_names) != count:
            raise InputError(f"{len(label_names)} label_names for num_labels={count}")
        count = len(label_names)
    if not count:
        raise InputError("pass num_labels (or num_classes, or label_names)")
    return count


def positive_count(name, value):
    """`value` (a count of labels, choices ...) as an int; InputError naming
    `name` unless it is an integer of at least 1."""
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
        raise InputError(f"{name}={value!r}: expected {Range(at_least=1).describe(int)}")
    return int(value)


def accuracy():
    return keras.metrics.SparseCategoricalAccuracy(name="accuracy")
