"""Fine-tunes BERT on GLUE / XNLI / your own TSV or CSV, as the original run_classifier.py.

Outputs in --output_dir: checkpoints, eval_results.txt, test_results.tsv and
the GLUE submission file; --export_dir writes a SavedModel for TF Serving.
"""

from absl import flags

from bert_tf.cli import options_from_flags, run_main
from bert_tf.data.classification import glue
from bert_tf.tasks.classifier import ClassifierOptions, run_classifier
from bert_tf.training.distribution import define_training_flags, training_options_from_flags

FLAGS = flags.FLAGS

flags.DEFINE_string("task_name", None, f"One of: {', '.join(glue.task_names())}.")
flags.DEFINE_string("data_dir", None, "Folder with the task's .tsv files.")
flags.DEFINE_string("vocab_file", None, "The vocab.txt of the BERT model.")
flags.DEFINE_string("bert_config_file", None, "The bert_config.json of the BERT model.")
flags.DEFINE_string("output_dir", None, "Where checkpoints, features and results are written.")
flags.DEFINE_string("init_checkpoint", None, "Checkpoint to fine-tune from.")
flags.DEFINE_bool("do_lower_case", True, "Lower-case the input (uncased models).")
flags.DEFINE_integer("max_seq_length", 128, "Tokens per sequence after WordPiece.")
flags.DEFINE_bool("do_train", False, "Whether to train.")
flags.DEFINE_bool("do_eval", False, "Whether to evaluate on the dev set.")
flags.DEFINE_bool("do_predict", False, "Whether to predict the test set.")
flags.DEFINE_integer("train_batch_size", 32, "Global training batch size.")
flags.DEFINE_integer("eval_batch_size", 8, "Global evaluation batch size.")
flags.DEFINE_integer("predict_batch_size", 8, "Global prediction batch size.")
flags.DEFINE_float("learning_rate", 5e-5, "Peak learning rate.")
flags.DEFINE_float("num_train_epochs", 3.0, "Training epochs.")
flags.DEFINE_float("warmup_proportion", 0.1, "Share of training for linear warm-up.")
flags.DEFINE_integer("save_checkpoints_steps", 1000, "Updates between checkpoints.")
flags.DEFINE_integer("keep_checkpoint_max", 5, "Checkpoints kept in --output_dir.")
flags.DEFINE_integer("long_text_stride", None,
                     "Split texts longer than --max_seq_length into windows this many tokens "
                     "apart and average their logits (default: truncate, as the original).")
flags.DEFINE_string("export_dir", None, "Write a SavedModel (raw text in) here.")
flags.DEFINE_bool("overwrite", False, "Replace an existing --export_dir.")
flags.DEFINE_string("xnli_language", None, "XNLI language (the original's default: zh).")
flags.DEFINE_bool("skip_malformed", None, "Skip rows with a wrong number of columns.")
flags.DEFINE_string("text_a_column", None, "generic task: column (name or index) of text a.")
flags.DEFINE_string("text_b_column", None, "generic task: column of text b (pairs).")
flags.DEFINE_string("label_column", None, "generic task: column of the label.")
flags.DEFINE_list("labels", None, "generic task: the labels, in output order.")
flags.DEFINE_string("delimiter", None, "generic task: field delimiter (default tab).")
define_training_flags()
flags.mark_flags_as_required(["task_name", "data_dir", "vocab_file", "bert_config_file",
                              "output_dir"])

_PROCESSOR_FLAGS = ("xnli_language", "skip_malformed", "text_a_column", "text_b_column",
                    "label_column", "labels", "delimiter")


def main(argv):
    del argv
    run_classifier(options_from_flags(
        ClassifierOptions, FLAGS,
        processor_options={name: getattr(FLAGS, name) for name in _PROCESSOR_FLAGS},
        training=training_options_from_flags(FLAGS)))


if __name__ == "__main__":
    run_main(main)
