"""Property tests: NER chunks and entity scores (bert_tf.metrics.entities) against
seqeval on random tag sequences: BIO as conlleval (seqeval's default mode),
BIOES strictly (seqeval's strict IOBES mode), BMES as BIOES with M for I."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from seqeval import metrics
from seqeval.metrics.sequence_labeling import get_entities
from seqeval.scheme import IOBES, Entities

from bert_tf.metrics.entities import entity_scores
from bert_tf.text.tags import chunks

TYPES = ("PER", "LOC")
PREFIXES = {"bio": "BI", "bioes": "BIES", "bmes": "BMES"}


def all_tags(scheme):
    return ["O", *(f"{p}-{t}" for p in PREFIXES[scheme] for t in TYPES)]


def tag_lists(scheme):
    return st.lists(st.sampled_from(all_tags(scheme)), max_size=12)


@st.composite
def gold_and_predicted(draw, scheme):
    """Sentences of gold tags, and predictions that keep about half of them."""
    gold = draw(st.lists(tag_lists(scheme), min_size=1, max_size=5))
    others = all_tags(scheme)
    predicted = [[draw(st.sampled_from([tag] * len(others) + others)) for tag in s] for s in gold]
    return gold, predicted


def as_iobes(sentences):
    return [[tag.replace("M-", "I-") for tag in s] for s in sentences]


def seqeval_chunks(tags, scheme):
    """seqeval's entities of one sentence as (type, first, last)."""
    if scheme == "bio":
        return set(get_entities(tags))
    [entities] = Entities(as_iobes([tags]), IOBES).entities
    return {(e.tag, e.start, e.end - 1) for e in entities}


@pytest.mark.parametrize("scheme", ["bio", "bioes", "bmes"])
@settings(max_examples=300)
@given(data=st.data())
def test_chunks_are_seqevals_entities(scheme, data):
    tags = data.draw(tag_lists(scheme))
    assert chunks(tags, scheme) == seqeval_chunks(tags, scheme)


def seqeval_scores(gold, predicted, scheme):
    kwargs = {} if scheme == "bio" else dict(mode="strict", scheme=IOBES)
    if scheme != "bio":
        gold, predicted = as_iobes(gold), as_iobes(predicted)
    overall = tuple(
        f(gold, predicted, zero_division=0, **kwargs)
        for f in (metrics.precision_score, metrics.recall_score, metrics.f1_score)
    )
    report = metrics.classification_report(
        gold, predicted, output_dict=True, zero_division=0, **kwargs
    )
    by_type = {
        name: (r["precision"], r["recall"], r["f1-score"], r["support"])
        for name, r in report.items()
        if "avg" not in name
    }
    return overall, by_type


# seqeval averages over no entities with numpy when there are none.
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("scheme", ["bio", "bioes", "bmes"])
@settings(max_examples=100)
@given(data=st.data())
def test_entity_scores_are_seqevals(scheme, data):
    gold, predicted = data.draw(gold_and_predicted(scheme))
    overall, by_type = entity_scores(gold, predicted, scheme)
    expected, expected_by_type = seqeval_scores(gold, predicted, scheme)
    assert (overall.precision, overall.recall, overall.f1) == pytest.approx(expected, abs=1e-12)
    for name, scores in by_type.items():
        if scores.num_gold:  # seqeval reports the types with gold entities
            assert (
                scores.precision,
                scores.recall,
                scores.f1,
                scores.num_gold,
            ) == pytest.approx(expected_by_type.pop(name), abs=1e-12), name
    assert not {name for name, r in expected_by_type.items() if r[3]}
