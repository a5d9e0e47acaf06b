"""Model Garden (tf-models-official, Keras 2) encoders with bert_tf's weights, for parity tests."""

import numpy as np
import tf_keras
from official.nlp.modeling import networks
from official.nlp.modeling.networks import bert_encoder

from bert_tf import checkpoints


def original_gelu(x):
    return tf_keras.activations.gelu(x, approximate=True)


def model_garden_encoder(config, v2=False):
    """An uninitialised Model Garden BertEncoder (or BertEncoderV2) for `config`."""
    kwargs = {} if v2 else {"dict_outputs": True}
    cls = bert_encoder.BertEncoderV2 if v2 else networks.BertEncoder
    encoder = cls(
        **kwargs,
        vocab_size=config.vocab_size,
        hidden_size=config.hidden_size,
        num_layers=config.num_hidden_layers,
        num_attention_heads=config.num_attention_heads,
        inner_dim=config.intermediate_size,
        inner_activation=original_gelu,
        max_sequence_length=config.max_position_embeddings,
        type_vocab_size=config.type_vocab_size,
        dropout_rate=0.0,
        attention_dropout_rate=0.0,
    )
    if v2:
        seq = np.zeros((1, 2), np.int32)
        encoder(dict(input_word_ids=seq, input_mask=seq + 1, input_type_ids=seq))
    return encoder


def copy_to_model_garden(bert_model, mg_encoder):
    """Copies a bert_tf encoder's weights into a Model Garden encoder, by layer role."""
    tf1 = {name: var.numpy() for name, var in checkpoints.tf1_variable_map(bert_model).items()}
    config = bert_model.config
    heads, size = config.num_attention_heads, config.attention_head_size
    mg_encoder.get_embedding_table().assign(tf1["bert/embeddings/word_embeddings"])
    for layer in mg_encoder.submodules:
        name = getattr(layer, "name", "")
        if name == "position_embedding":
            layer.set_weights([tf1["bert/embeddings/position_embeddings"]])
        elif name == "type_embeddings":
            layer.set_weights([tf1["bert/embeddings/token_type_embeddings"]])
        elif name == "embeddings/layer_norm":
            layer.set_weights(
                [tf1["bert/embeddings/LayerNorm/gamma"], tf1["bert/embeddings/LayerNorm/beta"]]
            )
        elif name == "pooler_transform":
            layer.set_weights([tf1["bert/pooler/dense/kernel"], tf1["bert/pooler/dense/bias"]])
    for i, block in enumerate(mg_encoder.transformer_layers):
        p = f"bert/encoder/layer_{i}/"
        attention = block._attention_layer
        for mg, ours in (
            ("_query_dense", "query"),
            ("_key_dense", "key"),
            ("_value_dense", "value"),
        ):
            getattr(attention, mg).set_weights(
                [
                    tf1[f"{p}attention/self/{ours}/kernel"].reshape(-1, heads, size),
                    tf1[f"{p}attention/self/{ours}/bias"].reshape(heads, size),
                ]
            )
        attention._output_dense.set_weights(
            [
                tf1[f"{p}attention/output/dense/kernel"].reshape(heads, size, -1),
                tf1[f"{p}attention/output/dense/bias"],
            ]
        )
        block._attention_layer_norm.set_weights(
            [
                tf1[f"{p}attention/output/LayerNorm/gamma"],
                tf1[f"{p}attention/output/LayerNorm/beta"],
            ]
        )
        block._intermediate_dense.set_weights(
            [tf1[f"{p}intermediate/dense/kernel"], tf1[f"{p}intermediate/dense/bias"]]
        )
        block._output_dense.set_weights(
            [tf1[f"{p}output/dense/kernel"], tf1[f"{p}output/dense/bias"]]
        )
        block._output_layer_norm.set_weights(
            [tf1[f"{p}output/LayerNorm/gamma"], tf1[f"{p}output/LayerNorm/beta"]]
        )
