"""GLUE / XNLI / generic processors on lines in each task's real file format."""

import csv
import io

import pytest

from bert_tf.data.classification import glue, processor
from bert_tf.data.classification.processor import InputExample
from bert_tf.data.classification.registry import get_processor
from bert_tf.errors import InputError


def write(tmp_path, files):
    for name, lines in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(tmp_path)


def tsv(*fields):
    return "\t".join(fields)


MRPC_HEADER = tsv("Quality", "#1 ID", "#2 ID", "#1 String", "#2 String")
MRPC_A = 'Amrozi accused his brother , whom he called " the witness " , of deliberately distorting.'
MNLI_TRAIN_HEADER = tsv(
    "index",
    "promptID",
    "pairID",
    "genre",
    "sentence1_binary_parse",
    "sentence2_binary_parse",
    "sentence1_parse",
    "sentence2_parse",
    "sentence1",
    "sentence2",
    "label1",
    "gold_label",
)
MNLI_DEV_HEADER = tsv(
    *MNLI_TRAIN_HEADER.split("\t")[:10],
    "label1",
    "label2",
    "label3",
    "label4",
    "label5",
    "gold_label",
)
MNLI_TEST_HEADER = tsv(*MNLI_TRAIN_HEADER.split("\t")[:10])
PARSES = ("( ( a b ) c )", "( d e )", "(ROOT (S a b c))", "(ROOT (S d e))")
STSB_HEADER = tsv(
    "index",
    "genre",
    "filename",
    "year",
    "old_index",
    "source1",
    "source2",
    "sentence1",
    "sentence2",
    "score",
)
XNLI_HEADER = tsv(
    "language",
    "gold_label",
    "sentence1_binary_parse",
    "sentence2_binary_parse",
    "sentence1_parse",
    "sentence2_parse",
    "sentence1",
    "sentence2",
    "promptID",
    "pairID",
    "genre",
    "label1",
    "label2",
    "label3",
    "label4",
    "label5",
    "sentence1_tokenized",
    "sentence2_tokenized",
    "match",
)


def xnli_row(language, label, s1, s2):
    return tsv(
        language,
        label,
        "x",
        "x",
        "x",
        "x",
        s1,
        s2,
        "1",
        "1",
        "facetoface",
        label,
        label,
        label,
        label,
        label,
        s1,
        s2,
        "True",
    )


# task -> (files, {split: [(guid, text_a, text_b, label), ...]})
CASES = {
    "cola": (
        {
            "train.tsv": [
                tsv("gj04", "1", "", "Our friends won't buy this analysis."),
                tsv("gj04", "0", "*", '"They drank the pub.'),
            ],
            "dev.tsv": [tsv("clc95", "1", "", "The sailors rode the breeze clear of the rocks.")],
            "test.tsv": [tsv("index", "sentence"), tsv("0", "Bill whistled past the house.")],
        },
        {
            "train": [
                ("train-0", "Our friends won't buy this analysis.", None, "1"),
                ("train-1", '"They drank the pub.', None, "0"),
            ],
            "dev": [("dev-0", "The sailors rode the breeze clear of the rocks.", None, "1")],
            "test": [("test-1", "Bill whistled past the house.", None, "0")],
        },
    ),
    "sst-2": (
        {
            "train.tsv": [
                tsv("sentence", "label"),
                tsv("hide new secretions ", "0"),
                tsv('" charming " and often affecting ', "1"),
            ],
            "dev.tsv": [tsv("sentence", "label"), tsv("it 's a charming journey . ", "1")],
            "test.tsv": [tsv("index", "sentence"), tsv("0", "uneasy mishmash of styles . ")],
        },
        {
            "train": [
                ("train-1", "hide new secretions ", None, "0"),
                ("train-2", '" charming " and often affecting ', None, "1"),
            ],
            "dev": [("dev-1", "it 's a charming journey . ", None, "1")],
            "test": [("test-1", "uneasy mishmash of styles . ", None, "0")],
        },
    ),
    "mrpc": (
        {
            "train.tsv": [MRPC_HEADER, tsv("1", "702876", "702977", MRPC_A, "Referring to him .")],
            "dev.tsv": [MRPC_HEADER, tsv("0", "1", "2", "He said .", '"Yes" .')],
            "test.tsv": [
                tsv("index", "#1 ID", "#2 ID", "#1 String", "#2 String"),
                tsv("0", "1089874", "1089925", "PCCW 's chief .", "Current Chief ."),
            ],
        },
        {
            "train": [("train-1", MRPC_A, "Referring to him .", "1")],
            "dev": [("dev-1", "He said .", '"Yes" .', "0")],
            "test": [("test-1", "PCCW 's chief .", "Current Chief .", "0")],
        },
    ),
    "sts-b": (
        {
            "train.tsv": [
                STSB_HEADER,
                tsv(
                    "0",
                    "main-captions",
                    "MSRvid",
                    "2012test",
                    "0001",
                    "none",
                    "none",
                    "A plane is taking off.",
                    "An air plane is taking off.",
                    "5.000",
                ),
            ],
            "dev.tsv": [
                STSB_HEADER,
                tsv(
                    "0",
                    "main-captions",
                    "MSRvid",
                    "2012test",
                    "0000",
                    "none",
                    "none",
                    "A man with a hat.",
                    "A man.",
                    "1.5",
                ),
            ],
            "test.tsv": [
                tsv(*STSB_HEADER.split("\t")[:9]),
                tsv(
                    "0",
                    "main-captions",
                    "MSRvid",
                    "2012test",
                    "0024",
                    "none",
                    "none",
                    "A girl is styling her hair.",
                    "A girl is brushing her hair.",
                ),
            ],
        },
        {
            "train": [("train-1", "A plane is taking off.", "An air plane is taking off.", 5.0)],
            "dev": [("dev-1", "A man with a hat.", "A man.", 1.5)],
            "test": [
                ("test-1", "A girl is styling her hair.", "A girl is brushing her hair.", 0.0)
            ],
        },
    ),
    "qqp": (
        {
            "train.tsv": [
                tsv("id", "qid1", "qid2", "question1", "question2", "is_duplicate"),
                tsv("133273", "213221", "213222", "How is life?", "Which level?", "0"),
                tsv("402555", "536040", "garbage line"),
                tsv("360472", "364011", "490273", '"What" is X?', "Y?", "1"),
            ],
            "dev.tsv": [
                tsv("id", "qid1", "qid2", "question1", "question2", "is_duplicate"),
                tsv("201359", "303345", "303346", "Why?", "Why not?", "1"),
            ],
            "test.tsv": [
                tsv("id", "question1", "question2"),
                tsv("0", "Why do rockets look white?", "Why are rockets white?"),
            ],
        },
        {
            "train": [
                ("train-133273", "How is life?", "Which level?", "0"),
                ("train-360472", '"What" is X?', "Y?", "1"),
            ],
            "dev": [("dev-201359", "Why?", "Why not?", "1")],
            "test": [("test-0", "Why do rockets look white?", "Why are rockets white?", "0")],
        },
    ),
    "mnli": (
        {
            "train.tsv": [
                MNLI_TRAIN_HEADER,
                tsv(
                    "0",
                    "31193",
                    "31193n",
                    "government",
                    *PARSES,
                    "Conceptually cream skimming.",
                    "Product and geography.",
                    "neutral",
                    "neutral",
                ),
            ],
            "dev_matched.tsv": [
                MNLI_DEV_HEADER,
                tsv(
                    "7",
                    "63735",
                    "63735n",
                    "slate",
                    *PARSES,
                    "The new rights.",
                    "Everyone loves.",
                    "neutral",
                    "entailment",
                    "neutral",
                    "neutral",
                    "neutral",
                    "entailment",
                ),
            ],
            "test_matched.tsv": [
                MNLI_TEST_HEADER,
                tsv("3", "31193", "31193c", "government", *PARSES, "Hello.", "Bye."),
            ],
        },
        {
            "train": [
                ("train-0", "Conceptually cream skimming.", "Product and geography.", "neutral")
            ],
            "dev": [("dev_matched-7", "The new rights.", "Everyone loves.", "entailment")],
            "test": [("test-3", "Hello.", "Bye.", "contradiction")],
        },
    ),
    "mnli-mm": (
        {
            "train.tsv": [MNLI_TRAIN_HEADER],
            "dev_mismatched.tsv": [
                MNLI_DEV_HEADER,
                tsv(
                    "9",
                    "75290",
                    "75290c",
                    "letters",
                    *PARSES,
                    "Your gift.",
                    "Hundreds.",
                    "contradiction",
                    "contradiction",
                    "contradiction",
                    "contradiction",
                    "contradiction",
                    "contradiction",
                ),
            ],
            "test_mismatched.tsv": [
                MNLI_TEST_HEADER,
                tsv("0", "1", "1n", "letters", *PARSES, "A.", "B."),
            ],
        },
        {
            "train": [],
            "dev": [("dev_mismatched-9", "Your gift.", "Hundreds.", "contradiction")],
            "test": [("test-0", "A.", "B.", "contradiction")],
        },
    ),
    "qnli": (
        {
            "train.tsv": [
                tsv("index", "question", "sentence", "label"),
                tsv("0", "When did it begin?", "Unlike the two.", "not_entailment"),
            ],
            "dev.tsv": [
                tsv("index", "question", "sentence", "label"),
                tsv("0", "What came?", "The Tech.", "entailment"),
            ],
            "test.tsv": [tsv("index", "question", "sentence"), tsv("0", "What?", "That.")],
        },
        {
            "train": [("train-1", "When did it begin?", "Unlike the two.", "not_entailment")],
            "dev": [("dev-1", "What came?", "The Tech.", "entailment")],
            "test": [("test-1", "What?", "That.", "entailment")],
        },
    ),
    "rte": (
        {
            "train.tsv": [
                tsv("index", "sentence1", "sentence2", "label"),
                tsv("0", "No Weapons Found.", "Weapons Found.", "not_entailment"),
            ],
            "dev.tsv": [
                tsv("index", "sentence1", "sentence2", "label"),
                tsv("0", "Dana Reeve died.", "Reeve died.", "entailment"),
            ],
            "test.tsv": [tsv("index", "sentence1", "sentence2"), tsv("0", "Mangla.", "Tarbela.")],
        },
        {
            "train": [("train-1", "No Weapons Found.", "Weapons Found.", "not_entailment")],
            "dev": [("dev-1", "Dana Reeve died.", "Reeve died.", "entailment")],
            "test": [("test-1", "Mangla.", "Tarbela.", "entailment")],
        },
    ),
    "wnli": (
        {
            "train.tsv": [
                tsv("index", "sentence1", "sentence2", "label"),
                tsv("0", "I stuck a pin.", "The carrot had a hole.", "1"),
            ],
            "dev.tsv": [
                tsv("index", "sentence1", "sentence2", "label"),
                tsv("0", "The drain is clogged.", "The hair is clogged.", "0"),
            ],
            "test.tsv": [tsv("index", "sentence1", "sentence2"), tsv("0", "Maude.", "Dolly.")],
        },
        {
            "train": [("train-1", "I stuck a pin.", "The carrot had a hole.", "1")],
            "dev": [("dev-1", "The drain is clogged.", "The hair is clogged.", "0")],
            "test": [("test-1", "Maude.", "Dolly.", "0")],
        },
    ),
    "ax": (
        {"AX.tsv": [tsv("index", "sentence1", "sentence2"), tsv("0", "The cat sat.", "A cat.")]},
        {"test": [("test-1", "The cat sat.", "A cat.", "contradiction")]},
    ),
    "xnli": (
        {
            "multinli/multinli.train.zh.tsv": [
                tsv("premise", "hypo", "label"),
                tsv("从概念上看", "产品和地理", "neutral"),
                tsv("你知道", "你失去了", "contradictory"),
            ],
            "xnli.dev.tsv": [
                XNLI_HEADER,
                xnli_row("ar", "neutral", "a", "b"),
                xnli_row("zh", "entailment", "他说", "妈妈"),
            ],
            "xnli.test.tsv": [XNLI_HEADER, xnli_row("zh", "contradiction", '"好"', "不")],
        },
        {
            "train": [
                ("train-1", "从概念上看", "产品和地理", "neutral"),
                ("train-2", "你知道", "你失去了", "contradiction"),
            ],
            "dev": [("dev-2", "他说", "妈妈", "entailment")],
            "test": [("test-1", '"好"', "不", "contradiction")],
        },
    ),
}


@pytest.mark.parametrize("task", sorted(CASES))
def test_processor_reads_real_format(tmp_path, task):
    files, expected = CASES[task]
    data_dir = write(tmp_path, files)
    processor = get_processor(task)
    for split, rows in expected.items():
        examples = processor.get_examples(data_dir, split)
        assert examples == [InputExample(*row) for row in rows], split
    if "train" in expected:
        assert processor.get_train_examples(data_dir) == processor.get_examples(data_dir, "train")
    assert processor.get_test_examples(data_dir) == processor.get_examples(data_dir, "test")


def test_attributes():
    assert get_processor("STS-B").is_regression
    assert get_processor("sts-b").get_labels() == []
    assert not get_processor("mrpc").is_regression
    assert get_processor("MNLI").get_labels() == ["contradiction", "entailment", "neutral"]
    assert get_processor("xnli").get_labels() == ["contradiction", "entailment", "neutral"]
    assert {
        name: get_processor(name).metric
        for name in ("cola", "mrpc", "qqp", "sts-b", "sst-2", "mnli", "ax")
    } == {
        "cola": "matthews",
        "mrpc": "f1_accuracy",
        "qqp": "f1_accuracy",
        "sts-b": "pearson_spearman",
        "sst-2": "accuracy",
        "mnli": "accuracy",
        "ax": "matthews",
    }
    assert [
        get_processor(n).submission_name
        for n in (
            "cola",
            "sst2",
            "mrpc",
            "stsb",
            "qqp",
            "mnli",
            "mnli_mismatched",
            "qnli",
            "rte",
            "wnli",
            "ax",
        )
    ] == ["CoLA", "SST-2", "MRPC", "STS-B", "QQP", "MNLI-m", "MNLI-mm", "QNLI", "RTE", "WNLI", "AX"]
    assert get_processor("xnli").has_test_labels
    assert not get_processor("cola").has_test_labels
    for name in ("mnli-mm", "MNLI_MISMATCHED", "mnli-mismatched"):
        assert isinstance(get_processor(name), glue.MnliMismatchedProcessor)
    assert type(get_processor("Sst2")) is glue.Sst2Processor


def test_get_processor_options():
    # Options of other tasks and None values are ignored.
    processor = get_processor("xnli", xnli_language="de", text_a_column=None, labels="a,b")
    assert processor.language == "de"
    assert processor.input_files("d", "train") == ["d/multinli/multinli.train.de.tsv"]
    assert get_processor("xnli").language == "zh"  # the original's default
    assert get_processor("mrpc", xnli_language="zh", delimiter="\t").name == "mrpc"
    with pytest.raises(TypeError, match="no_such_option"):
        get_processor("mrpc", no_such_option=1)


def test_unknown_task_lists_valid_names():
    with pytest.raises(InputError) as error:
        get_processor("glue-foo")
    message = str(error.value)
    assert "glue-foo" in message and "\n" not in message
    for name in ("cola", "mnli", "mnli-mm", "mrpc", "sst-2", "sts-b", "xnli", "generic"):
        assert name in message


def test_tsv_rows_match_original_csv_reader(tmp_path):
    """Quotes are literal, exactly as csv.reader(delimiter='\\t', quotechar=None)."""
    lines = ['"a b"\tc"d\t"e', '"\t"', "x\t\ty", '""quoted"" \t  ', "a'b\t'"]
    expected = list(
        csv.reader(io.StringIO("\n".join(lines) + "\n"), delimiter="\t", quotechar=None)
    )
    path = write(tmp_path, {"rows.tsv": lines}) + "/rows.tsv"
    assert [fields for _, _, fields in processor.read_rows(path)] == expected


def test_wrong_column_count_names_file_and_line(tmp_path):
    data_dir = write(
        tmp_path,
        {
            "train.tsv": [
                MRPC_HEADER,
                tsv("1", "1", "2", "a .", "b ."),
                tsv("1", "1", "2", "a . b ."),
            ]
        },
    )
    with pytest.raises(InputError, match=r"train\.tsv:3: 4 columns, expected at least 5"):
        get_processor("mrpc").get_train_examples(data_dir)
    # Header-less CoLA: 4 columns.
    data_dir = write(
        tmp_path / "cola", {"train.tsv": [tsv("gj04", "1", "", "ok ."), tsv("gj04", "1", "ok .")]}
    )
    with pytest.raises(InputError, match=r"train\.tsv:2: 3 columns, expected at least 4"):
        get_processor("cola").get_train_examples(data_dir)
    # Opt-in skipping.
    assert len(get_processor("cola", skip_malformed=True).get_train_examples(data_dir)) == 1
    # QQP skips malformed rows by default (see CASES) unless told not to.
    data_dir = write(tmp_path / "qqp", {"train.tsv": CASES["qqp"][0]["train.tsv"]})
    with pytest.raises(InputError, match=r"train\.tsv:3: 3 columns, expected at least 6"):
        get_processor("qqp", skip_malformed=False).get_train_examples(data_dir)


def test_extra_columns_are_read_like_the_original(tmp_path):
    """Columns are read by position (MNLI's label from the last one), as the original."""
    data_dir = write(
        tmp_path,
        {
            "train.tsv": [
                MNLI_TRAIN_HEADER,
                tsv("0", "1", "1n", "slate", *PARSES, "a", "b", "neutral", "extra", "entailment"),
            ]
        },
    )
    assert get_processor("mnli").get_train_examples(data_dir) == [
        InputExample("train-0", "a", "b", "entailment")
    ]
    data_dir = write(
        tmp_path / "g", {"train.tsv": [tsv("text", "label"), tsv("hello", "pos", "x")]}
    )
    assert get_processor(
        "generic", text_a_column="text", label_column="label", labels="pos,neg"
    ).get_train_examples(data_dir) == [InputExample("train-1", "hello", None, "pos")]


def test_unknown_label(tmp_path):
    data_dir = write(
        tmp_path,
        {
            "dev_matched.tsv": [
                MNLI_DEV_HEADER,
                tsv(
                    "0",
                    "1",
                    "1n",
                    "slate",
                    *PARSES,
                    "a",
                    "b",
                    "neutral",
                    "x",
                    "x",
                    "x",
                    "x",
                    "neutral",
                ),
                tsv("1", "1", "1n", "slate", *PARSES, "a", "b", "-", "x", "x", "x", "x", "-"),
            ]
        },
    )
    with pytest.raises(InputError) as error:
        get_processor("mnli").get_dev_examples(data_dir)
    message = str(error.value)
    assert "dev_matched.tsv:3" in message and "'-'" in message
    assert "'contradiction', 'entailment', 'neutral'" in message
    data_dir = write(
        tmp_path / "stsb",
        {"train.tsv": [STSB_HEADER, tsv("0", "g", "f", "y", "o", "s", "s", "a", "b", "high")]},
    )
    with pytest.raises(InputError, match=r"train\.tsv:2: label 'high' is not a number"):
        get_processor("stsb").get_train_examples(data_dir)


def test_missing_file_and_bad_utf8(tmp_path):
    with pytest.raises(InputError, match=r"dev_mismatched\.tsv does not exist"):
        get_processor("mnli-mm").get_dev_examples(str(tmp_path))
    with pytest.raises(InputError, match=r"multinli\.train\.zh\.tsv does not exist"):
        get_processor("xnli").get_train_examples(str(tmp_path))
    (tmp_path / "train.tsv").write_bytes(b"sentence\tlabel\nok\t1\nbad \xff\t0\n")
    with pytest.raises(InputError, match=r"train\.tsv:3: not valid UTF-8"):
        get_processor("sst-2").get_train_examples(str(tmp_path))


def test_blank_lines_and_crlf(tmp_path):
    (tmp_path / "train.tsv").write_bytes(b"sentence\tlabel\r\ngood\t1\r\n\r\nbad\t0\r\n")
    examples = get_processor("sst-2").get_train_examples(str(tmp_path))
    assert examples == [
        InputExample("train-1", "good", None, "1"),
        InputExample("train-3", "bad", None, "0"),
    ]


def test_generic_named_columns_tsv(tmp_path):
    data_dir = write(
        tmp_path,
        {
            "train.tsv": [
                tsv("id", "review", "stars", "title"),
                tsv("7", '"Great" film', "pos", "T"),
                tsv("8", "Bad", "neg", "U"),
            ],
            "test.tsv": [tsv("id", "review", "title"), tsv("1", "Meh", "V")],
        },
    )
    processor = get_processor(
        "generic",
        text_a_column="review",
        text_b_column="title",
        label_column="stars",
        labels="neg, pos",
    )
    assert processor.get_labels() == ["neg", "pos"]
    assert processor.get_train_examples(data_dir) == [
        InputExample("train-1", '"Great" film', "T", "pos"),
        InputExample("train-2", "Bad", "U", "neg"),
    ]
    # Test labels are not needed by default; they are the first label.
    assert processor.get_test_examples(data_dir) == [InputExample("test-1", "Meh", "V", "neg")]
    with pytest.raises(InputError, match=r"test\.tsv: no label column 'stars' in the header"):
        get_processor(
            "generic",
            text_a_column="review",
            label_column="stars",
            labels="neg,pos",
            test_has_labels=True,
        ).get_test_examples(data_dir)
    with pytest.raises(InputError, match=r"train\.tsv: no text_a column 'text'"):
        get_processor(
            "generic", text_a_column="text", label_column="stars", labels="neg,pos"
        ).get_train_examples(data_dir)
    with pytest.raises(InputError, match=r"train\.tsv:3: unknown label 'neg'"):
        get_processor(
            "generic", text_a_column="review", label_column="stars", labels=["pos", "neutral"]
        ).get_train_examples(data_dir)


def test_generic_csv_indexes_no_header(tmp_path):
    data_dir = write(
        tmp_path,
        {"my_train.csv": ['0.5,"Hello, world",x', '1.25,"He said ""hi""\nover two lines",y', "2"]},
    )
    processor = get_processor(
        "generic",
        text_a_column="1",
        label_column=0,
        is_regression=True,
        delimiter=",",
        has_header=False,
        train_file="my_train.csv",
    )
    assert processor.metric == "pearson_spearman" and processor.get_labels() == []
    with pytest.raises(InputError, match=r"my_train\.csv:4: 1 columns, expected at least 2"):
        processor.get_train_examples(data_dir)
    processor = get_processor(
        "generic",
        text_a_column="1",
        label_column=0,
        is_regression=True,
        delimiter="comma",
        has_header=False,
        train_file="my_train.csv",
        skip_malformed=True,
    )
    assert processor.get_train_examples(data_dir) == [
        InputExample("train-0", "Hello, world", None, 0.5),
        InputExample("train-1", 'He said "hi"\nover two lines', None, 1.25),
    ]


def test_generic_finds_csv_files_and_reads_them_as_csv(tmp_path):
    data_dir = write(
        tmp_path / "data",
        {
            "train.csv": ["text,label", '"Good, really",pos', "Bad,neg"],
            "dev.tsv": [tsv("text", "label"), tsv("Fine, I guess", "pos")],
        },
    )
    processor = get_processor(
        "generic", text_a_column="text", label_column="label", labels="neg,pos"
    )
    assert processor.input_files(data_dir, "train") == [f"{data_dir}/train.csv"]
    assert processor.get_train_examples(data_dir) == [
        InputExample("train-1", "Good, really", None, "pos"),
        InputExample("train-2", "Bad", None, "neg"),
    ]
    assert processor.get_dev_examples(data_dir) == [
        InputExample("dev-1", "Fine, I guess", None, "pos")
    ]
    with pytest.raises(
        InputError, match=r"test\.tsv does not exist \(nor test\.csv, test\.jsonl, test\.json\)"
    ):
        processor.get_test_examples(data_dir)
    # A comma-separated .tsv, read with tabs: one column, and a hint.
    data_dir = write(tmp_path / "other", {"train.tsv": ["text,label", "Bad,neg"]})
    with pytest.raises(
        InputError,
        match=r"no text_a column 'text' in the header \('text,label'\); the file looks "
        r",-separated: pass --delimiter=,",
    ):
        processor.get_train_examples(data_dir)


def test_generic_argument_errors(tmp_path):
    with pytest.raises(InputError, match="needs --labels or --labels_file .*or a train file"):
        get_processor("generic", text_a_column=0, label_column=1).read_labels(str(tmp_path))
    with pytest.raises(InputError, match="--labels or --labels_file, not both"):
        get_processor(
            "generic", text_a_column=0, label_column=1, labels="a", labels_file="labels.txt"
        )
    with pytest.raises(InputError, match="has_header"):
        get_processor(
            "generic", text_a_column="text", label_column=1, labels="a,b", has_header=False
        )
    with pytest.raises(InputError, match="--label_column"):
        get_processor("generic", text_a_column=0, labels="a,b")
    with pytest.raises(InputError, match="--text_a_column"):
        get_processor("generic", label_column=0, labels="a,b")
    with pytest.raises(InputError, match="distinct"):
        get_processor("generic", text_a_column=0, label_column=1, labels="a,a")


def test_config_differs_between_settings_exactly_where_they_differ():
    """The config keys cached features: each setting that changes the examples is in it."""
    xnli = get_processor("xnli").config()
    assert xnli == {
        "task": "xnli",
        "labels": ["contradiction", "entailment", "neutral"],
        "is_regression": False,
        "skip_malformed": False,
        "language": "zh",
    }
    assert get_processor("xnli", language="de").config() == {**xnli, "language": "de"}
    mnli = get_processor("mnli").config()
    assert get_processor("mnli-mm").config() == {**mnli, "task": "mnli-mm"}
    assert get_processor("mnli", skip_malformed=True).config() == {**mnli, "skip_malformed": True}
    assert get_processor("sts-b").config()["is_regression"] is True
