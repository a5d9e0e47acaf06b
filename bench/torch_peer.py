"""PyTorch peer for bench/train_vs_pytorch.py and bench/bfloat16_cpu.py: Hugging Face BERT.

Runs in the peers' virtualenv (`make bench-peers`), never imports bert_tf.
Random init from the same bert_config.json (no download).

- `train`: BertForPreTraining; the masked-LM head runs on the masked
  positions only; AdamW (weight decay 0.01, epsilon 1e-6) with global-norm
  clipping at 1.0, dropout 0.1, as bert_tf's step.
- `infer`: BertModel's pooled output, in `torch.inference_mode`.
- `products`: the encoder's dense products alone (bench/bfloat16_cpu.py's),
  inputs and weights in the dtype.

With `bfloat16`, the forward pass runs under `torch.autocast("cpu",
torch.bfloat16)`: matmuls in bfloat16, float32 weights and optimizer, as
Keras's `mixed_bfloat16`.

Protocol: bench/workers.py's (`serve`).

    python bench/torch_peer.py CONFIG_JSON BATCH_NPZ [train|infer|products] [float32|bfloat16]
"""

import contextlib
import json
import sys

import numpy as np
import torch
import transformers
from workers import serve


def autocast(dtype):
    if dtype == "bfloat16":
        return torch.autocast("cpu", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def build(config_path):
    with open(config_path) as f:
        original = json.load(f)
    act = {"gelu": "gelu_new"}.get(original["hidden_act"], original["hidden_act"])
    config = transformers.BertConfig(**{**original, "hidden_act": act})
    model = transformers.BertForPreTraining(config)
    model.train()
    return model


def step_fn(model, batch, dtype):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01, eps=1e-6)
    tensors = {k: torch.from_numpy(v) for k, v in batch.items()}
    ids = tensors["input_word_ids"].long()
    mask = tensors["input_mask"].long()
    types = tensors["input_type_ids"].long()
    positions = tensors["masked_lm_positions"].long()
    labels = tensors["masked_lm_ids"].long()
    weights = tensors["masked_lm_weights"]
    nsp_labels = tensors["next_sentence_labels"][:, 0].long()

    def step():
        with autocast(dtype):
            sequence, pooled = model.bert(
                ids, attention_mask=mask, token_type_ids=types, return_dict=False
            )[:2]
            index = positions[:, :, None].expand(-1, -1, sequence.shape[-1])
            logits = model.cls.predictions(torch.gather(sequence, 1, index)).float()
            nsp_logits = model.cls.seq_relationship(pooled).float()
        token_loss = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), reduction="none"
        )
        mlm = (token_loss * weights.reshape(-1)).sum() / (weights.sum() + 1e-5)
        nsp = torch.nn.functional.cross_entropy(nsp_logits, nsp_labels)
        loss = mlm + nsp
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        return float(loss.detach())

    return step


def forward_fn(model, batch, dtype):
    model.bert.eval()
    ids, mask, types = (
        torch.from_numpy(batch[k]).long()
        for k in ("input_word_ids", "input_mask", "input_type_ids")
    )

    def forward():
        with torch.inference_mode(), autocast(dtype):
            return model.bert(ids, attention_mask=mask, token_type_ids=types)[1].float()

    return forward


def products_fn(config_path, batch, dtype):
    with open(config_path) as f:
        config = json.load(f)
    h, i = config["hidden_size"], config["intermediate_size"]
    tokens = batch["input_word_ids"].size
    kind = {"float32": torch.float32, "bfloat16": torch.bfloat16}[dtype]
    inputs = {k: torch.randn(tokens, k).to(kind) for k in (h, i)}
    weights = [torch.randn(shape).to(kind) for shape in [(h, h)] * 4 + [(h, i), (i, h)]]

    def products():
        with torch.inference_mode():
            total = 0.0
            for _ in range(config["num_hidden_layers"]):
                for w in weights:
                    total += float((inputs[w.shape[0]] @ w)[0, 0])
            return total

    return products


def main(config_path, batch_path, mode="train", dtype="float32"):
    torch.manual_seed(0)

    def build_run():
        batch = dict(np.load(batch_path))
        if mode == "products":
            step = products_fn(config_path, batch, dtype)
        else:
            make = {"train": step_fn, "infer": forward_fn}[mode]
            step = make(build(config_path), batch, dtype)

        def run(steps):
            for _ in range(steps):
                step()

        return run

    serve(build_run)


if __name__ == "__main__":
    main(*sys.argv[1:5])
