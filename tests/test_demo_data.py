"""The demo's embedded data (demo/data/): reproducible from demo/make_data.py
and readable by the pipeline's own readers."""

import json
import os
import random
import re
import shutil
import subprocess
import sys

import pytest
from shared import HANG_TIMEOUT

from bert_tf.data.classification.registry import get_processor
from bert_tf.data.pretraining.corpus import CorpusReader
from bert_tf.data.squad.reader import read_squad_examples

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "demo", "make_data.py")
DATA = os.path.join(ROOT, "demo", "data")
CORPUS = os.path.join(DATA, "corpus.txt")
CLASSIFY = os.path.join(DATA, "classify")
SQUAD = os.path.join(DATA, "squad")
FILES = [
    "corpus.txt",
    "classify/train.tsv",
    "classify/dev.tsv",
    "classify/test.tsv",
    "squad/train.json",
    "squad/dev.json",
]
LABELS = ["town", "person", "animal", "ship", "invention"]
# What run_classifier.py passes for --task_name=generic --text_a_column=sentence
# --label_column=label --labels=town,person,animal,ship,invention (unset flags are None).
CLASSIFIER_FLAGS = {
    "xnli_language": None,
    "skip_malformed": None,
    "text_a_column": "sentence",
    "text_b_column": None,
    "label_column": "label",
    "labels": LABELS,
    "delimiter": None,
}


def generate(output_dir, *args):
    return subprocess.run(
        [sys.executable, SCRIPT, "--output_dir", str(output_dir), *args],
        capture_output=True,
        text=True,
        timeout=HANG_TIMEOUT,
    )


def read_documents():
    with open(CORPUS, encoding="utf-8") as f:
        text = f.read()
    return text, [block.split("\n") for block in text.rstrip("\n").split("\n\n")]


def read_tsv(name):
    with open(os.path.join(CLASSIFY, name), encoding="utf-8") as f:
        lines = f.read().splitlines()
    return lines[0].split("\t"), [tuple(line.split("\t")) for line in lines[1:]]


def load_squad(name):
    with open(os.path.join(SQUAD, name), encoding="utf-8") as f:
        return json.load(f)


def squad_questions(data):
    for article in data["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                yield article["title"], paragraph["context"], qa


# -- reproducibility -----------------------------------------------------------


def test_committed_files_are_what_the_generator_writes(tmp_path):
    result = generate(tmp_path)
    assert result.returncode == 0, result.stderr
    written = sorted(
        os.path.relpath(os.path.join(d, f), tmp_path).replace(os.sep, "/")
        for d, _, files in os.walk(tmp_path)
        for f in files
    )
    assert written == sorted(FILES)
    for name in FILES:
        with open(tmp_path / name, "rb") as new, open(os.path.join(DATA, name), "rb") as old:
            assert new.read() == old.read(), f"demo/data/{name} is stale: run {SCRIPT}"


def test_check_flag_detects_stale_files(tmp_path):
    assert generate(DATA, "--check").returncode == 0
    copy = tmp_path / "data"
    shutil.copytree(DATA, copy)
    with open(copy / "classify" / "dev.tsv", "a", encoding="utf-8") as f:
        f.write("An extra sentence that the generator did not write.\ttown\n")
    result = generate(copy, "--check")
    assert result.returncode == 1 and "classify/dev.tsv" in result.stderr
    os.remove(copy / "squad" / "train.json")
    assert "squad/train.json" in generate(copy, "--check").stderr


# -- corpus --------------------------------------------------------------------


def test_corpus_format_and_size():
    text, documents = read_documents()
    assert 300_000 <= len(text.encode("utf-8")) <= 500_000
    # One sentence per line, exactly one blank line between documents, none
    # at the start or end.
    assert text[0].strip() and text.endswith(".\n") and not text.endswith("\n\n")
    assert "\n\n\n" not in text and "\r" not in text and "\t" not in text
    lines = text.rstrip("\n").split("\n")
    assert all(line == line.strip() for line in lines)
    # The pre-training reader sees the same documents.
    assert list(CorpusReader([CORPUS]).documents()) == documents
    assert 300 <= len(documents) <= 600
    assert all(5 <= len(document) <= 30 for document in documents)
    sentences = [s for document in documents for s in document]
    assert 4000 <= len(sentences) <= 7000
    lengths = [len(s.split()) for s in sentences]
    assert min(lengths) >= 8 and max(lengths) <= 30
    assert all(s[0].isupper() or s[0] == '"' for s in sentences)
    assert all(s[-1] in '.?!"' for s in sentences)


def test_corpus_vocabulary_and_prose_features():
    text, _ = read_documents()
    types = {w.lower() for w in re.findall(r"[A-Za-z]+", text)}
    assert 2500 <= len(types) <= 20000
    assert len(re.findall(r"\b1[5-9]\d\d\b", text)) > 1000  # years
    assert text.count(",") > 2000 and text.count('"') > 200 and text.count("(") > 50
    assert len(re.findall(r"\b\d+ (?:kilometres|metres|centimetres|knots)\b", text)) > 200


def content_words(sentence):
    return {w.lower() for w in re.findall(r"[A-Za-z]+", sentence)} - STOPWORDS


STOPWORDS = set(
    """a an the of in on at to and or but for by with from as is was were be been
are it its he his him she her they their them this that which who whom what when where while
after before than then there here not no also only most more many some one two three four five
six up down out over under into about each every all other such so very still now today year
years time first""".split()
)


def test_next_sentence_is_recognisable():
    """A proxy for learnable next-sentence prediction: the next sentence of a
    document shares words (the subject's name, the document's own facts and
    topic) with the sentences before it far more often than a sentence from
    a random other document does."""
    _, documents = read_documents()
    rng = random.Random(0)
    follows, random_pairs, single_follows, single_random = [], [], [], []
    for i, document in enumerate(documents):
        for k in range(1, len(document)):
            context = set().union(*(content_words(s) for s in document[max(0, k - 3) : k]))
            j = (i + 1 + rng.randrange(len(documents) - 1)) % len(documents)
            other = rng.choice(documents[j])
            follows.append(bool(context & content_words(document[k])))
            random_pairs.append(bool(context & content_words(other)))
            single_follows.append(bool(content_words(document[k - 1]) & content_words(document[k])))
            single_random.append(bool(content_words(document[k - 1]) & content_words(other)))
    share = lambda flags: sum(flags) / len(flags)  # noqa: E731
    assert share(follows) >= 0.5 and share(random_pairs) <= 0.25
    assert share(follows) - share(random_pairs) >= 0.3
    assert share(single_follows) >= 3 * share(single_random)


# -- classification ------------------------------------------------------------


def test_classify_files_read_as_run_classifier_reads_them():
    processor = get_processor("generic", **CLASSIFIER_FLAGS)
    assert processor.get_labels() == LABELS
    train = processor.get_train_examples(CLASSIFY)
    dev = processor.get_dev_examples(CLASSIFY)
    test = processor.get_test_examples(CLASSIFY)  # labels not read: the first label
    assert (len(train), len(dev), len(test)) == (600, 150, 150)
    assert {e.label for e in test} == {"town"}
    for examples in (train, dev):
        counts = {label: sum(e.label == label for e in examples) for label in LABELS}
        assert len(set(counts.values())) == 1, counts  # balanced
        assert all(e.text_b is None and e.text_a for e in examples)
    # The test file keeps its labels for the demo's own check.
    labelled = get_processor("generic", test_has_labels=True, **CLASSIFIER_FLAGS)
    test = labelled.get_test_examples(CLASSIFY)
    assert {e.label for e in test} == set(LABELS)
    assert [e.text_a for e in test] == [row[0] for row in read_tsv("test.tsv")[1]]


def test_classify_sentences_come_from_disjoint_documents():
    _, documents = read_documents()
    document_of = {}
    for i, document in enumerate(documents):
        for sentence in document:
            document_of.setdefault(sentence, []).append(i)
    splits = {}
    for split in ("train", "dev", "test"):
        header, rows = read_tsv(f"{split}.tsv")
        assert header == ["sentence", "label"]
        assert all(len(row) == 2 and row[1] in LABELS for row in rows)
        splits[split] = rows
    label_of_document = {}
    docs = {}
    for split, rows in splits.items():
        docs[split] = set()
        for sentence, label in rows:
            # Each sentence is one corpus sentence, of one document, whose
            # sentences all get the same label.
            assert len(document_of.get(sentence, [])) == 1, sentence
            (i,) = document_of[sentence]
            assert label_of_document.setdefault(i, label) == label
            docs[split].add(i)
    sentences = {split: {row[0] for row in rows} for split, rows in splits.items()}
    assert all(len(sentences[s]) == len(splits[s]) for s in splits)  # no duplicates
    assert not sentences["train"] & (sentences["dev"] | sentences["test"])
    assert not sentences["dev"] & sentences["test"]
    assert not docs["train"] & (docs["dev"] | docs["test"]) and not docs["dev"] & docs["test"]


# -- SQuAD ---------------------------------------------------------------------


@pytest.mark.parametrize("name,low,high", [("train.json", 350, 450), ("dev.json", 80, 120)])
def test_squad_answers_are_at_their_offsets(name, low, high):
    data = load_squad(name)
    assert data["version"] == "1.1"
    questions = list(squad_questions(data))
    assert low <= len(questions) <= high
    assert len({qa["id"] for _, _, qa in questions}) == len(questions)
    for _, context, qa in questions:
        (answer,) = qa["answers"]
        start = answer["answer_start"]
        assert answer["text"] and context[start : start + len(answer["text"])] == answer["text"]
        assert qa["question"].endswith("?") and qa["question"] not in context
        assert answer["text"] not in qa["question"]
    # Contexts are runs of consecutive corpus sentences.
    _, documents = read_documents()
    corpus = {
        " ".join(document[i:j])
        for document in documents
        for i in range(len(document))
        for j in range(i + 1, min(len(document), i + 6) + 1)
    }
    assert all(context in corpus for _, context, _ in questions)
    # The answer word span is recovered by run_squad's reader.
    result = read_squad_examples(os.path.join(SQUAD, name), is_training=True)
    assert len(result.examples) == len(questions) and result.num_skipped == 0
    assert result.num_unrecoverable == 0


def test_squad_dev_documents_are_not_in_train():
    train, dev = load_squad("train.json"), load_squad("dev.json")
    train_titles = {a["title"] for a in train["data"]}
    dev_titles = {a["title"] for a in dev["data"]}
    assert dev_titles and not train_titles & dev_titles
    train_contexts = {c for _, c, _ in squad_questions(train)}
    assert not train_contexts & {c for _, c, _ in squad_questions(dev)}
    # Questions vary in wording: many distinct openings.
    openings = {" ".join(qa["question"].split()[:3]) for _, _, qa in squad_questions(train)}
    assert len(openings) >= 40
