"""SQuAD v1.1 / v2.0 data: reading, sub-token alignment, predictions and the official metrics."""
