"""Pre-training data: corpus -> instances -> TFRecords (the original schema), and their reader."""
