"""Training core: optimizers, learning-rate schedule, distribution and precision."""
