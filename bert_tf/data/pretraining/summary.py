"""Counts over the corpus and the instances made from it, and their JSON summary."""

import collections
import dataclasses


@dataclasses.dataclass
class PretrainingSummary:
    """Counts for one block or a whole run; blocks are merged with `add`."""

    documents: int = 0  # non-empty after tokenization
    sentences: int = 0  # non-empty after tokenization
    single_sentence_documents: int = 0
    long_sentences: int = 0  # more than max_seq_length - 3 tokens: cut by pair truncation
    skipped_lines: int = 0  # not UTF-8, skipped with skip_invalid_utf8
    blocks: int = 0
    instances: int = 0
    masked_positions: int = 0
    random_next: int = 0
    length_counts: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    seconds: float = 0.0

    def count_document(self, document, max_num_tokens):
        """Counts one tokenized document (a list of non-empty sentences)."""
        if not document:
            return
        self.documents += 1
        self.sentences += len(document)
        self.single_sentence_documents += len(document) == 1
        self.long_sentences += sum(len(sentence) > max_num_tokens for sentence in document)

    def count_instance(self, instance):
        """Counts one `pretraining_instances.TrainingInstance`."""
        self.instances += 1
        self.masked_positions += len(instance.masked_lm_positions)
        self.random_next += instance.is_random_next
        self.length_counts[len(instance.input_tokens)] += 1

    def add(self, other):
        """Adds the counts of `other` (another block) to these."""
        for field in dataclasses.fields(self):
            setattr(self, field.name, getattr(self, field.name) + getattr(other, field.name))

    @property
    def mean_masked_positions(self):
        return self.masked_positions / self.instances if self.instances else 0.0

    @property
    def random_next_share(self):
        return self.random_next / self.instances if self.instances else 0.0

    def length_histogram(self, max_seq_length, num_buckets=8):
        """Instances by length (real tokens) in `num_buckets` equal ranges up to
        `max_seq_length`, keyed "lo-hi" (inclusive)."""
        width = -(-max_seq_length // num_buckets)
        histogram = {}
        for lo in range(1, max_seq_length + 1, width):
            hi = min(lo + width - 1, max_seq_length)
            histogram[f"{lo}-{hi}"] = sum(
                count for length, count in self.length_counts.items() if lo <= length <= hi
            )
        return histogram

    def to_json_dict(self, max_seq_length):
        """The summary written next to the output."""
        return {
            "instances": self.instances,
            "instances_per_second": round(self.instances / self.seconds, 1)
            if self.seconds
            else None,
            "seconds": round(self.seconds, 2),
            "mean_masked_positions": round(self.mean_masked_positions, 4),
            "random_next_share": round(self.random_next_share, 4),
            "length_histogram": self.length_histogram(max_seq_length),
            "documents": self.documents,
            "sentences": self.sentences,
            "single_sentence_documents": self.single_sentence_documents,
            "long_sentences_truncated": self.long_sentences,
            "skipped_invalid_utf8_lines": self.skipped_lines,
            "blocks": self.blocks,
        }
