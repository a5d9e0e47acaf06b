"""BERT as Keras 3 layers and models."""

from bert_tf.modeling.encoder import BertEncoder
from bert_tf.modeling.heads import MaskedLMHead
from bert_tf.modeling.layers import (BertEmbeddings, OutputProjection, SelfAttention,
                                     TransformerBlock)
from bert_tf.modeling.models import (BertClassifier, BertPretrainingModel, BertSpanLabeler,
                                     pretraining_losses)

__all__ = [
    "BertEncoder", "BertEmbeddings", "SelfAttention", "TransformerBlock", "OutputProjection",
    "MaskedLMHead", "BertPretrainingModel", "BertClassifier", "BertSpanLabeler",
    "pretraining_losses",
]
