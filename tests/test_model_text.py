"""The vocab and casing a run takes from its model's folder (`bert_tf.text.model_text`),
and the warning when the first tokens are mostly [UNK]."""

import json
import os
import shutil

import pytest
from shared import minilm_dir

from bert_tf.errors import InputError
from bert_tf.text import model_text, tokenization

UNCASED_WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "john", "smith", "visited", "."]


def hf_folder(root, name, do_lower_case):
    """A Hugging Face style folder: vocab.txt and tokenizer_config.json."""
    folder = os.path.join(root, name)
    os.makedirs(folder)
    with open(os.path.join(folder, "vocab.txt"), "w") as f:
        f.write("\n".join(UNCASED_WORDS) + "\n")
    with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
        json.dump({"do_lower_case": do_lower_case, "unk_token": "[UNK]"}, f)
    return folder


@pytest.fixture
def folders(tmp_path):
    """`{"uncased": MiniLM's folder, "cased": a tiny folder saying do_lower_case false}`."""
    return {"uncased": minilm_dir(), "cased": hf_folder(str(tmp_path), "cased", False)}


@pytest.mark.parametrize(
    "kind,given,default,expected",
    [
        ("uncased", None, False, True),  # absent: the folder's, not the script's default
        ("cased", None, True, False),
        ("uncased", True, False, True),  # agreeing
        ("cased", False, True, False),
    ],
)
def test_the_casing_is_the_folders_unless_given(folders, kind, given, default, expected):
    assert model_text.resolve_lower_case(given, folders[kind], default) is expected


@pytest.mark.parametrize("kind,given,wanted", [("uncased", False, True), ("cased", True, False)])
def test_a_casing_that_contradicts_the_folder_is_refused(folders, kind, given, wanted):
    folder = folders[kind]
    with pytest.raises(InputError) as error:
        model_text.resolve_lower_case(given, folder)
    assert str(error.value) == (
        f"--do_lower_case={given} contradicts --init_checkpoint={folder}: its "
        f"tokenizer_config.json says do_lower_case: {wanted}, pass "
        f"--do_lower_case={wanted} (or leave it out) so fine-tuning matches pre-training"
    )


@pytest.mark.parametrize(
    "name,expected",
    [
        ("uncased_L-2_H-128_A-2", True),
        ("uncased_L-12_H-768_A-12", True),
        ("multilingual_L-12_H-768_A-12", True),
        ("chinese_L-12_H-768_A-12", True),
        ("cased_L-12_H-768_A-12", False),
        ("cased_L-24_H-1024_A-16", False),
        ("multi_cased_L-12_H-768_A-12", False),
        ("my_cased_model", None),
    ],
)
def test_a_release_name_gives_the_casing_of_its_folder_and_checkpoint(tmp_path, name, expected):
    folder = tmp_path / name
    folder.mkdir()
    paths = [str(folder), str(folder) + "/", str(folder / "bert_model.ckpt")]
    for path in [*paths, str(folder / "bert_model.ckpt.index")]:
        for given in (True, False):
            if expected is None or given == expected:
                assert model_text.resolve_lower_case(given, path) is given
            else:
                with pytest.raises(InputError, match=f"pass --do_lower_case={expected} "):
                    model_text.resolve_lower_case(given, path)
    for path in paths:
        assert model_text.resolve_lower_case(None, path, "default") == (
            "default" if expected is None else expected
        )
    # Only a release's own checkpoint name or folder says.
    assert model_text.resolve_lower_case(True, str(folder / "model.ckpt")) is True


@pytest.mark.parametrize(
    "name,given,kind,wanted",
    [
        ("uncased_L-12_H-768_A-12", False, "lower-cased", True),
        ("cased_L-12_H-768_A-12", True, "cased", False),
    ],
)
def test_a_release_folder_contradicted_says_what_to_pass(tmp_path, name, given, kind, wanted):
    folder = tmp_path / name
    folder.mkdir()
    with pytest.raises(InputError) as error:
        model_text.resolve_lower_case(given, str(folder))
    assert str(error.value) == (
        f"--do_lower_case={given} contradicts --init_checkpoint={folder}: `{name}` is a "
        f"{kind} model, pass --do_lower_case={wanted} (or leave it out) so fine-tuning "
        "matches pre-training"
    )


def test_a_folder_that_says_nothing_keeps_the_default_and_any_value(tmp_path):
    for given, default, expected in ((None, False, False), (None, True, True), (True, False, True)):
        assert model_text.resolve_lower_case(given, str(tmp_path), default) is expected
    assert model_text.resolve_lower_case(None, None, False) is False


def test_the_vocab_is_found_beside_the_checkpoint(folders, tmp_path):
    cased = folders["cased"]
    vocab = os.path.join(cased, "vocab.txt")
    for checkpoint in (cased, os.path.join(cased, "bert_model.ckpt")):
        assert model_text.text_settings(None, None, checkpoint) == (vocab, False)
    # The same vocab given again is fine.
    assert model_text.text_settings(vocab, None, cased) == (vocab, False)


def test_another_vocab_than_the_checkpoints_is_refused_unless_allowed(folders):
    cased = folders["cased"]
    other = os.path.join(minilm_dir(), "vocab.txt")
    with pytest.raises(InputError) as error:
        model_text.text_settings(other, None, cased)
    assert str(error.value) == (
        f"--vocab_file={other} differs from {os.path.join(cased, 'vocab.txt')} of "
        f"--init_checkpoint={cased}, the vocab its embeddings were trained with: leave "
        "--vocab_file out, or pass --allow_vocab_mismatch if yours is an edited copy of it"
    )
    # Allowed, --vocab_file wins; the casing is still the checkpoint's.
    assert model_text.text_settings(other, None, cased, allow_vocab_mismatch=True) == (
        other,
        False,
    )


def test_a_copy_of_the_checkpoints_vocab_elsewhere_is_the_same_vocab(folders, tmp_path):
    copy = tmp_path / "copy" / "vocab.txt"
    copy.parent.mkdir()
    shutil.copy(os.path.join(minilm_dir(), "vocab.txt"), copy)
    assert model_text.text_settings(str(copy), None, minilm_dir()) == (str(copy), True)


def test_a_folder_given_as_the_vocab_file_names_that_flag(folders):
    folder = folders["cased"]
    with pytest.raises(InputError) as error:
        model_text.text_settings(folder, None, folder)
    assert str(error.value) == (
        f"--vocab_file={folder} is a folder; expected a file (its vocab.txt?)"
    )


def test_without_a_vocab_the_error_names_both_flags(tmp_path):
    empty = str(tmp_path)
    with pytest.raises(InputError) as error:
        model_text.text_settings(None, None, empty)
    assert str(error.value) == (
        f"--vocab_file is needed: --init_checkpoint={empty} has no vocab.txt beside it"
    )
    with pytest.raises(InputError, match=r"^--vocab_file is needed \(or an --init_checkpoint"):
        model_text.text_settings(None, True, None)


def test_without_a_checkpoint_that_says_the_vocabs_folder_gives_the_casing(folders, tmp_path):
    vocab = os.path.join(folders["cased"], "vocab.txt")
    assert model_text.text_settings(vocab, None, None) == (vocab, False)
    assert model_text.text_settings(vocab, None, str(tmp_path)) == (vocab, False)
    with pytest.raises(InputError, match=f"contradicts --vocab_file={vocab}: its tokenizer_config"):
        model_text.text_settings(vocab, True, str(tmp_path))
    release = tmp_path / "uncased_L-2_H-128_A-2"
    release.mkdir()
    shutil.copy(vocab, release / "vocab.txt")
    # The checkpoint's folder says first.
    assert model_text.text_settings(str(release / "vocab.txt"), None, folders["cased"])[1] is False
    assert model_text.text_settings(str(release / "vocab.txt"), None, None)[1] is True


# ---- the [UNK] share of the first tokens ----

VOCAB = os.path.join(minilm_dir(), "vocab.txt")


def unknown_warnings(caplog):
    return [r.getMessage() for r in caplog.records if "[UNK]" in r.getMessage()]


def test_mostly_unknown_tokens_warn_with_the_share_the_vocab_and_the_casing(caplog):
    tokenizer = tokenization.FullTokenizer(VOCAB, do_lower_case=False)
    assert tokenizer.tokenize("John Smith visited Paris .") == ["[UNK]", "[UNK]", "visited"] + [
        "[UNK]",
        ".",
    ]
    tokenizer.check_unknown_share()
    tokenizer.check_unknown_share()  # once
    assert unknown_warnings(caplog) == [
        f"60% of the first 5 tokens are [UNK] with the vocab {VOCAB} and "
        "do_lower_case=False: the vocab has no upper-case letters (an uncased "
        "model's), lower-case the input (--do_lower_case=true)"
    ]


def test_the_right_casing_does_not_warn(caplog):
    tokenizer = tokenization.FullTokenizer(VOCAB, do_lower_case=True)
    tokenizer.tokenize("John Smith visited Paris .")
    tokenizer.check_unknown_share()
    assert unknown_warnings(caplog) == []


def test_the_share_is_checked_once_the_sample_is_full(caplog):
    tokenizer = tokenization.FullTokenizer(VOCAB, do_lower_case=False)
    # 1 [UNK] in 20 tokens: 5%, not above the threshold.
    for _ in range(tokenization.UNKNOWN_SAMPLE_TOKENS // 20):
        tokenizer.tokenize("Paris " + "is a city . " * 4 + "so it .")
    assert unknown_warnings(caplog) == []
    tokenizer = tokenization.FullTokenizer(VOCAB, do_lower_case=False)
    for _ in range(tokenization.UNKNOWN_SAMPLE_TOKENS // 20):
        tokenizer.tokenize("Paris Paris " + "is a city . " * 4 + "so it")
    (message,) = unknown_warnings(caplog)  # without check_unknown_share()
    assert message.startswith("10% of the first 1000 tokens are [UNK]")
    # Later tokens do not count.
    tokenizer.tokenize("Paris " * 10000)
    tokenizer.check_unknown_share()
    assert len(unknown_warnings(caplog)) == 1


def test_a_vocab_with_capitals_warns_of_the_vocab_or_the_casing(tmp_path, caplog):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "John", "met"]) + "\n")
    tokenizer = tokenization.FullTokenizer(str(vocab), do_lower_case=True)
    tokenizer.tokenize("John met Mary")
    tokenizer.check_unknown_share()
    (message,) = unknown_warnings(caplog)
    assert message == (
        f"67% of the first 3 tokens are [UNK] with the vocab {vocab} and "
        "do_lower_case=True: is it the model's vocab, and does the model lower-case "
        "its input (--do_lower_case)?"
    )
