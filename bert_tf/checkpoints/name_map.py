"""The one name map: a bert_tf model's variables by their original TF1 names
(`bert/encoder/layer_3/attention/self/query/kernel`, `cls/...`,
`output_weights`), and which checkpoint variables are training state rather
than weights."""

import re


def _encoder_map(encoder):
    emb = encoder.embeddings
    names = {
        "bert/embeddings/word_embeddings": emb.word_embeddings,
        "bert/embeddings/token_type_embeddings": emb.token_type_embeddings,
        "bert/embeddings/position_embeddings": emb.position_embeddings,
        "bert/embeddings/LayerNorm/gamma": emb.layer_norm.gamma,
        "bert/embeddings/LayerNorm/beta": emb.layer_norm.beta,
        "bert/pooler/dense/kernel": encoder.pooler.kernel,
        "bert/pooler/dense/bias": encoder.pooler.bias,
    }
    for i, block in enumerate(encoder.transformer_layers):
        prefix = f"bert/encoder/layer_{i}/"
        parts = {
            "attention/self/query": block.attention.query,
            "attention/self/key": block.attention.key,
            "attention/self/value": block.attention.value,
            "attention/output/dense": block.attention_output,
            "intermediate/dense": block.intermediate,
            "output/dense": block.output_dense,
        }
        for scope, layer in parts.items():
            names[f"{prefix}{scope}/kernel"] = layer.kernel
            names[f"{prefix}{scope}/bias"] = layer.bias
        for scope, norm in (
            ("attention/output/LayerNorm", block.attention_layer_norm),
            ("output/LayerNorm", block.output_layer_norm),
        ):
            names[f"{prefix}{scope}/gamma"] = norm.gamma
            names[f"{prefix}{scope}/beta"] = norm.beta
    return names


def tf1_variable_map(model):
    """Returns `{original TF1 variable name: keras.Variable}` for a bert_tf model.

    Supports BertEncoder and every task model (the encoder's names plus the
    model's own `tf1_head_variables()`). Shapes are the original's, so values
    move between the two without any transposition.
    """
    if hasattr(model, "tf1_head_variables"):
        return {**_encoder_map(model.encoder), **model.tf1_head_variables()}
    if hasattr(model, "transformer_layers"):  # a BertEncoder
        return _encoder_map(model)
    raise TypeError(f"no TF1 name map for {type(model).__name__}")


# Training state that the original's checkpoints carry besides the weights.
_TRAINING_STATE = re.compile(
    r"^(optimizer|model_state)/|(^|/)(global_step|adam_[mv]|Adam(_\d+)?|"
    r"beta[12]_power|loss_scale|good_steps)$"
)


def is_training_state(name):
    """Whether checkpoint variable `name` is optimizer or step state (an Adam
    slot, `global_step`, ...), not a model weight."""
    return bool(_TRAINING_STATE.search(name))
