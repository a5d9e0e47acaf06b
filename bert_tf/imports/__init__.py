"""The import machinery that `import bert_tf` sets up first, with nothing but
the standard library (`import bert_tf` imports no TensorFlow): `moved`, the
old import paths of modules that have moved, kept working for one release
with a DeprecationWarning; `startup_notices`, what TensorFlow's libraries
print while they load, hidden as TF_CPP_MIN_LOG_LEVEL asks."""
