"""The generic task's reader: JSON lines with (nested) keys, CSV with quoting,
ids, label lists from a file or from train, and one-line errors naming file:line.
(Its older TSV / CSV column tests are in test_glue.py.)"""

import json

import pytest

from bert_tf.data.classification.processor import InputExample
from bert_tf.data.classification.registry import get_processor
from bert_tf.errors import InputError


def write_lines(path, lines):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def jsonl(*records):
    return [json.dumps(r) if isinstance(r, dict) else r for r in records]


def nested_processor(**kwargs):
    return get_processor(
        "generic",
        text_a_column="data.title",
        text_b_column="data.body",
        label_column="meta.label",
        id_column="id",
        **kwargs,
    )


def test_json_lines_with_nested_keys_ids_and_labels_from_train(tmp_path):
    write_lines(
        tmp_path / "train.jsonl",
        jsonl(
            {"id": "a7", "data": {"title": "Good film", "body": "Yes"}, "meta": {"label": "pos"}},
            "",
            {"id": 8, "data": {"title": "Bad", "body": None}, "meta": {"label": "neg"}},
            {"id": 9, "data": {"title": "Meh", "body": "x"}, "meta": {"label": "neg"}},
        ),
    )
    write_lines(tmp_path / "test.json", jsonl({"id": 1, "data": {"title": "T", "body": "B"}}))
    processor = nested_processor()
    assert processor.read_labels(str(tmp_path)) == ["neg", "pos"]  # distinct, sorted
    assert processor.get_train_examples(str(tmp_path)) == [
        InputExample("a7", "Good film", "Yes", "pos"),
        InputExample("8", "Bad", None, "neg"),
        InputExample("9", "Meh", "x", "neg"),
    ]
    # The test file needs no label; .json is found beside the missing .tsv/.csv/.jsonl.
    assert processor.get_test_examples(str(tmp_path)) == [InputExample("1", "T", "B", "neg")]

    # Number labels of a regression are floats; without an id column, guids
    # are `<set>-<line - 1>`; a top-level key with a dot is taken as it is.
    write_lines(tmp_path / "r" / "train.jsonl", jsonl({"a.b": "x", "y": 2}, {"a.b": "z", "y": 0.5}))
    regression = get_processor("generic", text_a_column="a.b", label_column="y", is_regression=True)
    assert regression.get_train_examples(str(tmp_path / "r")) == [
        InputExample("train-0", "x", None, 2.0),
        InputExample("train-1", "z", None, 0.5),
    ]


def test_csv_quoted_commas_ids_and_a_labels_file(tmp_path):
    write_lines(
        tmp_path / "dev.csv",
        ["key,text,label", 'k1,"Good, really good",pos', 'k2,"He said ""no""",neg'],
    )
    labels_file = write_lines(tmp_path / "labels.txt", ["pos", "", "neg"])
    processor = get_processor(
        "generic",
        text_a_column="text",
        label_column="label",
        id_column="key",
        labels_file=labels_file,
    )
    assert processor.get_labels() == ["pos", "neg"]  # the file's order
    assert processor.read_labels(str(tmp_path)) == ["pos", "neg"]  # no train file needed
    assert processor.get_dev_examples(str(tmp_path)) == [
        InputExample("k1", "Good, really good", None, "pos"),
        InputExample("k2", 'He said "no"', None, "neg"),
    ]
    write_lines(tmp_path / "twice.txt", ["a", "a"])
    with pytest.raises(InputError, match=r"--labels_file .*twice\.txt: labels .* distinct"):
        get_processor(
            "generic", text_a_column=0, label_column=1, labels_file=str(tmp_path / "twice.txt")
        )
    with pytest.raises(InputError, match=r"input file .*nope\.txt does not exist"):
        get_processor(
            "generic", text_a_column=0, label_column=1, labels_file=str(tmp_path / "nope.txt")
        )


@pytest.mark.parametrize(
    "line, message",
    [
        (
            {"id": 1, "data": {"body": "b"}, "meta": {"label": "pos"}},
            r"train\.jsonl:2: no key 'data\.title' \(keys of 'data': 'body'\)$",
        ),
        (
            {"id": 1, "data": {"title": "t", "body": "b"}},
            r"train\.jsonl:2: no key 'meta\.label' \(keys: 'id', 'data'\)$",
        ),
        (
            {"id": 1, "data": {"title": "t", "body": "b"}, "meta": {"label": "maybe"}},
            r"train\.jsonl:2: unknown label 'maybe'; the labels of task generic are 'neg', 'pos'$",
        ),
        (
            {"id": 1, "data": {"title": ["t"], "body": "b"}, "meta": {"label": "pos"}},
            r"train\.jsonl:2: 'data\.title' is \[\"t\"\], expected a string$",
        ),
        ('{"id": 1, "data": ', r"train\.jsonl:2: not valid JSON"),
    ],
)
def test_json_lines_errors_name_file_and_line(tmp_path, line, message):
    good = {"id": 0, "data": {"title": "t", "body": "b"}, "meta": {"label": "neg"}}
    write_lines(tmp_path / "train.jsonl", jsonl(good, line))
    with pytest.raises(InputError, match=message):
        nested_processor(labels="neg,pos").get_train_examples(str(tmp_path))


def test_delimited_errors_name_file_and_line(tmp_path):
    write_lines(tmp_path / "train.csv", ["text,label", "ok,pos", "no label here"])
    processor = get_processor("generic", text_a_column="text", label_column="label", labels="pos")
    with pytest.raises(InputError, match=r"train\.csv:3: 1 columns, expected at least 2$"):
        processor.get_train_examples(str(tmp_path))
    write_lines(tmp_path / "train.csv", ["text,label", "ok,pos", "fine,neutral"])
    with pytest.raises(InputError, match=r"train\.csv:3: unknown label 'neutral'"):
        processor.get_train_examples(str(tmp_path))
    with pytest.raises(InputError, match=r"train\.csv: no id column 'key' in the header"):
        get_processor(
            "generic", text_a_column="text", label_column="label", id_column="key", labels="pos"
        ).get_train_examples(str(tmp_path))


def test_multi_label_lists_from_json_and_delimited_cells(tmp_path):
    write_lines(tmp_path / "train.tsv", ["text\ttags", "a\tx;y", "b\t", "c\t z "])
    write_lines(
        tmp_path / "dev.jsonl", jsonl({"text": "d", "tags": ["y"]}, {"text": "e", "tags": []})
    )
    write_lines(tmp_path / "test.jsonl", jsonl({"text": "f"}))
    processor = get_processor(
        "generic", text_a_column="text", label_column="tags", multi_label=True, label_delimiter=";"
    )
    assert processor.read_labels(str(tmp_path)) == ["x", "y", "z"]  # the union, sorted
    assert processor.get_train_examples(str(tmp_path)) == [
        InputExample("train-1", "a", None, ["x", "y"]),
        InputExample("train-2", "b", None, []),
        InputExample("train-3", "c", None, ["z"]),
    ]
    assert processor.get_dev_examples(str(tmp_path)) == [
        InputExample("dev-0", "d", None, ["y"]),
        InputExample("dev-1", "e", None, []),
    ]
    assert processor.get_test_examples(str(tmp_path)) == [InputExample("test-0", "f", None, [])]
    assert processor.config()["multi_label"] is True
    write_lines(tmp_path / "dev.jsonl", jsonl({"text": "d", "tags": ["y", "w"]}))
    with pytest.raises(InputError, match=r"dev\.jsonl:1: unknown label 'w'; the labels .* 'x'"):
        processor.get_dev_examples(str(tmp_path))
    write_lines(tmp_path / "dev.jsonl", jsonl({"text": "d", "tags": [["y"]]}))
    with pytest.raises(InputError, match=r"dev\.jsonl:1: 'tags' is \[\"y\"\], expected a string"):
        processor.get_dev_examples(str(tmp_path))
    with pytest.raises(InputError, match="multi-label or a regression"):
        get_processor(
            "generic", text_a_column=0, label_column=1, multi_label=True, is_regression=True
        )
