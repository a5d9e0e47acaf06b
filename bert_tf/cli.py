"""Shared plumbing for the flag-driven scripts."""

import sys

from absl import app

from bert_tf.errors import BertTfError


def run_main(main):
    """Runs an absl `main(argv)`; a BertTfError becomes one line on stderr and exit 2."""

    def wrapped(argv):
        try:
            return main(argv)
        except BertTfError as e:
            print(f"error: {e}", file=sys.stderr)
            sys.exit(2)

    app.run(wrapped)
