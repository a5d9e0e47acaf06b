"""What the pause before the first training step of a Keras `fit` is."""

import threading

import keras

# A first step slower than this is announced (a tiny model's takes ~4 s, MiniLM's 13 s).
AFTER_SECONDS = 5.0


class FirstStepNotice(keras.callbacks.Callback):
    """Prints one line when the first training step of a `fit` has run for
    `AFTER_SECONDS`: TensorFlow is tracing the step and optimizing its graph."""

    def __init__(self):
        super().__init__()
        self._timer = None

    def on_train_batch_begin(self, batch, logs=None):
        if batch == 0 and self._timer is None:
            self._timer = threading.Timer(AFTER_SECONDS, self._say)
            self._timer.daemon = True
            self._timer.start()

    def on_train_batch_end(self, batch, logs=None):
        self._timer.cancel()

    def on_train_end(self, logs=None):
        if self._timer is not None:
            self._timer.cancel()

    @staticmethod
    def _say():
        print(
            "The first training step: TensorFlow traces the model and optimizes its "
            "graph, once per fit (seconds to a minute)...",
            flush=True,
        )
