"""`BertEncoder`: embeddings, the transformer stack and the pooler."""

import keras
from keras import ops

from bert_tf.config import BertConfig
from bert_tf.modeling.layers import BertEmbeddings, TransformerBlock, dense


@keras.saving.register_keras_serializable(package="bert_tf")
class BertEncoder(keras.Model):
    """The BERT encoder (`bert/` in the original checkpoints).

    Call with a dict of int tensors `[batch, seq]`: `input_word_ids`, and
    optionally `input_mask` (1 = real token; default all ones) and
    `input_type_ids` (segment ids; default zeros). Returns a dict:
      - `sequence_output`: `[batch, seq, hidden]`, the last layer;
      - `pooled_output`: `[batch, hidden]`, tanh(dense(first token));
      - `encoder_outputs`: list of `[batch, seq, hidden]`, every layer;
      - `embedding_output`: `[batch, seq, hidden]`.
    Weights exist as soon as the encoder is constructed.
    """

    def __init__(self, config, **kwargs):
        kwargs.setdefault("name", "bert_encoder")
        super().__init__(**kwargs)
        self.config = config if isinstance(config, BertConfig) else BertConfig.from_dict(config)
        c = self.config
        self.embeddings = BertEmbeddings(c, name="embeddings")
        self.transformer_layers = [
            TransformerBlock(c, name=f"layer_{i}") for i in range(c.num_hidden_layers)]
        self.pooler = dense(c.hidden_size, c, "pooler", activation="tanh")
        self.build()

    def build(self, input_shape=None):
        self.embeddings.build()
        for layer in self.transformer_layers:
            layer.build()
        self.pooler.build((None, self.config.hidden_size))
        self.built = True

    def call(self, inputs, training=None):
        word_ids = inputs["input_word_ids"]
        mask = inputs.get("input_mask")
        if mask is None:
            mask = ops.ones_like(word_ids)
        type_ids = inputs.get("input_type_ids")
        if type_ids is None:
            type_ids = ops.zeros_like(word_ids)

        embedding_output = self.embeddings(word_ids, type_ids, training=training)
        hidden = embedding_output
        encoder_outputs = []
        for layer in self.transformer_layers:
            hidden = layer(hidden, mask, training=training)
            encoder_outputs.append(hidden)
        pooled_output = self.pooler(hidden[:, 0, :])
        return {
            "sequence_output": hidden,
            "pooled_output": pooled_output,
            "encoder_outputs": encoder_outputs,
            "embedding_output": embedding_output,
        }

    def get_config(self):
        return {"name": self.name, "config": self.config.to_dict()}
