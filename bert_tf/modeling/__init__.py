"""BERT as Keras 3 layers and models."""

from bert_tf.modeling.embedding import BertSentenceEmbedder
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.modeling.heads import MaskedLMHead
from bert_tf.modeling.layers import (
    BertEmbeddings,
    OutputProjection,
    SelfAttention,
    TransformerBlock,
)
from bert_tf.modeling.losses import pretraining_losses
from bert_tf.modeling.models import (
    BertClassifier,
    BertMultipleChoice,
    BertPretrainingModel,
    BertSpanLabeler,
)
from bert_tf.modeling.tagging import BertFeatureTagger, BertTokenClassifier

__all__ = [
    "BertEncoder",
    "BertEmbeddings",
    "SelfAttention",
    "TransformerBlock",
    "OutputProjection",
    "MaskedLMHead",
    "BertPretrainingModel",
    "BertClassifier",
    "BertSpanLabeler",
    "BertMultipleChoice",
    "BertTokenClassifier",
    "BertFeatureTagger",
    "BertSentenceEmbedder",
    "pretraining_losses",
]
