"""CLUE's classification tasks: the readers on lines in each task's real JSON
layout, the submission files, and a TNEWS-style run of run_classifier.py."""

import json
import os
import random
import subprocess
import sys

import pytest
from shared import HANG_TIMEOUT

from bert_tf.config import BertConfig
from bert_tf.data.classification import clue
from bert_tf.data.classification.outputs import submission_path, write_submission
from bert_tf.data.classification.processor import InputExample
from bert_tf.data.classification.registry import get_processor, task_names
from bert_tf.errors import InputError

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write(tmp_path, files):
    """Writes each file's objects as JSON lines (a str is written as it is)."""
    for name, records in files.items():
        lines = [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in records]
        (tmp_path / name).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(tmp_path)


WSC_TEXT = "这时候放在床上枕头旁边的手机响了，我感到奇怪，因为欠费已被停机两个月，现在它突然响了。"
WSC_TARGET = {"span2_index": 37, "span1_index": 5, "span1_text": "床", "span2_text": "它"}
# The pronoun first: "[" "]" go in first, so the noun's index moves by 2.
WSC_TEXT_2 = "他说小明的书丢了"
WSC_TARGET_2 = {"span1_index": 2, "span1_text": "小明", "span2_index": 0, "span2_text": "他"}
CSL_ABST = (
    "为解决传统均匀FFT波束形成算法引起的3维声呐成像分辨率降低的问题,该文提出分区域FFT波束形成算法."
)

# task -> (train/dev lines, test lines, expected train examples, expected test texts)
CASES = {
    "afqmc": (
        [
            {"sentence1": "双十一花呗提额在哪", "sentence2": "里可以提花呗额度", "label": "0"},
            {"sentence1": "花呗怎么还款", "sentence2": "花呗如何还款", "label": "1"},
        ],
        [{"id": 0, "sentence1": "借呗能用吗", "sentence2": "借呗可以用吗"}],
        [
            InputExample("train-0", "双十一花呗提额在哪", "里可以提花呗额度", "0"),
            InputExample("train-1", "花呗怎么还款", "花呗如何还款", "1"),
        ],
        [("借呗能用吗", "借呗可以用吗")],
    ),
    "tnews": (
        [
            {
                "label": "102",
                "label_desc": "news_entertainment",
                "sentence": "江疏影甜甜圈自拍，迷之角度竟这么好看",
                "keywords": "江疏影,甜甜圈,自拍",
            },
            {"label": "116", "label_desc": "news_game", "sentence": "游戏新版本", "keywords": ""},
        ],
        [{"id": 7, "sentence": "股市今日大涨", "keywords": "股市"}],
        [
            InputExample("train-0", "江疏影甜甜圈自拍，迷之角度竟这么好看", None, "102"),
            InputExample("train-1", "游戏新版本", None, "116"),
        ],
        [("股市今日大涨", None)],
    ),
    "iflytek": (
        [{"label": "110", "label_des": "社区超市", "sentence": "朴朴快送超市创立于2016年"}],
        [{"id": 3, "sentence": "打车软件"}],
        [InputExample("train-0", "朴朴快送超市创立于2016年", None, "110")],
        [("打车软件", None)],
    ),
    "cmnli": (
        [
            {
                "sentence1": "新的权利已经足够好了",
                "sentence2": "每个人都很喜欢最新的福利",
                "label": "neutral",
            }
        ],
        [{"id": 0, "sentence1": "一", "sentence2": "二"}],
        [InputExample("train-0", "新的权利已经足够好了", "每个人都很喜欢最新的福利", "neutral")],
        [("一", "二")],
    ),
    "ocnli": (
        [
            {
                "level": "medium",
                "sentence1": "身上裹一件工厂发的棉大衣,手插在袖筒里",
                "sentence2": "身上至少一件衣服",
                "label": "entailment",
                "label0": "entailment",
                "genre": "lit",
                "prem_id": "lit_635",
                "id": 0,
            }
        ],
        [
            {
                "id": 12,
                "sentence1": "外贸经营权进一步放开",
                "sentence2": "外贸经营权经历了先收缩再放开的过程。",
            }
        ],
        [
            InputExample(
                "train-0", "身上裹一件工厂发的棉大衣,手插在袖筒里", "身上至少一件衣服", "entailment"
            )
        ],
        [("外贸经营权进一步放开", "外贸经营权经历了先收缩再放开的过程。")],
    ),
    "cluewsc2020": (
        [
            {"target": WSC_TARGET, "idx": 261, "label": "false", "text": WSC_TEXT},
            {"target": WSC_TARGET_2, "idx": 5, "label": "true", "text": WSC_TEXT_2},
        ],
        [{"target": WSC_TARGET_2, "id": 9, "text": WSC_TEXT_2}],
        [
            InputExample(
                "train-0",
                "这时候放在_床_上枕头旁边的手机响了，我感到奇怪，因为欠费已被停机两个月，现在[它]突然响了。",
                None,
                "false",
            ),
            InputExample("train-1", "[他]说_小明_的书丢了", None, "true"),
        ],
        [("[他]说_小明_的书丢了", None)],
    ),
    "csl": (
        [{"id": 1, "abst": CSL_ABST, "keyword": ["水声学", "FFT", "波束形成"], "label": "1"}],
        [{"id": 4, "abst": "摘要", "keyword": ["关键词"]}],
        [InputExample("train-0", "水声学 FFT 波束形成", CSL_ABST, "1")],
        [("关键词", "摘要")],
    ),
}


@pytest.mark.parametrize("task", sorted(CASES))
def test_readers_read_clue_key_layouts(tmp_path, task):
    lines, test_lines, expected, test_texts = CASES[task]
    data_dir = write(tmp_path, {"train.json": lines, "dev.json": lines, "test.json": test_lines})
    processor = get_processor(task)
    assert processor.get_train_examples(data_dir) == expected
    dev = processor.get_dev_examples(data_dir)
    assert [e.guid for e in dev] == [f"dev-{i}" for i in range(len(expected))]
    assert [(e.text_a, e.text_b, e.label) for e in dev] == [
        (e.text_a, e.text_b, e.label) for e in expected
    ]
    # Unlabelled test lines: the first label as placeholder, as GLUE's test sets.
    test = processor.get_test_examples(data_dir)
    assert [(e.text_a, e.text_b) for e in test] == test_texts
    assert {e.label for e in test} == {processor.get_labels()[0]}
    assert processor.test_ids(data_dir) == [line.get("id") for line in test_lines]
    assert processor.metric == "accuracy" and not processor.is_regression


def test_labels_names_and_files():
    labels = {name: get_processor(name).get_labels() for name in clue.PROCESSORS}
    assert labels["tnews"] == [
        *("100", "101", "102", "103", "104", "106", "107", "108"),
        *("109", "110", "112", "113", "114", "115", "116"),
    ]
    assert labels["iflytek"] == [str(i) for i in range(119)]
    assert labels["afqmc"] == labels["csl"] == ["0", "1"]
    assert labels["cmnli"] == labels["ocnli"] == ["contradiction", "entailment", "neutral"]
    assert labels["cluewsc2020"] == ["true", "false"]
    assert {name: get_processor(name).submission_file for name in clue.PROCESSORS} == {
        "afqmc": "afqmc_predict.json",
        "tnews": "tnews11_predict.json",
        "iflytek": "iflytek_predict.json",
        "cmnli": "cmnli_predict.json",
        "ocnli": "ocnli_50k_predict.json",
        "cluewsc2020": "cluewsc11_predict.json",
        "csl": "csl_predict.json",
    }
    assert get_processor("mrpc").submission_file == "MRPC.tsv"
    assert get_processor("xnli").submission_file is None
    assert type(get_processor("WSC")) is clue.WscProcessor
    assert type(get_processor("TNEWS")) is clue.TnewsProcessor
    assert set(clue.PROCESSORS) <= set(task_names())
    assert get_processor("afqmc").input_files("d", "dev") == ["d/dev.json"]


def test_mark_spans_as_clue_baseline():
    # Spans that touch: the markers go in one character at a time, as CLUE's WSCProcessor does.
    assert clue.mark_spans("甲乙丙丁", 0, 1, 1, 2) == "_甲_[乙丙]丁"
    assert clue.mark_spans("甲乙丙丁", 2, 2, 0, 2) == "[甲乙]_丙丁_"


@pytest.mark.parametrize("task", ["ocnli", "cmnli"])
def test_nli_skips_dash_labels_and_logs_the_count(tmp_path, task, monkeypatch):
    lines = [
        {"sentence1": "甲", "sentence2": "乙", "label": "-"},
        {"sentence1": "丙", "sentence2": "丁", "label": "neutral"},
        {"sentence1": "戊", "sentence2": "己", "label": "-"},
    ]
    data_dir = write(tmp_path, {"dev.json": lines})
    # Captured here: absl's verbosity depends on what ran before in this process.
    logged = []
    monkeypatch.setattr(clue.logging, "info", lambda message, *args: logged.append(message % args))
    examples = get_processor(task).get_dev_examples(data_dir)
    assert examples == [InputExample("dev-1", "丙", "丁", "neutral")]
    assert any('dev.json: skipped 2 examples labelled "-"' in line for line in logged), logged
    # Elsewhere "-" is an unknown label.
    with pytest.raises(InputError, match="unknown label '-'"):
        get_processor("afqmc").get_dev_examples(data_dir)


GOOD_PAIR = {"sentence1": "甲", "sentence2": "乙", "label": "0"}
MALFORMED = [
    ("afqmc", "{bad json", r"dev\.json:2: not valid JSON \(Expecting property name"),
    ("afqmc", "[1, 2]", r"dev\.json:2: expected a JSON object, got '\[1, 2\]'"),
    (
        "afqmc",
        {"sentence1": "甲", "label": "0"},
        r"dev\.json:2: no key 'sentence2' \(keys: 'sentence1', 'label'\); is this a file of task afqmc\?",
    ),
    ("afqmc", {**GOOD_PAIR, "sentence2": 3}, r"dev\.json:2: 'sentence2' is 3, expected a string"),
    ("afqmc", {**GOOD_PAIR, "label": 1}, r"dev\.json:2: 'label' is 1, expected a string"),
    (
        "afqmc",
        {**GOOD_PAIR, "label": "2"},
        r"dev\.json:2: unknown label '2'; the labels of task afqmc are '0', '1'",
    ),
    (
        "cmnli",
        {**GOOD_PAIR, "label": "contradictory"},
        r"dev\.json:2: unknown label 'contradictory'; the labels of task cmnli are "
        r"'contradiction', 'entailment', 'neutral'",
    ),
    (
        "tnews",
        {"label": "105", "sentence": "甲"},
        r"dev\.json:2: unknown label '105'; the labels of task tnews are '100', '101', .*'116'",
    ),
    ("tnews", {"label": "100", "text": "甲"}, r"dev\.json:2: no key 'sentence'"),
    (
        "cluewsc2020",
        {"text": "甲", "label": "true", "target": {"span1_text": "甲", "span1_index": 0}},
        r"dev\.json:2: no key 'target\.span2_text'",
    ),
    (
        "cluewsc2020",
        {"text": WSC_TEXT_2, "label": "true", "target": {**WSC_TARGET_2, "span2_index": "0"}},
        r"dev\.json:2: 'target\.span2_index' is \"0\", expected an integer",
    ),
    (
        "cluewsc2020",
        {"text": WSC_TEXT_2, "label": "true", "target": {**WSC_TARGET_2, "span1_index": 3}},
        r"dev\.json:2: target\.span1_text '小明' is not at span1_index 3 of the text",
    ),
    (
        "cluewsc2020",
        {"text": WSC_TEXT_2, "label": "yes", "target": WSC_TARGET_2},
        r"dev\.json:2: unknown label 'yes'; the labels of task cluewsc2020 are 'true', 'false'",
    ),
    (
        "csl",
        {"abst": "甲", "keyword": "乙", "label": "0"},
        r"dev\.json:2: 'keyword' is \"乙\", expected a list",
    ),
    (
        "csl",
        {"abst": "甲", "keyword": ["乙", 2], "label": "0"},
        r"dev\.json:2: 'keyword' must be a list of strings",
    ),
]


@pytest.mark.parametrize("task,line,message", MALFORMED)
def test_malformed_line_is_a_one_line_error(tmp_path, task, line, message):
    good = {
        "afqmc": GOOD_PAIR,
        "cmnli": {**GOOD_PAIR, "label": "neutral"},
        "tnews": {"label": "100", "sentence": "甲"},
        "cluewsc2020": {"text": WSC_TEXT_2, "label": "true", "target": WSC_TARGET_2},
        "csl": {"abst": "甲", "keyword": ["乙"], "label": "0"},
    }[task]
    data_dir = write(tmp_path, {"dev.json": [good, line, good]})
    with pytest.raises(InputError, match=message) as error:
        get_processor(task).get_dev_examples(data_dir)
    assert "\n" not in str(error.value)
    assert str(error.value).startswith(os.path.join(data_dir, "dev.json:2: "))
    # skip_malformed skips a line whose keys or types are wrong.
    if isinstance(line, dict) and "label" not in message:
        examples = get_processor(task, skip_malformed=True).get_dev_examples(data_dir)
        assert [e.guid for e in examples] == ["dev-0", "dev-2"]


def test_missing_file_and_blank_lines(tmp_path):
    with pytest.raises(InputError, match=r"input file .*train\.json does not exist"):
        get_processor("afqmc").get_train_examples(str(tmp_path))
    data_dir = write(tmp_path, {"train.json": ["", json.dumps(GOOD_PAIR), "  "]})
    assert get_processor("afqmc").get_train_examples(data_dir) == [
        InputExample("train-1", "甲", "乙", "0")
    ]


def test_clue_submission_files(tmp_path):
    tnews_test = [
        {"id": 10, "sentence": "甲", "keywords": ""},
        {"id": 11, "sentence": "乙", "keywords": ""},
        {"id": 12, "sentence": "丙", "keywords": ""},
    ]
    data_dir = write(tmp_path, {"test.json": tnews_test})
    tnews = get_processor("tnews")
    path = submission_path(str(tmp_path), tnews)
    assert path == str(tmp_path / "tnews11_predict.json")
    scores = [[0.0] * 15 for _ in range(3)]
    scores[0][2], scores[1][14], scores[2][0] = 1.0, 1.0, 1.0
    write_submission(path, tnews, scores, data_dir)
    assert open(path).read() == (
        '{"id": 10, "label": "102", "label_desc": ""}\n'
        '{"id": 11, "label": "116", "label_desc": ""}\n'
        '{"id": 12, "label": "100", "label_desc": ""}\n'
    )
    # WSC's test lines are ids "id" or "idx"; without either, the position.
    wsc_test = [
        {"target": WSC_TARGET_2, "idx": 4, "text": WSC_TEXT_2},
        {"target": WSC_TARGET_2, "text": WSC_TEXT_2},
    ]
    data_dir = write(tmp_path, {"test.json": wsc_test})
    wsc = get_processor("cluewsc2020")
    path = submission_path(str(tmp_path), wsc)
    write_submission(path, wsc, [[0.2, 0.8], [0.9, 0.1]], data_dir)
    assert open(path).read() == '{"id": 4, "label": "false"}\n{"id": 1, "label": "true"}\n'
    with pytest.raises(ValueError, match="2 ids for 1 predictions"):
        write_submission(path, wsc, [[0.2, 0.8]], data_dir)


def test_submission_ids_take_a_test_lines_id_before_its_idx(tmp_path):
    """CLUE's submission lines are `{"id": ...}`, matched to the test file's `id`:
    `idx` (the train and dev files' key) stands in only for a line without one."""
    wsc_test = [
        {"target": WSC_TARGET_2, "id": 7, "idx": 3, "text": WSC_TEXT_2},
        {"target": WSC_TARGET_2, "idx": 9, "id": 8, "text": WSC_TEXT_2},
        {"target": WSC_TARGET_2, "idx": 4, "text": WSC_TEXT_2},
    ]
    data_dir = write(tmp_path, {"test.json": wsc_test})
    wsc = get_processor("cluewsc2020")
    assert wsc.test_ids(data_dir) == [7, 8, 4]
    path = submission_path(str(tmp_path), wsc)
    write_submission(path, wsc, [[0.2, 0.8], [0.9, 0.1], [0.3, 0.7]], data_dir)
    assert [json.loads(line)["id"] for line in open(path)] == [7, 8, 4]


# AFQMC-format pairs: label "1" when either question has the character 好
# (as test_run_classifier.py's MRPC data with "good").
FILLER = "今日新闻我们看到了一个大小中人说"


def question(rng, good, length=6):
    chars = [rng.choice(FILLER) for _ in range(length - good)] + ["好"] * good
    rng.shuffle(chars)
    return "".join(chars)


def write_afqmc(data_dir, rng, sizes=(240, 60, 30)):
    """Writes train/dev/test.json; returns each split's labels."""
    data_dir.mkdir()
    labels = {}
    for split, n in zip(("train", "dev", "test"), sizes):
        lines = []
        for i in range(n):
            label, which = rng.random() < 0.5, rng.randrange(2)
            line = {
                "sentence1": question(rng, int(label and which == 0)),
                "sentence2": question(rng, int(label and which == 1)),
                "label": str(int(label)),
            }
            if split == "test":
                line = {
                    "id": 500 + i,
                    "sentence1": line["sentence1"],
                    "sentence2": line["sentence2"],
                }
            lines.append(line)
            labels.setdefault(split, []).append(str(int(label)))
        write(data_dir, {f"{split}.json": lines})
    return labels


@pytest.mark.large
@pytest.mark.learning
def test_afqmc_run_learns_and_writes_the_submission(tmp_path, calibration):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text(
        "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *FILLER, "好"]) + "\n",
        encoding="utf-8",
    )
    config = tmp_path / "bert_config.json"
    BertConfig(
        vocab_size=len(FILLER) + 6,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=16,
        type_vocab_size=2,
    ).to_json_file(str(config))
    data_dir, output_dir = tmp_path / "afqmc", tmp_path / "out"
    labels = write_afqmc(data_dir, random.Random(0))
    command = [
        sys.executable,
        os.path.join(REPO, "run_classifier.py"),
        "--task_name=AFQMC",
        f"--data_dir={data_dir}",
        f"--vocab_file={vocab}",
        f"--bert_config_file={config}",
        f"--output_dir={output_dir}",
        "--do_train",
        "--do_eval",
        "--do_predict",
        "--max_seq_length=16",
        "--train_batch_size=16",
        "--learning_rate=1e-3",
        "--num_train_epochs=20",
        "--steps_per_loop=50",
        f"--seed={calibration.seed(3)}",
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=HANG_TIMEOUT)
    assert result.returncode == 0, result.stderr[-3000:]
    results = (output_dir / "eval_results.txt").read_text().splitlines()
    metrics = dict(line.split(" = ") for line in results)
    accuracy = float(metrics["eval_accuracy"])
    calibration.record(eval_accuracy=accuracy)
    assert accuracy >= 0.9, metrics  # 1.0 on 4 seeds x default, avx2 (tests/calibrate.py)
    assert metrics["global_step"] == "300"  # 240 / 16 * 20 epochs
    submission = [json.loads(line) for line in open(output_dir / "afqmc_predict.json")]
    assert [sorted(line) for line in submission] == [["id", "label"]] * 30
    assert [line["id"] for line in submission] == list(range(500, 530))
    predicted = [line["label"] for line in submission]
    assert sum(p == t for p, t in zip(predicted, labels["test"])) >= 0.9 * 30
    assert len(open(output_dir / "test_results.tsv").read().splitlines()) == 30
