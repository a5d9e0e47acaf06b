"""build_vocab against Hugging Face `tokenizers`' WordPiece trainer on the same corpus.

Usage:
  python bench/vocab.py [--input_file=corpus.txt] [--vocab_size=8000] \
      [--peer_python=.venv-peers/bin/python] [--num_workers=1,2] [--repeats=3]

Each side runs in a fresh process that reads the corpus, learns an uncased
vocabulary of --vocab_size and writes it: bert_tf's `build_vocab.py` (wall
time of the whole script, start-up included, once per --num_workers) and
`tokenizers`' `BertWordPieceTokenizer.train` (the same normaliser and
pre-tokenizer as BERT's BasicTokenizer; its defaults min_frequency=2 and
limit_alphabet=1000; Rust, on all cores). The best of --repeats runs counts.
`tokenizers` is not a bert_tf dependency: it is imported by --peer_python
(the peers' virtualenv of `make bench-peers`, where transformers brings it);
without it the peer's row says so.

Default corpus: the docstrings of the packages installed next to bert_tf
(real English prose, written by people), the first --corpus_mb MB of them.
"""

import ast
import os
import pathlib
import subprocess
import sys
import tempfile
import time

from absl import app, flags

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

flags.DEFINE_string("input_file", None, "UTF-8 corpus (default: installed packages' docstrings).")
flags.DEFINE_float("corpus_mb", 4.0, "Size of the default corpus in MB.")
flags.DEFINE_integer("vocab_size", 8000, "Target vocabulary size.")
flags.DEFINE_string(
    "peer_python", ".venv-peers/bin/python", "Python with `tokenizers` (make bench-peers)."
)
flags.DEFINE_list("num_workers", ["1", "2"], "build_vocab --num_workers values to time.")
flags.DEFINE_integer("repeats", 3, "Runs per row; the fastest counts.")
FLAGS = flags.FLAGS

PEER = """
import sys
from tokenizers import BertWordPieceTokenizer
corpus, vocab_size, out_dir = sys.argv[1], int(sys.argv[2]), sys.argv[3]
tokenizer = BertWordPieceTokenizer(lowercase=True)
tokenizer.train([corpus], vocab_size=vocab_size, show_progress=False)
tokenizer.save_model(out_dir)
"""


def docstring_corpus(path, megabytes):
    """Writes paragraphs of the installed packages' docstrings, one per line,
    packages taken in turn, until `megabytes` MB. Returns the number of lines."""
    site = pathlib.Path(app.__file__).parents[1]  # site-packages
    packages = sorted(p for p in site.iterdir() if p.is_dir() and "." not in p.name)
    sources = [_paragraphs(p) for p in packages]
    limit, size, lines = megabytes * 1e6, 0, 0
    with open(path, "w", encoding="utf-8") as f:
        while sources and size < limit:
            for source in list(sources):
                line = next(source, None)
                if line is None:
                    sources.remove(source)
                    continue
                f.write(line + "\n")
                size += len(line.encode("utf-8")) + 1
                lines += 1
    return lines


def _paragraphs(package):
    """The docstring paragraphs of a package's modules, whitespace joined."""
    for module in sorted(package.rglob("*.py")):
        try:
            tree = ast.parse(module.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                for paragraph in (ast.get_docstring(node) or "").split("\n\n"):
                    if paragraph.split():
                        yield " ".join(paragraph.split())


def best_time(command, repeats):
    """Fastest wall seconds of `repeats` runs of `command`, or None if it fails."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run = subprocess.run(command, capture_output=True, text=True)
        if run.returncode:
            print(run.stderr.strip().splitlines()[-1:], file=sys.stderr)
            return None
        times.append(time.perf_counter() - start)
    return min(times)


def cpu_name():
    """lscpu's model name with its family and model numbers (the name alone
    can be just "AMD EPYC")."""
    fields = dict(
        line.split(":", 1)
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines()
        if ":" in line
    )
    name = fields.get("Model name", "CPU ?").strip()
    return f"{name} (family {fields.get('CPU family', '?').strip()} model {fields.get('Model', '?').strip()})"


def main(argv):
    del argv
    with tempfile.TemporaryDirectory() as tmp:
        corpus = FLAGS.input_file
        if corpus is None:
            corpus = os.path.join(tmp, "docstrings.txt")
            docstring_corpus(corpus, FLAGS.corpus_mb)
        with open(corpus, encoding="utf-8") as f:
            lines = sum(1 for _ in f)
        print(
            f"{cpu_name()}; {os.cpu_count()} CPUs; corpus {os.path.getsize(corpus) / 1e6:.1f} MB, "
            f"{lines} lines; --vocab_size={FLAGS.vocab_size}; best of {FLAGS.repeats}"
        )
        peer = best_time(
            [FLAGS.peer_python, "-c", PEER, corpus, str(FLAGS.vocab_size), tmp], FLAGS.repeats
        )
        print(f"{'':28s}{'wall s':>8}{'x tokenizers':>14}")
        if peer is None:
            print(f"{'tokenizers':28s}  (no `tokenizers` in {FLAGS.peer_python}: make bench-peers)")
        else:
            print(f"{'tokenizers WordPiece':28s}{peer:>8.2f}{1.0:>14.2f}")
        for workers in FLAGS.num_workers:
            seconds = best_time(
                [
                    sys.executable,
                    os.path.join(REPO, "build_vocab.py"),
                    f"--input_file={corpus}",
                    f"--output_file={tmp}/vocab-{workers}.txt",
                    f"--vocab_size={FLAGS.vocab_size}",
                    f"--num_workers={workers}",
                ],
                FLAGS.repeats,
            )
            ratio = f"{seconds / peer:>14.2f}" if peer else ""
            print(f"{f'build_vocab --num_workers={workers}':28s}{seconds:>8.2f}{ratio}")


if __name__ == "__main__":
    app.run(main)
