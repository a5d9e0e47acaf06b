"""SavedModel exports for TF Serving, one module per task (raw text in, in-graph
tokenization; plus a token-ids signature). Each loads with only tensorflow and
tensorflow_text."""

from bert_tf.export.classifier import export_classifier
from bert_tf.export.embedder import export_embedder
from bert_tf.export.multiple_choice import export_multiple_choice
from bert_tf.export.squad import export_span_labeler
from bert_tf.export.tagging import export_tagger

__all__ = [
    "export_classifier",
    "export_embedder",
    "export_multiple_choice",
    "export_span_labeler",
    "export_tagger",
]
