"""The curves' figure (training/eval_history.figure): readable at any run length."""

import math

import pytest

from bert_tf.training import eval_history

pytest.importorskip("matplotlib")


@pytest.mark.parametrize("last_step", [80, 20_000, 1_000_000])
def test_the_step_labels_do_not_run_into_each_other(last_step):
    steps = range(last_step // 80, last_step + 1, last_step // 80)  # 80 evaluations
    rows = [  # a pre-training run's held-out curves
        {
            "step": s,
            "loss": 3.5 + 4 * math.exp(-5 * s / last_step),
            "masked_lm_loss": 3.2 + 4 * math.exp(-5 * s / last_step),
            "next_sentence_loss": 0.3,
            "masked_lm_accuracy": 0.42 * s / last_step,
            "next_sentence_accuracy": 0.9,
        }
        for s in steps
    ]
    figure = eval_history.figure(rows)
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    for axes in figure.axes:
        labels = [t for t in axes.get_xticklabels() if t.get_text()]
        visible = [
            t for t in labels if axes.get_xlim()[0] <= t.get_position()[0] <= axes.get_xlim()[1]
        ]
        boxes = sorted((t.get_window_extent(renderer) for t in visible), key=lambda b: b.x0)
        assert len(boxes) >= 3
        for left, right in zip(boxes, boxes[1:]):
            # At least a space's width (10 px at 11 pt) between two labels.
            assert right.x0 - left.x1 >= 10, [t.get_text() for t in visible]
