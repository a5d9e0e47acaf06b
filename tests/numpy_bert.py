"""An independent float64 numpy BERT forward pass, written from the original
google-research/bert modeling.py and run_*.py, reading weights by their
original TF1 names (`{tf1_name: ndarray}`). Tests check every model and head
against it."""

import math

import numpy as np

ACTIVATIONS = {
    "gelu": lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
    "gelu_exact": lambda x: 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2))),
    "relu": lambda x: np.maximum(x, 0),
    "tanh": np.tanh,
    "linear": lambda x: x,
}


def layer_norm(x, gamma, beta):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * gamma + beta


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def random_weights(shapes, seed=0, scale=0.3):
    """Random float64 weights for `{tf1_name: shape}`: LayerNorm gammas near 1,
    everything else (biases and betas too) non-zero, so that a weight in the
    wrong place changes the outputs."""
    rng = np.random.default_rng(seed)
    return {
        name: (1.0 if name.endswith("/gamma") else 0.0) + scale * rng.normal(size=shape)
        for name, shape in sorted(shapes.items())
    }


def encoder(w, config, inputs):
    """`{"sequence_output" [b, s, h], "pooled_output" [b, h], "encoder_outputs": [...]}`."""
    act = ACTIVATIONS[config.hidden_act]
    ids, mask, types = (
        np.asarray(inputs[k]) for k in ("input_word_ids", "input_mask", "input_type_ids")
    )
    batch, seq = ids.shape
    heads = config.num_attention_heads
    size = config.hidden_size // heads

    def dense(x, scope):
        return x @ w[scope + "/kernel"] + w[scope + "/bias"]

    def norm(x, scope):
        return layer_norm(x, w[scope + "/gamma"], w[scope + "/beta"])

    def split(x):  # [b, s, h] -> [b, heads, s, size]
        return x.reshape(batch, seq, heads, size).transpose(0, 2, 1, 3)

    x = (
        w["bert/embeddings/word_embeddings"][ids]
        + w["bert/embeddings/token_type_embeddings"][types]
        + w["bert/embeddings/position_embeddings"][:seq]
    )
    x = norm(x, "bert/embeddings/LayerNorm")
    adder = (1.0 - mask[:, None, None, :]) * -10000.0
    layers = []
    for i in range(config.num_hidden_layers):
        p = f"bert/encoder/layer_{i}/"
        q, k, v = (split(dense(x, p + f"attention/self/{n}")) for n in ("query", "key", "value"))
        probs = softmax(q @ k.transpose(0, 1, 3, 2) / math.sqrt(size) + adder)
        context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, seq, -1)
        x = norm(dense(context, p + "attention/output/dense") + x, p + "attention/output/LayerNorm")
        hidden = act(dense(x, p + "intermediate/dense"))
        x = norm(dense(hidden, p + "output/dense") + x, p + "output/LayerNorm")
        layers.append(x)
    pooled = np.tanh(dense(x[:, 0], "bert/pooler/dense"))
    return {"sequence_output": x, "pooled_output": pooled, "encoder_outputs": layers}


def pretraining(w, config, inputs):
    """`masked_lm_logits [b, n, vocab]` and `next_sentence_logits [b, 2]`."""
    out = encoder(w, config, inputs)
    positions = np.asarray(inputs["masked_lm_positions"])
    gathered = np.take_along_axis(out["sequence_output"], positions[..., None], axis=1)
    p = "cls/predictions/transform/"
    hidden = ACTIVATIONS[config.hidden_act](gathered @ w[p + "dense/kernel"] + w[p + "dense/bias"])
    hidden = layer_norm(hidden, w[p + "LayerNorm/gamma"], w[p + "LayerNorm/beta"])
    mlm = hidden @ w["bert/embeddings/word_embeddings"].T + w["cls/predictions/output_bias"]
    nsp = (
        out["pooled_output"] @ w["cls/seq_relationship/output_weights"].T
        + w["cls/seq_relationship/output_bias"]
    )
    return {"masked_lm_logits": mlm, "next_sentence_logits": nsp}


def classifier(w, config, inputs):
    """Logits `[b, num_labels]` on the pooled output (run_classifier.py)."""
    pooled = encoder(w, config, inputs)["pooled_output"]
    return pooled @ w["output_weights"].T + w["output_bias"]


def span_labeler(w, config, inputs):
    """`start_logits`, `end_logits` `[b, s]` (run_squad.py's `cls/squad`)."""
    sequence = encoder(w, config, inputs)["sequence_output"]
    logits = sequence @ w["cls/squad/output_weights"].T + w["cls/squad/output_bias"]
    return {"start_logits": logits[..., 0], "end_logits": logits[..., 1]}


def multiple_choice(w, config, inputs):
    """Logits `[b, choices]` from inputs `[b, choices, s]`: one score per choice."""
    batch, choices, seq = np.shape(inputs["input_word_ids"])
    flat = {k: np.reshape(v, (batch * choices, seq)) for k, v in inputs.items()}
    return classifier(w, config, flat).reshape(batch, choices)


def token_classifier(w, config, inputs):
    """Logits `[b, s, num_labels]` on every token of the sequence output."""
    sequence = encoder(w, config, inputs)["sequence_output"]
    return sequence @ w["output_weights"].T + w["output_bias"]
