"""Pre-training data: masked-LM / next-sentence instances, their TFRecords and the reader."""
