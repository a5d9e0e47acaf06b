"""The scores of SQuAD predictions, as run_squad.py writes them to eval_results.json."""

from bert_tf.metrics import cmrc2018
from bert_tf.metrics import squad as squad_metrics

EVAL_METRICS = ("squad", "cmrc2018")


def score_predictions(examples, outputs, eval_metric="squad"):
    """`outputs` (`postprocess.SquadPredictions`) of `examples` scored by
    CMRC 2018's metric (`eval_metric="cmrc2018"`), or SQuAD v2.0's
    (`outputs.null_odds` set) or v1.1's official script."""
    if eval_metric == "cmrc2018":
        return cmrc2018.evaluate_cmrc2018(examples, outputs.predictions)
    if outputs.null_odds is not None:
        return squad_metrics.evaluate_v2(examples, outputs.predictions, outputs.null_odds)
    return squad_metrics.evaluate_v1(examples, outputs.predictions)
