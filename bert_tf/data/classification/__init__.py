"""Sentence (pair) classification data: GLUE / XNLI / generic readers, features, output files."""
