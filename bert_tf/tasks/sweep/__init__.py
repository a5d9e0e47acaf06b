"""The paper's fine-tuning protocol as one command: a grid of learning
rates, batch sizes and epochs, each configuration run from several seeds
(restarts), summarised, and the best run chosen on the dev set.

`options`: the flags (free of TensorFlow); `runs`: the loop over the runs
(`tasks.run.run_task` hands a sweep to it); `summary`: the statistics, the
choice and the result files; `plot`: the PNG.
"""
