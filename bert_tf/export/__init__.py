"""SavedModel exports for TF Serving, one module per task (raw text in, in-graph
tokenization; plus a token-ids signature). Each loads with only tensorflow and
tensorflow_text."""

from bert_tf.export.classifier import export_classifier
from bert_tf.export.embedder import export_embedder

__all__ = ["export_classifier", "export_embedder"]
