"""The command-line scripts, one module per script, each with its `main` and
the `run` that setup.py's console scripts (`bert-tf-run-classifier`, ...),
`python -m bert_tf.scripts.<script>` and the checkout's top-level
`<script>.py` call.

A script module imports no TensorFlow before its flags are parsed: `--help`
and a bad flag answer at once. `import bert_tf` sets TensorFlow's C++ log
level first (`TF_CPP_MIN_LOG_LEVEL`, unless set)."""
