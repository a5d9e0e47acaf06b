"""The code blocks of the READMEs and the documentation pages (docs/): each
is run by a test or says why it cannot be run here, and every script command
in them uses flags the script defines."""

import ast
import json
import os
import re
import subprocess
import sys

import pytest
from readme_blocks import (
    DOCUMENTS,
    NOT_RUN,
    REPO,
    RUN_BY,
    block_in,
    blocks,
    commands,
    optional_flags,
    script_flags,
)
from shared import minilm_dir, resolve, write_release

# Apache Beam's pipeline options, which create_pretraining_data.py passes on to Beam.
BEAM_OPTIONS = {
    "direct_num_workers",
    "direct_running_mode",
    "project",
    "region",
    "temp_location",
    "machine_type",
    "max_num_workers",
    "setup_file",
}


def every_block():
    return [block for document in DOCUMENTS for block in blocks(document)]


def test_every_block_is_run_by_a_test_or_says_why_not():
    problems = []
    for block in every_block():
        if block.marker.startswith(NOT_RUN) and block.marker.endswith("-->"):
            if len(block.marker[len(NOT_RUN) : -3].strip()) < 10:
                problems.append(f"{block.where}: give the reason it is not run")
        elif block.marker.startswith(RUN_BY) and block.marker.endswith("-->"):
            test_file, _, test_name = block.marker[len(RUN_BY) : -3].strip().partition("::")
            path = os.path.join(REPO, test_file)
            defined = os.path.isfile(path) and any(
                isinstance(node, ast.FunctionDef) and node.name == test_name
                for node in ast.walk(ast.parse(open(path, encoding="utf-8").read()))
            )
            if not defined:
                problems.append(f"{block.where}: no test {test_file}::{test_name}")
        else:
            problems.append(f"{block.where}: no '{NOT_RUN}...-->' or '{RUN_BY}...-->' line above")
    assert not problems, "\n".join(problems)


def flags_used():
    """{script: {flag: [where, ...]}} over every `python <script>.py` command."""
    used = {}
    for block in every_block():
        names = [(argv, block.where) for argv in commands(block.code)]
        for argv, where in names:
            if argv[0] != "python" or not argv[1].endswith(".py"):
                continue
            flags = used.setdefault(argv[1], {})
            for argument in argv[2:]:
                if argument.startswith("--"):
                    flags.setdefault(argument[2:].split("=")[0], []).append(where)
            if argv[1] != "bench" and "[" in block.code and f"python {argv[1]}" in block.code:
                for name in optional_flags(block.code):
                    flags.setdefault(name, []).append(where)
    return used


def defined_flags(scripts):
    """Each script's flag names, with absl's `--no<flag>` spelling of each."""
    return {
        script: names | {"no" + name for name in names}
        for script, names in script_flags(scripts).items()
    }


def test_readme_commands_use_only_flags_their_scripts_define():
    used = flags_used()
    scripts = [script for script in used if os.path.dirname(script) == ""]
    for script in used:
        assert os.path.isfile(os.path.join(REPO, script)), f"{script} named in a README"
    defined = defined_flags(scripts)
    defined["create_pretraining_data.py"] |= BEAM_OPTIONS
    unknown = [
        f"{where}: {script} has no --{name}"
        for script in scripts
        for name, places in used[script].items()
        if name not in defined[script]
        for where in places
    ]
    assert not unknown, "\n".join(unknown)


def test_readme_make_targets_exist():
    with open(os.path.join(REPO, "Makefile"), encoding="utf-8") as f:
        targets = set(re.findall(r"^([\w-]+):", f.read(), re.M))
    named = {
        (argv[1], block.where)
        for block in every_block()
        for argv in commands(block.code)
        if argv[0] == "make" and len(argv) > 1
    }
    assert named, "the READMEs name make targets"
    missing = [
        f"{where}: make {target}" for target, where in sorted(named) if target not in targets
    ]
    assert not missing, "\n".join(missing)


def run_commands(block, cwd, overrides=None):
    """Runs the `python` commands of `block` in `cwd` as a user's shell would,
    with the values of the flags in `overrides` ({name: value}) replaced."""
    for argv in commands(block.code):
        assert argv[0] == "python", argv
        argv = [_overridden(arg, overrides or {}) for arg in argv]
        finished = subprocess.run(
            [sys.executable, os.path.join(REPO, argv[1]), *argv[2:]],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert finished.returncode == 0, f"{block.where} {argv}: {finished.stderr[-3000:]}"


def _overridden(arg, overrides):
    flag = re.match(r"--(\w+)=", arg)
    return f"--{flag[1]}={overrides[flag[1]]}" if flag and flag[1] in overrides else arg


def write_corpus(folder):
    folder.mkdir()
    sentences = [
        "The cat sat on the mat and looked at the birds.",
        "Paris is the capital of France and a large city.",
        "A small boat crossed the river before the storm.",
        "She wrote a long letter to her brother in the morning.",
    ]
    for name, shift in (("a.txt", 0), ("b.txt", 1)):
        documents = [
            " ".join(sentences[(i + shift) % 4 :] + sentences[: (i + shift) % 4]) for i in range(6)
        ]
        lines = [line for document in documents for line in (*document.split(". "), "")]
        (folder / name).write_text("\n".join(lines), encoding="utf-8")


@pytest.mark.large
def test_pretraining_data_and_vocab_commands_run_as_written(tmp_path):
    write_corpus(tmp_path / "corpus")
    vocab = block_in("docs/scripts/build_vocab.md", "", "python build_vocab.py")
    run_commands(vocab, tmp_path)
    assert (tmp_path / "vocab.txt").read_text(encoding="utf-8").splitlines()[:1] == ["[PAD]"]
    for document, section in (
        ("docs/scripts/create_pretraining_data.md", ""),
        ("README.md", "The five commands used most"),
    ):
        data = tmp_path / "data"
        data.mkdir()
        run_commands(block_in(document, section, "--output_file=data/train.tfrecord-0,"), tmp_path)
        for name in ("train.tfrecord-0", "train.tfrecord-1"):
            assert (data / name).stat().st_size > 0, f"{document}: {name}"
        data.rename(tmp_path / f"data_{len(section)}")


# docs/pretraining.md's sizes, cut to what a test can run.
FEWER_STEPS = {
    "num_train_steps": "6",
    "num_warmup_steps": "1",
    "eval_every_steps": "3",
    "dupe_factor": "2",
    "num_train_epochs": "1",
    "restarts": "2",
    "learning_rates": "1e-3",
}


@pytest.mark.large
def test_pretraining_recipe_commands_run_as_written(tmp_path, minilm_encoder):
    """docs/pretraining.md's commands, in order, on a tiny corpus with fewer
    steps: a vocabulary, records, pre-training from scratch with held-out
    curves, fine-tuning from its folder, and continuing a release."""
    write_corpus(tmp_path / "corpus")
    held_out = ["The dog ran along the river.", "It came back at night.", ""] * 6
    (tmp_path / "heldout.txt").write_text("\n".join(held_out), encoding="utf-8")
    (tmp_path / "task").mkdir()
    for split, count in (("train", 24), ("dev", 8)):
        rows = [
            f"{'a fine sunny day' if i % 2 else 'a cold and rainy night'} {i}\t{i % 2}"
            for i in range(count)
        ]
        (tmp_path / "task" / f"{split}.tsv").write_text(
            "text\tlabel\n" + "\n".join(rows) + "\n", encoding="utf-8"
        )
    page = "docs/pretraining.md"
    config = block_in(page, "The path", '"vocab_size"')
    (tmp_path / "bert_config.json").write_text(config.code, encoding="utf-8")
    write_release(minilm_encoder, tmp_path, "release")
    for containing in ("build_vocab.py", "--init_checkpoint=release"):
        run_commands(block_in(page, "The path", containing), tmp_path, FEWER_STEPS)
    history = (tmp_path / "pretrained" / "eval_history.csv").read_text().splitlines()
    assert [line.split(",")[0] for line in history] == ["step", "3", "6"]
    assert (tmp_path / "pretrained" / "eval_history.png").exists()
    sweep = json.loads((tmp_path / "classifier" / "sweep_results.json").read_text())
    assert len(sweep["configurations"][0]["runs"]) == 2
    assert (tmp_path / "continued" / "model.ckpt-6.index").exists()


@pytest.fixture(scope="module")
def minilm_encoder():
    import bert_tf

    return bert_tf.BertEncoder.from_pretrained(minilm_dir())


@pytest.mark.large
def test_extend_checkpoint_commands_run_as_written(tmp_path, minilm_encoder):
    write_release(minilm_encoder, tmp_path)
    (tmp_path / "domain_words.txt").write_text("covid\nremdesivir\n", encoding="utf-8")
    run_commands(
        block_in("docs/scripts/extend_checkpoint.md", "", "extend_checkpoint.py"), tmp_path
    )
    unused = (tmp_path / "uncased_domain" / "vocab.txt").read_text(encoding="utf-8").splitlines()
    assert unused[1:3] == ["covid", "remdesivir"]  # [unused0], [unused1] replaced
    appended = (tmp_path / "uncased_covid" / "vocab.txt").read_text(encoding="utf-8").splitlines()
    assert appended[-2:] == ["covid", "remdesivir"]
    types = json.loads((tmp_path / "uncased_4_types" / "bert_config.json").read_text())
    assert types["type_vocab_size"] == 4


@pytest.mark.large
def test_chinese_readme_keras_example_runs_as_written(tmp_path, monkeypatch, minilm_encoder):
    monkeypatch.chdir(tmp_path)
    write_release(minilm_encoder, tmp_path, "chinese_L-12_H-768_A-12")
    example = block_in("docs/zh/getting_started.md", "在 Python / Keras 中使用", "BertClassifier")
    names = {}
    exec(example.code, names)
    assert names["classifier"].predict(["今天天气真好。"], verbose=0).shape == (1, 2)


def test_every_bert_tf_name_the_docs_give_exists():
    """`bert_tf.x.y` in the code spans of the READMEs, the documentation pages
    and CONTRIBUTING is a module or a module's attribute, and each `from
    bert_tf... import ...` imports."""
    missing = []
    for document in (*DOCUMENTS, "CONTRIBUTING.md"):
        with open(os.path.join(REPO, document), encoding="utf-8") as f:
            text = f.read()
        prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
        spans = re.findall(r"`([^`]+)`", prose) + [b.code for b in blocks(document)]
        names = {n for span in spans for n in re.findall(r"\bbert_tf(?:\.\w+)+", span)}
        imports = {
            (module, name.strip())
            for span in spans
            for module, names_ in re.findall(r"from (bert_tf[\w.]*) import ([\w, ]+)", span)
            for name in names_.split(",")
        }
        names |= {f"{module}.{name}" for module, name in imports}
        missing += [f"{document}: {name}" for name in sorted(names) if not resolves(name)]
    assert not missing, "\n".join(missing)


def resolves(dotted):
    try:
        resolve(dotted)
    except (ImportError, AttributeError):
        return False
    return True


def test_every_export_function_imports_from_bert_tf_export():
    """docs/keras.md: "every `bert_tf.export` function (`export_classifier`, ...)"."""
    import bert_tf.export

    package = os.path.join(REPO, "bert_tf", "export")
    defined = set()
    for name in os.listdir(package):
        if name.endswith(".py"):
            tree = ast.parse(open(os.path.join(package, name), encoding="utf-8").read())
            defined |= {
                node.name
                for node in tree.body
                if isinstance(node, ast.FunctionDef) and node.name.startswith("export_")
            }
    assert len(defined) >= 5
    assert defined <= set(bert_tf.export.__all__)
    assert all(hasattr(bert_tf.export, name) for name in bert_tf.export.__all__)
