"""What export_model.py runs: a script's SavedModel converted to LiteRT or ONNX, float32 or
int8, with the converted classifier's dev accuracy checked against the
SavedModel's."""

import json

from absl import logging

from bert_tf.data.classification import registry
from bert_tf.errors import InputError
from bert_tf.export.deploy import accuracy_check, check_conversion, convert, format_name
from bert_tf.files import atomic_output, check_output_file, exists, write_text_atomically


def report_path(output_file):
    """Where the dev accuracy report of `output_file` goes."""
    return f"{output_file}.accuracy.json"


def convert_saved_model(options):
    """Converts as `options` say. Past --max_accuracy_drop, raises InputError
    and writes only the report.

    Args:
        options: An `ExportModelOptions` (export_model.py's flags): the
            SavedModel, the format (`litert` or `onnx`, `int8`), the output
            file and, for the dev accuracy check, the task and its data.

    Returns:
        The accuracy report (a dict, also written beside the output file as
            `<output_file>.accuracy.json`), or None without `task_name`.

    Raises:
        InputError: The format is unknown, or its runtimes (the `deploy`
            extra) are not installed; `saved_model_dir` holds no SavedModel;
            `output_file` exists without `overwrite`, or cannot be written;
            only one of `task_name` and `data_dir` is given, or the task is
            not single-label classification; or the converted model loses
            more than `max_accuracy_drop` points.

    Examples:
        >>> import os, tempfile
        >>> import bert_tf
        >>> from bert_tf.export import export_classifier
        >>> from bert_tf.export.deploy.conversion import convert_saved_model
        >>> from bert_tf.tasks.options import ExportModelOptions
        >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "movie", "was", "good", "bad"]
        >>> preprocessor = bert_tf.BertPreprocessor(bert_tf.BertTokenizer(vocabulary=vocab))
        >>> config = bert_tf.preset("bert_tiny", vocab_size=len(vocab))
        >>> model = bert_tf.BertClassifier(config, label_names=["neg", "pos"], preprocessor=preprocessor)
        >>> folder = tempfile.mkdtemp()
        >>> saved_model_dir = export_classifier(model, os.path.join(folder, "export"))
        >>> options = ExportModelOptions(
        ...     saved_model_dir=saved_model_dir,
        ...     export_format="onnx",
        ...     output_file=os.path.join(folder, "classifier.onnx"),
        ... )
        >>> print(convert_saved_model(options))
        None
        >>> os.path.exists(os.path.join(folder, "classifier.onnx"))
        True
    """
    fmt = format_name(options.export_format, options.int8)
    check_conversion(options.saved_model_dir, options.export_format)
    if exists(options.output_file) and not options.overwrite:
        raise InputError(
            f"--output_file {options.output_file!r} already exists; pass --overwrite to replace it"
        )
    check_output_file(options.output_file, "--output_file")
    if (options.data.task_name is None) != (options.data.data_dir is None):
        raise InputError("the dev accuracy check needs both --task_name and --data_dir")
    examples = None
    if options.data.task_name is not None:
        processor = registry.get_processor(options.data.task_name, **options.data.processor_options)
        if processor.is_regression or processor.multi_label:
            raise InputError(
                f"the dev accuracy check is for single-label classifiers; task "
                f"{processor.name} is not one"
            )
        examples = processor.get_dev_examples(options.data.data_dir)
    with atomic_output(options.output_file) as tmp:
        convert(options.saved_model_dir, tmp, fmt, options.model.do_lower_case)
        report = None if examples is None else _check_accuracy(options, tmp, fmt, examples)
    logging.info("wrote %s (%s)", options.output_file, fmt)
    return report


def accuracy_summary(report):
    """The dev check's line: both accuracies, the change, the labels changed."""
    fmt, count = report["format"], report["examples"]
    # Rounded, then + 0.0: a change that rounds to zero is +0.00, not -0.00.
    change = round(100 * (report[f"{fmt}_accuracy"] - report["saved_model_accuracy"]), 2) + 0.0
    return (
        f"dev accuracy on {count} examples: SavedModel {report['saved_model_accuracy']:.4f}, "
        f"{fmt} {report[f'{fmt}_accuracy']:.4f} ({change:+.2f} points; "
        f"{report['labels_changed']} of {count} labels changed)"
    )


def _check_accuracy(options, converted, fmt, examples):
    """The report of `accuracy_check`, written beside the output file;
    InputError past --max_accuracy_drop."""
    report = accuracy_check(
        options.saved_model_dir, converted, fmt, examples, options.model.do_lower_case
    )
    drop = 100 * (report["saved_model_accuracy"] - report[f"{fmt}_accuracy"])
    report["max_accuracy_drop"] = options.max_accuracy_drop
    report["written"] = drop <= options.max_accuracy_drop
    write_text_atomically(report_path(options.output_file), json.dumps(report, indent=2) + "\n")
    if not report["written"]:
        raise InputError(
            f"{accuracy_summary(report)}: more than --max_accuracy_drop="
            f"{options.max_accuracy_drop} points lost, so {options.output_file} was not written "
            f"(report: {report_path(options.output_file)})"
        )
    return report
