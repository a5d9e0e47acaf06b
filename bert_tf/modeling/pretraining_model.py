"""`BertPretrainingModel`: the encoder plus the original's pre-training heads,
masked LM and next sentence prediction (`cls/`); `fill_mask`."""

import keras
import numpy as np
import tensorflow as tf

from bert_tf.errors import InputError
from bert_tf.modeling.heads import MaskedLMHead
from bert_tf.modeling.layers import OutputProjection
from bert_tf.modeling.losses import pretraining_head_losses
from bert_tf.modeling.task_model import TaskModel
from bert_tf.text.preprocessor import DEFAULT_BATCH_SIZE
from bert_tf.text.tokenization import MASK_TOKEN


@keras.saving.register_keras_serializable(package="bert_tf")
class BertPretrainingModel(TaskModel):
    """Encoder + masked LM + next sentence prediction (`bert/` + `cls/`).

    Inputs: the encoder's dict plus `masked_lm_positions` int `[batch, num]`.
    Outputs: `masked_lm_logits` float32 `[batch, num, vocab]`,
    `next_sentence_logits` float32 `[batch, 2]` (label 1 = random next).

    Args:
        config: The `BertConfig` (or its dict).
        **kwargs: `preprocessor` (a `BertPreprocessor`, for `fill_mask`),
            `recompute` (the encoder's), and Keras model arguments (`name`).

    Examples:
        >>> import tensorflow as tf
        >>> import bert_tf
        >>> model = bert_tf.BertPretrainingModel(bert_tf.preset("bert_tiny", vocab_size=100))
        >>> outputs = model({
        ...     "input_word_ids": tf.constant([[2, 10, 4, 11, 3]]),
        ...     "masked_lm_positions": tf.constant([[2]]),
        ... })
        >>> tuple(outputs["masked_lm_logits"].shape), tuple(outputs["next_sentence_logits"].shape)
        ((1, 1, 100), (1, 2))
    """

    # What `from_pretrained` refuses to start without.
    required_heads = ("cls/predictions/",)

    def __init__(self, config, **kwargs):
        kwargs.setdefault("name", "bert_pretraining")
        super().__init__(config, **kwargs)
        c = self.config
        self.masked_lm = MaskedLMHead(c, self.encoder.embeddings.word_embeddings, name="masked_lm")
        self.next_sentence = OutputProjection(2, c.initializer_range, name="next_sentence")
        self.masked_lm.build()
        self.next_sentence.build((None, c.hidden_size))
        self.built = True

    def tf1_head_variables(self):
        mlm = self.masked_lm
        return {
            "cls/predictions/transform/dense/kernel": mlm.transform.kernel,
            "cls/predictions/transform/dense/bias": mlm.transform.bias,
            "cls/predictions/transform/LayerNorm/gamma": mlm.layer_norm.gamma,
            "cls/predictions/transform/LayerNorm/beta": mlm.layer_norm.beta,
            "cls/predictions/output_bias": mlm.output_bias,
            **self.next_sentence.tf1_variables("cls/seq_relationship/"),
        }

    def fill_mask(self, texts, top_k=5):
        """The `top_k` tokens for each `[MASK]` of each text, best first.

        Needs a preprocessor (`from_pretrained` finds the vocab).

        Args:
            texts: Strings (or one string) in which `[MASK]` stands for a
                masked token (the rest is tokenized as the original does).
            top_k: How many tokens to return for each `[MASK]`.

        Returns:
            Per text, per `[MASK]` (in order; those past `max_seq_length`
                dropped), a list of `(token, probability)`.

        Raises:
            InputError: The model has no preprocessor, or its vocabulary no
                `[MASK]`.

        Examples:
            >>> import bert_tf
            >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "movie", "was", "good", "bad"]
            >>> preprocessor = bert_tf.BertPreprocessor(bert_tf.BertTokenizer(vocabulary=vocab))
            >>> config = bert_tf.preset("bert_tiny", vocab_size=len(vocab))
            >>> model = bert_tf.BertPretrainingModel(config, preprocessor=preprocessor)
            >>> results = model.fill_mask(["the [MASK] was good", "[MASK] [MASK]"], top_k=3)
            >>> [[len(best) for best in masks] for masks in results]
            [[3], [3, 3]]
            >>> token, probability = results[0][0][0]
            >>> token in vocab, 0.0 < probability < 1.0
            (True, True)
        """
        preprocessor = self._preprocessor_for("fill_mask")
        tokenizer = preprocessor.tokenizer
        if tokenizer.mask_id is None:
            raise InputError(f"the vocabulary of {self.name} has no {MASK_TOKEN}")
        texts = [texts] if isinstance(texts, str) else list(texts)
        pieces = [text.split(MASK_TOKEN) for text in texts]
        piece_ids = iter(tokenizer(tf.constant([p for text in pieces for p in text])).to_list())
        rows = []
        for text in pieces:
            ids = next(piece_ids)
            for _ in text[1:]:
                ids += [tokenizer.mask_id] + next(piece_ids)
            ids = ids[: preprocessor.max_seq_length - 2]
            rows.append([tokenizer.cls_id] + ids + [tokenizer.sep_id])
        results = []
        for begin in range(0, len(rows), DEFAULT_BATCH_SIZE):
            results += self._top_masked_tokens(rows[begin : begin + DEFAULT_BATCH_SIZE], top_k)
        return results

    def _top_masked_tokens(self, rows, top_k):
        """`fill_mask` for a batch of token id lists."""
        tokenizer = self.preprocessor.tokenizer
        lengths = np.array([len(row) for row in rows])
        word_ids = np.full((len(rows), lengths.max()), tokenizer.pad_id, np.int32)
        for ids, row in zip(word_ids, rows):
            ids[: len(row)] = row
        masks = [np.flatnonzero(ids == tokenizer.mask_id) for ids in word_ids]
        positions = np.zeros((len(rows), max(1, max(map(len, masks)))), np.int32)
        for row, found in zip(positions, masks):
            row[: len(found)] = found
        inputs = {
            "input_word_ids": word_ids,
            "input_mask": (np.arange(lengths.max()) < lengths[:, None]).astype(np.int32),
            "input_type_ids": np.zeros_like(word_ids),
            "masked_lm_positions": positions,
        }
        probabilities = tf.nn.softmax(self(inputs, training=False)["masked_lm_logits"], axis=-1)
        best = tf.math.top_k(probabilities, k=top_k)
        vocabulary = tokenizer.vocabulary
        return [
            [
                [(vocabulary[i], float(p)) for i, p in zip(ids, probs)]
                for ids, probs in zip(best.indices[n, : len(found)].numpy(), best.values[n].numpy())
            ]
            for n, found in enumerate(masks)
        ]

    def call(self, inputs, training=None):
        outputs = self.encoder(inputs, training=training)
        return {
            "masked_lm_logits": self.masked_lm(
                outputs["sequence_output"], inputs["masked_lm_positions"]
            ),
            "next_sentence_logits": self.next_sentence(outputs["pooled_output"]),
        }

    def default_loss(self):
        """run_pretraining.py's masked LM + next sentence losses; `y` is
        `{"masked_lm_logits": masked_lm_ids, "next_sentence_logits":
        next_sentence_labels}`, `sample_weight` `{"masked_lm_logits":
        masked_lm_weights, "next_sentence_logits": ones}`."""
        return pretraining_head_losses()
