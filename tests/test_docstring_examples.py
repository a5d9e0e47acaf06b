"""The examples of the public API's docstrings (the API reference's pages)
run as written: every object below has one, and `doctest` runs it with the
default options, as `python -m doctest` would. The examples build tiny models
and write what they need (a vocab, a checkpoint) under a temporary folder,
which here is the test's own."""

import doctest
import importlib
import importlib.util
import tempfile

import pytest
from shared import resolve

# The public API: `bert_tf.__all__`'s names (and BertFeatureTagger), the
# methods a user calls on them beyond Keras's own, and the exports.
OBJECTS = (
    "bert_tf.config.BertConfig",
    "bert_tf.config.BertConfig.from_dict",
    "bert_tf.config.BertConfig.from_hf_dict",
    "bert_tf.config.BertConfig.from_json_file",
    "bert_tf.config.BertConfig.to_json_file",
    "bert_tf.config.BertConfig.replace",
    "bert_tf.config.preset",
    "bert_tf.modeling.pretrained.PretrainedBert",
    "bert_tf.modeling.pretrained.from_pretrained",
    "bert_tf.text.graph_tokenizer.BertTokenizer",
    "bert_tf.text.graph_tokenizer.BertTokenizer.set_vocabulary",
    "bert_tf.text.graph_tokenizer.BertTokenizer.vocabulary",
    "bert_tf.text.graph_tokenizer.BertTokenizer.tokenize_words",
    "bert_tf.text.graph_tokenizer.BertTokenizer.tokenize_with_offsets",
    "bert_tf.text.preprocessor.BertPreprocessor",
    "bert_tf.text.preprocessor.BertPreprocessor.python_tokenizer",
    "bert_tf.checkpoints.surgery.extend_checkpoint",
    "bert_tf.tasks.options.ExtendOptions",
    "bert_tf.modeling.distiller.Distiller",
    "bert_tf.modeling.distiller.Distiller.compile",
    "bert_tf.modeling.distiller.Distiller.predict",
    "bert_tf.modeling.encoder.BertEncoder",
    "bert_tf.modeling.encoder.BertEncoder.from_pretrained",
    "bert_tf.modeling.encoder.BertEncoder.call",
    "bert_tf.modeling.task_model.TaskModel.from_pretrained",
    "bert_tf.modeling.task_model.TaskModel.compile",
    "bert_tf.modeling.task_model.TaskModel.save",
    "bert_tf.modeling.classifier.BertClassifier",
    "bert_tf.modeling.classifier.BertClassifier.label_ids",
    "bert_tf.modeling.classifier.BertClassifier.predict_labels",
    "bert_tf.modeling.multiple_choice.BertMultipleChoice",
    "bert_tf.modeling.span_labeler.BertSpanLabeler",
    "bert_tf.modeling.span_labeler.BertSpanLabeler.predict",
    "bert_tf.modeling.tagging.BertTokenClassifier",
    "bert_tf.modeling.tagging.BertTokenClassifier.predict",
    "bert_tf.modeling.tagging.BertFeatureTagger",
    "bert_tf.modeling.tagging.BertFeatureTagger.features",
    "bert_tf.modeling.pretraining_model.BertPretrainingModel",
    "bert_tf.modeling.pretraining_model.BertPretrainingModel.fill_mask",
    "bert_tf.modeling.embedding.BertSentenceEmbedder",
    "bert_tf.export.classifier.export_classifier",
    "bert_tf.export.squad.export_span_labeler",
    "bert_tf.export.squad.answer",
    "bert_tf.export.multiple_choice.export_multiple_choice",
    "bert_tf.export.tagging.export_tagger",
    "bert_tf.export.tagging.entities",
    "bert_tf.export.embedder.export_embedder",
    "bert_tf.export.deploy.conversion.convert_saved_model",
)

# Objects whose example needs an extra that `make test` installs but a
# plain install lacks: {object: (modules of the extra)}.
NEEDS = {
    "bert_tf.export.deploy.conversion.convert_saved_model": ("tf2onnx", "onnxruntime"),
}


@pytest.mark.parametrize("name", OBJECTS)
def test_docstring_example_runs(name, tmp_path, monkeypatch):
    missing = [m for m in NEEDS.get(name, ()) if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)}")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    tests = doctest.DocTestFinder(recurse=False).find(resolve(name), name, globs={})
    examples = [test for test in tests if test.examples]
    assert examples, f"{name} has no example"
    report = []
    runner = doctest.DocTestRunner(verbose=False)
    for test in examples:
        runner.run(test, out=report.append)
    assert not runner.failures, f"{name}'s example failed:\n{''.join(report)}"
