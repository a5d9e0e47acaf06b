"""SavedModel exports for TF Serving, one module per task (raw text in, in-graph
tokenization; plus a token-ids signature). Each loads with only tensorflow and
tensorflow_text."""

from bert_tf.export.classifier import check_export_dir, classification_outputs, export_classifier

__all__ = ["check_export_dir", "classification_outputs", "export_classifier"]
