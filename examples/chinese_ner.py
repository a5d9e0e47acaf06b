r"""Chinese named entities: fine-tunes on CLUENER2020 (or per-character tag files), then tags raw sentences.

Shows run_ner.py's Chinese path from Python: `bert_tf.tasks.ner.run_ner` with
`NerOptions` (the flags of run_ner.py, by name) trains on train.json, scores
dev.json (entity F1 overall and per type, in eval_results.txt), writes
CLUENER's submission file cluener_predict.json for test.json and exports a
SavedModel. Each CJK character is one token; entities come back as
character spans of the raw text, from the SavedModel as a server would call it.

On real data: CLUENER2020 (https://github.com/CLUEbenchmark/CLUENER2020:
train.json, dev.json, test.json) and Google's Chinese BERT:

  python examples/chinese_ner.py --data_dir=cluener_public \
      --init_checkpoint=chinese_L-12_H-768_A-12 --output_dir=cluener_out \
      --text=浙商银行企业信贷部叶老桂博士则从另一个角度对五道门槛进行了解读。

MSRA-style files (train.txt, dev.txt, test.txt of `character tag` rows, BIO
or BMES tags): --data_format=chars. The same run as a command:
`bert-tf-run-ner --data_format=cluener --data_dir=... --init_checkpoint=...
--do_train --do_eval --do_predict --export_dir=...`.

Prints eval_results.txt's scores, then one JSON line per --text: its entities
(type, text, start_char, end_char; end exclusive, in characters).
"""

import argparse
import json
import os

from bert_tf.export.tagging import entities
from bert_tf.options import build
from bert_tf.tasks.ner import run_ner
from bert_tf.tasks.ner_options import NerOptions


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data_dir", required=True)
    parser.add_argument("--data_format", default="cluener", choices=["cluener", "chars"])
    parser.add_argument("--init_checkpoint", help="a release folder or checkpoint")
    parser.add_argument("--bert_config_file", help="without --init_checkpoint: a new model")
    parser.add_argument("--vocab_file")
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--train_batch_size", type=int, default=32)
    parser.add_argument("--learning_rate", type=float, default=3e-5)
    parser.add_argument("--num_train_epochs", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--text", action="append", default=[], help="a sentence to tag (repeat)")
    args = parser.parse_args()

    export_dir = os.path.join(args.output_dir, "export")
    options = build(
        NerOptions,
        data_dir=args.data_dir,
        data_format=args.data_format,
        init_checkpoint=args.init_checkpoint,
        bert_config_file=args.bert_config_file,
        vocab_file=args.vocab_file,
        output_dir=args.output_dir,
        export_dir=export_dir,
        overwrite=True,
        max_seq_length=args.max_seq_length,
        train_batch_size=args.train_batch_size,
        learning_rate=args.learning_rate,
        num_train_epochs=args.num_train_epochs,
        seed=args.seed,
        do_train=True,
        do_eval=True,
        do_predict=True,
    )
    results = run_ner(options)
    for key, value in sorted(results.items()):
        print(f"{key} = {value}")
    for text, found in zip(args.text, entities(export_dir, args.text)):
        print(json.dumps({"text": text, "entities": found}, ensure_ascii=False))


if __name__ == "__main__":
    main()
