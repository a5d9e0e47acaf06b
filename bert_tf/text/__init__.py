"""Text into model inputs: the original WordPiece tokenizer in Python
(`tokenization`) and in the graph (`graph_tokenizer`), packing into
`[CLS] A [SEP] B [SEP]` and windows (`packing`), the Keras preprocessor
(`preprocessor`), vocabularies (`vocab`, `vocab_beam`), a model's vocab and
casing (`model_text`) and entity tag schemes (`tags`)."""
