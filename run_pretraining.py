"""Pre-trains BERT (masked LM + next sentence) on TFRecords from create_pretraining_data.py.

The original google-research/bert flags, plus the shared training flags
(--distribution_strategy, --dtype, --jit_compile, --optimizer, ...).
"""

from absl import flags

from bert_tf.cli import options_from_flags, run_main
from bert_tf.tasks.pretraining import PretrainingOptions, run_pretraining
from bert_tf.training.distribution import define_training_flags, training_options_from_flags

FLAGS = flags.FLAGS

flags.DEFINE_string("bert_config_file", None, "The bert_config.json of the model to train.")
flags.DEFINE_string("input_file", None, "Input TFRecord files (comma-separated globs).")
flags.DEFINE_string("output_dir", None, "Where checkpoints and results are written.")
flags.DEFINE_string("init_checkpoint", None, "Checkpoint to start from (original TF1 or bert_tf).")
flags.DEFINE_integer("max_seq_length", 128, "Sequence length of the input records.")
flags.DEFINE_integer("max_predictions_per_seq", 20, "Masked positions per record.")
flags.DEFINE_bool("do_train", False, "Whether to train.")
flags.DEFINE_bool("do_eval", False, "Whether to evaluate (writes eval_results.txt).")
flags.DEFINE_integer("train_batch_size", 32, "Global training batch size.")
flags.DEFINE_integer("eval_batch_size", 8, "Global evaluation batch size.")
flags.DEFINE_float("learning_rate", 5e-5, "Peak learning rate.")
flags.DEFINE_integer("num_train_steps", 100000, "Optimizer updates to train for.")
flags.DEFINE_integer("num_warmup_steps", 10000, "Linear warm-up updates.")
flags.DEFINE_integer("save_checkpoints_steps", 1000, "Updates between checkpoints.")
flags.DEFINE_integer("max_eval_steps", 100, "Maximum evaluation batches.")
flags.DEFINE_integer("keep_checkpoint_max", 5, "Checkpoints kept in --output_dir.")
define_training_flags()
flags.mark_flags_as_required(["bert_config_file", "input_file", "output_dir"])


def main(argv):
    del argv
    run_pretraining(options_from_flags(PretrainingOptions, FLAGS,
                                       training=training_options_from_flags(FLAGS)))


if __name__ == "__main__":
    run_main(main)
