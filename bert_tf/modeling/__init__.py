"""BERT as Keras 3 layers and models."""

from bert_tf.modeling.classifier import BertClassifier
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
from bert_tf.modeling.multiple_choice import BertMultipleChoice
from bert_tf.modeling.pretraining_model import BertPretrainingModel
from bert_tf.modeling.span_labeler import BertSpanLabeler
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
