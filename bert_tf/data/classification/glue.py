"""Data processors of run_classifier.py: GLUE and XNLI (CLUE's JSON lines
tasks: clue.py; the user's own files: generic.py; all named in registry.py).

Each processor turns a task's files into `InputExample`s the way the
original google-research/bert `run_classifier.py` does (CoLA, MNLI, MRPC,
XNLI) or, for the GLUE tasks it lacks, the way Model Garden's
`classifier_data_lib.py` does (SST-2, STS-B, QQP, QNLI, RTE, WNLI, AX).

Rows are read by `processor.read_rows` (the original `_read_tsv`). Differences from the original, all on input it crashes on or misreads:

* blank lines are skipped (the original's `csv.reader` yields `[]` and the
  task then fails with an IndexError);
* a row with fewer columns than the file's header (or, for CoLA's
  header-less train/dev files, than 4) is an InputError naming file:line
  instead of an IndexError or a silently shifted column. QQP skips such rows
  with a warning, like Model Garden's try/except for the garbage lines of
  QQP's train set (`skip_malformed=False` makes them errors); any processor
  takes `skip_malformed=True`. Extra columns are ignored, as the original
  reads columns by position (and MNLI's label from the last one), so every
  row the original reads gives the same example;
* a label that is not in `get_labels()` is an InputError naming file:line,
  the label and the valid labels (the original fails later with a KeyError);
* QNLI guids are `"<set>-<i>"` (Model Garden's are all `"<set>-1"`) and its
  dev set type is `"dev"`.

Test sets: GLUE's have no labels (`has_test_labels=False`); their examples
get the first label of `get_labels()` (0.0 for STS-B), as in the original.
XNLI's test set has labels.
"""

import os

from bert_tf.data.classification.processor import DataProcessor, InputExample

MNLI_LABELS = ("contradiction", "entailment", "neutral")


class ColaProcessor(DataProcessor):
    """CoLA: train/dev without header [source, label, original_label, sentence];
    test with header `index sentence`. Guids `<set>-<i>`."""

    name = "cola"
    metric = "matthews"
    submission_name = "CoLA"

    def get_labels(self):
        return ["0", "1"]

    def has_header(self, split):
        # Only the test set has a header.
        return split == "test"

    def num_columns(self, split):  # noqa: ARG002
        return 4

    def make_example(self, fields, i, set_type, split):
        guid = "%s-%s" % (set_type, i)
        if split == "test":
            return InputExample(guid, fields[1], None, self.test_label())
        return InputExample(guid, fields[3], None, fields[1])


class Sst2Processor(DataProcessor):
    """SST-2: train/dev `sentence label`, test `index sentence`."""

    name = "sst-2"
    submission_name = "SST-2"

    def get_labels(self):
        return ["0", "1"]

    def make_example(self, fields, i, set_type, split):
        guid = "%s-%s" % (set_type, i)
        if split == "test":
            return InputExample(guid, fields[1], None, self.test_label())
        return InputExample(guid, fields[0], None, fields[1])


class MrpcProcessor(DataProcessor):
    """MRPC: `Quality #1 ID #2 ID #1 String #2 String` (test: `index` first)."""

    name = "mrpc"
    metric = "f1_accuracy"
    submission_name = "MRPC"

    def get_labels(self):
        return ["0", "1"]

    def make_example(self, fields, i, set_type, split):
        guid = "%s-%s" % (set_type, i)
        label = self.test_label() if split == "test" else fields[0]
        return InputExample(guid, fields[3], fields[4], label)


class StsbProcessor(DataProcessor):
    """STS-B (regression): `index genre filename year old_index source1 source2
    sentence1 sentence2 score` (test without score)."""

    name = "sts-b"
    is_regression = True
    metric = "pearson_spearman"
    submission_name = "STS-B"

    def get_labels(self):
        return []

    def make_example(self, fields, i, set_type, split):
        guid = "%s-%s" % (set_type, i)
        label = self.test_label() if split == "test" else fields[9]
        return InputExample(guid, fields[7], fields[8], label)


class QqpProcessor(DataProcessor):
    """QQP: `id qid1 qid2 question1 question2 is_duplicate` (test: `id question1
    question2`). Guids `<set>-<id>`. Malformed rows are skipped by default."""

    name = "qqp"
    metric = "f1_accuracy"
    submission_name = "QQP"
    skip_malformed = True

    def get_labels(self):
        return ["0", "1"]

    def make_example(self, fields, i, set_type, split):
        guid = "%s-%s" % (set_type, fields[0])
        if split == "test":
            return InputExample(guid, fields[1], fields[2], self.test_label())
        return InputExample(guid, fields[3], fields[4], fields[5])


class MnliProcessor(DataProcessor):
    """MNLI (matched): sentence1/sentence2 in columns 8/9, the label in the
    last column. Guids `<set>-<index column>`; dev set type "dev_matched"."""

    name = "mnli"
    submission_name = "MNLI-m"
    files = {"train": "train.tsv", "dev": "dev_matched.tsv", "test": "test_matched.tsv"}
    set_types = {"train": "train", "dev": "dev_matched", "test": "test"}

    def get_labels(self):
        return list(MNLI_LABELS)

    def make_example(self, fields, i, set_type, split):
        guid = "%s-%s" % (set_type, fields[0])
        label = self.test_label() if split == "test" else fields[-1]
        return InputExample(guid, fields[8], fields[9], label)


class MnliMismatchedProcessor(MnliProcessor):
    """MNLI mismatched dev/test (`dev_mismatched.tsv`, `test_mismatched.tsv`)."""

    name = "mnli-mm"
    submission_name = "MNLI-mm"
    files = {"train": "train.tsv", "dev": "dev_mismatched.tsv", "test": "test_mismatched.tsv"}
    set_types = {"train": "train", "dev": "dev_mismatched", "test": "test"}


class AxProcessor(MnliProcessor):
    """GLUE's diagnostic set: an MNLI model's predictions on `AX.tsv`
    (`index sentence1 sentence2`). Train/dev are MNLI's (matched), so put AX.tsv
    in the MNLI folder."""

    name = "ax"
    metric = "matthews"
    submission_name = "AX"
    files = {"train": "train.tsv", "dev": "dev_matched.tsv", "test": "AX.tsv"}

    def make_example(self, fields, i, set_type, split):
        if split != "test":
            return super().make_example(fields, i, set_type, split)
        return InputExample("%s-%s" % (set_type, i), fields[1], fields[2], self.test_label())


class _SentencePairProcessor(DataProcessor):
    """`index text_a text_b label` (test: `index text_a text_b`), guids `<set>-<i>`."""

    def make_example(self, fields, i, set_type, split):
        guid = "%s-%s" % (set_type, i)
        label = self.test_label() if split == "test" else fields[3]
        return InputExample(guid, fields[1], fields[2], label)


class QnliProcessor(_SentencePairProcessor):
    """QNLI: `index question sentence label`."""

    name = "qnli"
    submission_name = "QNLI"

    def get_labels(self):
        return ["entailment", "not_entailment"]


class RteProcessor(_SentencePairProcessor):
    """RTE: `index sentence1 sentence2 label`."""

    name = "rte"
    submission_name = "RTE"

    def get_labels(self):
        return ["entailment", "not_entailment"]


class WnliProcessor(_SentencePairProcessor):
    """WNLI: `index sentence1 sentence2 label` with labels 0/1."""

    name = "wnli"
    submission_name = "WNLI"

    def get_labels(self):
        return ["0", "1"]


class XnliProcessor(DataProcessor):
    """XNLI as the original: train from `multinli/multinli.train.<language>.tsv`
    (`premise hypo label`, "contradictory" read as "contradiction"), dev and test
    from `xnli.dev.tsv` / `xnli.test.tsv` keeping the rows of `language`
    (column 0; label column 1, sentences columns 6 and 7). Guids `<set>-<i>`,
    counted over all rows. The test set has labels."""

    name = "xnli"
    has_test_labels = True
    set_types = {"train": "train", "dev": "dev", "test": "test"}

    def __init__(self, language="zh", skip_malformed=None):
        super().__init__(skip_malformed)
        self.language = language

    @property
    def files(self):
        return {
            "train": os.path.join("multinli", f"multinli.train.{self.language}.tsv"),
            "dev": "xnli.dev.tsv",
            "test": "xnli.test.tsv",
        }

    def config(self):
        return {**super().config(), "language": self.language}

    def get_labels(self):
        return list(MNLI_LABELS)

    def make_example(self, fields, i, set_type, split):
        guid = "%s-%d" % (set_type, i)
        if split == "train":
            label = fields[2]
            if label == "contradictory":
                label = "contradiction"
            return InputExample(guid, fields[0], fields[1], label)
        if fields[0] != self.language:
            return None
        return InputExample(guid, fields[6], fields[7], fields[1])


PROCESSORS = {
    "cola": ColaProcessor,
    "sst-2": Sst2Processor,
    "mrpc": MrpcProcessor,
    "sts-b": StsbProcessor,
    "qqp": QqpProcessor,
    "mnli": MnliProcessor,
    "mnli-mm": MnliMismatchedProcessor,
    "qnli": QnliProcessor,
    "rte": RteProcessor,
    "wnli": WnliProcessor,
    "ax": AxProcessor,
    "xnli": XnliProcessor,
}
ALIASES = {
    "sst2": "sst-2",
    "sst": "sst-2",
    "stsb": "sts-b",
    "sts": "sts-b",
    "mnli-m": "mnli",
    "mnli_matched": "mnli",
    "mnli-matched": "mnli",
    "mnlim": "mnli",
    "mnli_mismatched": "mnli-mm",
    "mnli-mismatched": "mnli-mm",
    "mnli_mm": "mnli-mm",
    "mnlimm": "mnli-mm",
    "diagnostic": "ax",
}
