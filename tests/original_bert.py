"""google-research/bert's create_pretraining_data.py and tokenization.py,
transcribed for comparison: the same rules, character by character, on string
tokens, with the whole corpus in memory, written with tf.train.Example as the
original writes. The tests check bert_tf against it and bench/ measures it as
the peer. Also the names and shapes of the variables that the original's
modeling.py, run_pretraining.py, run_classifier.py and run_squad.py create."""

import collections
import random
import unicodedata

import tensorflow as tf

# --- tokenization.py ----------------------------------------------------------------------------


def load_vocab(vocab_file):
    vocab = collections.OrderedDict()
    with tf.io.gfile.GFile(vocab_file, "r") as reader:
        for index, line in enumerate(reader):
            vocab[line.strip()] = index
    return vocab


def is_whitespace(char):
    return char in (" ", "\t", "\n", "\r") or unicodedata.category(char) == "Zs"


def is_control(char):
    if char in ("\t", "\n", "\r"):
        return False
    return unicodedata.category(char) in ("Cc", "Cf")


def is_punctuation(char):
    cp = ord(char)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def is_chinese_char(cp):
    return (
        0x4E00 <= cp <= 0x9FFF
        or 0x3400 <= cp <= 0x4DBF
        or 0x20000 <= cp <= 0x2A6DF
        or 0x2A700 <= cp <= 0x2B73F
        or 0x2B740 <= cp <= 0x2B81F
        or 0x2B820 <= cp <= 0x2CEAF
        or 0xF900 <= cp <= 0xFAFF
        or 0x2F800 <= cp <= 0x2FA1F
    )


def whitespace_tokenize(text):
    text = text.strip()
    return text.split() if text else []


class OriginalTokenizer:
    """The original FullTokenizer: BasicTokenizer then WordpieceTokenizer."""

    def __init__(self, vocab_file, do_lower_case=True):
        self.vocab = load_vocab(vocab_file)
        self.do_lower_case = do_lower_case

    def tokenize(self, text):
        return [piece for token in self.basic_tokenize(text) for piece in self.wordpiece(token)]

    def convert_tokens_to_ids(self, tokens):
        return [self.vocab[token] for token in tokens]

    def basic_tokenize(self, text):
        cleaned = []
        for char in text:
            cp = ord(char)
            if cp == 0 or cp == 0xFFFD or is_control(char):
                continue
            cleaned.append(" " if is_whitespace(char) else char)
        spaced = []
        for char in "".join(cleaned):
            spaced.append(f" {char} " if is_chinese_char(ord(char)) else char)
        split_tokens = []
        for token in whitespace_tokenize("".join(spaced)):
            if self.do_lower_case:
                token = "".join(
                    c
                    for c in unicodedata.normalize("NFD", token.lower())
                    if unicodedata.category(c) != "Mn"
                )
            split_tokens.extend(self._split_on_punctuation(token))
        return whitespace_tokenize(" ".join(split_tokens))

    @staticmethod
    def _split_on_punctuation(text):
        output, start_new_word = [], True
        for char in text:
            if is_punctuation(char):
                output.append([char])
                start_new_word = True
            else:
                if start_new_word:
                    output.append([])
                start_new_word = False
                output[-1].append(char)
        return ["".join(x) for x in output]

    def wordpiece(self, text, unk_token="[UNK]", max_input_chars_per_word=200):
        output_tokens = []
        for token in whitespace_tokenize(text):
            chars = list(token)
            if len(chars) > max_input_chars_per_word:
                output_tokens.append(unk_token)
                continue
            is_bad, start, sub_tokens = False, 0, []
            while start < len(chars):
                end, cur_substr = len(chars), None
                while start < end:
                    substr = "".join(chars[start:end])
                    if start > 0:
                        substr = "##" + substr
                    if substr in self.vocab:
                        cur_substr = substr
                        break
                    end -= 1
                if cur_substr is None:
                    is_bad = True
                    break
                sub_tokens.append(cur_substr)
                start = end
            output_tokens.extend([unk_token] if is_bad else sub_tokens)
        return output_tokens


# --- create_pretraining_data.py -----------------------------------------------------------------


def original_instances(
    lines,
    tokenizer,
    random_seed,
    dupe_factor,
    max_seq_length,
    short_seq_prob,
    masked_lm_prob,
    max_predictions_per_seq,
    do_whole_word_mask,
):
    """google-research/bert create_training_instances with the whole corpus in memory:
    [(tokens, segment_ids, masked_lm_positions, masked_lm_labels, is_random_next)]."""
    all_documents = [[]]
    for line in lines:
        line = line.strip()
        if not line:
            all_documents.append([])
        tokens = tokenizer.tokenize(line)
        if tokens:
            all_documents[-1].append(tokens)
    all_documents = [x for x in all_documents if x]
    rng = random.Random(random_seed)
    rng.shuffle(all_documents)
    vocab_words = list(tokenizer.vocab.keys())
    instances = []
    for _ in range(dupe_factor):
        for document_index in range(len(all_documents)):
            instances.extend(
                _original_document(
                    all_documents,
                    document_index,
                    max_seq_length,
                    short_seq_prob,
                    masked_lm_prob,
                    max_predictions_per_seq,
                    vocab_words,
                    rng,
                    do_whole_word_mask,
                )
            )
    rng.shuffle(instances)
    return instances


def _original_document(
    all_documents,
    document_index,
    max_seq_length,
    short_seq_prob,
    masked_lm_prob,
    max_predictions_per_seq,
    vocab_words,
    rng,
    wwm,
):
    document = all_documents[document_index]
    max_num_tokens = max_seq_length - 3
    target_seq_length = max_num_tokens
    if rng.random() < short_seq_prob:
        target_seq_length = rng.randint(2, max_num_tokens)
    instances = []
    current_chunk = []
    current_length = 0
    i = 0
    while i < len(document):
        segment = document[i]
        current_chunk.append(segment)
        current_length += len(segment)
        if i == len(document) - 1 or current_length >= target_seq_length:
            if current_chunk:
                a_end = 1
                if len(current_chunk) >= 2:
                    a_end = rng.randint(1, len(current_chunk) - 1)
                tokens_a = []
                for j in range(a_end):
                    tokens_a.extend(current_chunk[j])
                tokens_b = []
                if len(current_chunk) == 1 or rng.random() < 0.5:
                    is_random_next = True
                    target_b_length = target_seq_length - len(tokens_a)
                    for _ in range(10):
                        random_document_index = rng.randint(0, len(all_documents) - 1)
                        if random_document_index != document_index:
                            break
                    random_document = all_documents[random_document_index]
                    random_start = rng.randint(0, len(random_document) - 1)
                    for j in range(random_start, len(random_document)):
                        tokens_b.extend(random_document[j])
                        if len(tokens_b) >= target_b_length:
                            break
                    num_unused_segments = len(current_chunk) - a_end
                    i -= num_unused_segments
                else:
                    is_random_next = False
                    for j in range(a_end, len(current_chunk)):
                        tokens_b.extend(current_chunk[j])
                while True:
                    total_length = len(tokens_a) + len(tokens_b)
                    if total_length <= max_num_tokens:
                        break
                    trunc_tokens = tokens_a if len(tokens_a) > len(tokens_b) else tokens_b
                    assert len(trunc_tokens) >= 1
                    if rng.random() < 0.5:
                        del trunc_tokens[0]
                    else:
                        trunc_tokens.pop()
                tokens = ["[CLS]"] + tokens_a + ["[SEP]"] + tokens_b + ["[SEP]"]
                segment_ids = [0] * (len(tokens_a) + 2) + [1] * (len(tokens_b) + 1)
                tokens, positions, labels = _original_masking(
                    tokens, masked_lm_prob, max_predictions_per_seq, vocab_words, rng, wwm
                )
                instances.append((tokens, segment_ids, positions, labels, is_random_next))
            current_chunk = []
            current_length = 0
        i += 1
    return instances


def _original_masking(tokens, masked_lm_prob, max_predictions_per_seq, vocab_words, rng, wwm):
    cand_indexes = []
    for i, token in enumerate(tokens):
        if token == "[CLS]" or token == "[SEP]":
            continue
        if wwm and len(cand_indexes) >= 1 and token.startswith("##"):
            cand_indexes[-1].append(i)
        else:
            cand_indexes.append([i])
    rng.shuffle(cand_indexes)
    output_tokens = list(tokens)
    num_to_predict = min(max_predictions_per_seq, max(1, int(round(len(tokens) * masked_lm_prob))))
    masked_lms = []
    covered_indexes = set()
    for index_set in cand_indexes:
        if len(masked_lms) >= num_to_predict:
            break
        if len(masked_lms) + len(index_set) > num_to_predict:
            continue
        if any(index in covered_indexes for index in index_set):
            continue
        for index in index_set:
            covered_indexes.add(index)
            if rng.random() < 0.8:
                masked_token = "[MASK]"
            elif rng.random() < 0.5:
                masked_token = tokens[index]
            else:
                masked_token = vocab_words[rng.randint(0, len(vocab_words) - 1)]
            output_tokens[index] = masked_token
            masked_lms.append((index, tokens[index]))
    masked_lms.sort()
    return output_tokens, [p for p, _ in masked_lms], [label for _, label in masked_lms]


def write_original_records(
    instances, tokenizer, max_seq_length, max_predictions_per_seq, output_files
):
    """The original's write_instance_to_example_files: padded features in an
    OrderedDict, one tf.train.Example each, round-robin over the files."""
    writers = [tf.io.TFRecordWriter(path) for path in output_files]

    def int_feature(values):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=list(values)))

    for index, (tokens, segment_ids, positions, labels, is_random_next) in enumerate(instances):
        input_ids = tokenizer.convert_tokens_to_ids(tokens)
        input_mask = [1] * len(input_ids)
        segment_ids = list(segment_ids)
        while len(input_ids) < max_seq_length:
            input_ids.append(0)
            input_mask.append(0)
            segment_ids.append(0)
        masked_lm_positions = list(positions)
        masked_lm_ids = tokenizer.convert_tokens_to_ids(labels)
        masked_lm_weights = [1.0] * len(masked_lm_ids)
        while len(masked_lm_positions) < max_predictions_per_seq:
            masked_lm_positions.append(0)
            masked_lm_ids.append(0)
            masked_lm_weights.append(0.0)
        features = collections.OrderedDict()
        features["input_ids"] = int_feature(input_ids)
        features["input_mask"] = int_feature(input_mask)
        features["segment_ids"] = int_feature(segment_ids)
        features["masked_lm_positions"] = int_feature(masked_lm_positions)
        features["masked_lm_ids"] = int_feature(masked_lm_ids)
        features["masked_lm_weights"] = tf.train.Feature(
            float_list=tf.train.FloatList(value=masked_lm_weights)
        )
        features["next_sentence_labels"] = int_feature([1 if is_random_next else 0])
        example = tf.train.Example(features=tf.train.Features(feature=features))
        writers[index % len(writers)].write(example.SerializeToString())
    for writer in writers:
        writer.close()


def run_original(
    input_files,
    output_files,
    vocab_file,
    do_lower_case=True,
    random_seed=12345,
    dupe_factor=10,
    max_seq_length=128,
    short_seq_prob=0.1,
    masked_lm_prob=0.15,
    max_predictions_per_seq=20,
    do_whole_word_mask=False,
):
    """The original's main(): reads every line of every file, makes all
    instances, writes them; returns the number of instances."""
    tokenizer = OriginalTokenizer(vocab_file, do_lower_case)
    lines = []
    for path in input_files:
        with tf.io.gfile.GFile(path, "rb") as reader:
            lines.extend(line.decode("utf-8", "ignore") for line in reader)
    instances = original_instances(
        lines,
        tokenizer,
        random_seed,
        dupe_factor,
        max_seq_length,
        short_seq_prob,
        masked_lm_prob,
        max_predictions_per_seq,
        do_whole_word_mask,
    )
    write_original_records(
        instances, tokenizer, max_seq_length, max_predictions_per_seq, output_files
    )
    return len(instances)


# --- the variables of modeling.py, run_pretraining.py, run_classifier.py, run_squad.py ----------

# Each as (name, shape): H hidden_size, I intermediate_size, V vocab_size, T
# type_vocab_size, P max_position_embeddings, L num_labels, 2 two. Per layer
# (`bert/encoder/layer_{i}/...`), written out from modeling.py's
# transformer_model: its tf.layers.dense layers and tf.contrib's layer_norm.
LAYER_VARIABLES = [
    ("attention/self/query/kernel", "HH"),
    ("attention/self/query/bias", "H"),
    ("attention/self/key/kernel", "HH"),
    ("attention/self/key/bias", "H"),
    ("attention/self/value/kernel", "HH"),
    ("attention/self/value/bias", "H"),
    ("attention/output/dense/kernel", "HH"),
    ("attention/output/dense/bias", "H"),
    ("attention/output/LayerNorm/gamma", "H"),
    ("attention/output/LayerNorm/beta", "H"),
    ("intermediate/dense/kernel", "HI"),
    ("intermediate/dense/bias", "I"),
    ("output/dense/kernel", "IH"),
    ("output/dense/bias", "H"),
    ("output/LayerNorm/gamma", "H"),
    ("output/LayerNorm/beta", "H"),
]
# modeling.py's BertModel outside the layers.
EMBEDDING_AND_POOLER_VARIABLES = [
    ("bert/embeddings/word_embeddings", "VH"),
    ("bert/embeddings/token_type_embeddings", "TH"),
    ("bert/embeddings/position_embeddings", "PH"),
    ("bert/embeddings/LayerNorm/gamma", "H"),
    ("bert/embeddings/LayerNorm/beta", "H"),
    ("bert/pooler/dense/kernel", "HH"),
    ("bert/pooler/dense/bias", "H"),
]
# run_pretraining.py's get_masked_lm_output and get_next_sentence_output.
PRETRAINING_HEAD_VARIABLES = [
    ("cls/predictions/transform/dense/kernel", "HH"),
    ("cls/predictions/transform/dense/bias", "H"),
    ("cls/predictions/transform/LayerNorm/gamma", "H"),
    ("cls/predictions/transform/LayerNorm/beta", "H"),
    ("cls/predictions/output_bias", "V"),
    ("cls/seq_relationship/output_weights", "2H"),
    ("cls/seq_relationship/output_bias", "2"),
]
# run_classifier.py's create_model: tf.get_variable at the top level, no scope.
CLASSIFIER_HEAD_VARIABLES = [("output_weights", "LH"), ("output_bias", "L")]
# run_squad.py's create_model.
SQUAD_HEAD_VARIABLES = [("cls/squad/output_weights", "2H"), ("cls/squad/output_bias", "2")]


def _shapes(variables, config=None, num_labels=None, hidden_size=None):
    dims = {"2": 2, "L": num_labels, "H": hidden_size}
    if config is not None:
        dims.update(
            H=config.hidden_size,
            I=config.intermediate_size,
            V=config.vocab_size,
            T=config.type_vocab_size,
            P=config.max_position_embeddings,
        )
    return {name: tuple(dims[d] for d in shape) for name, shape in variables}


def encoder_variables(config):
    """`{name: shape}` of modeling.py's BertModel (`bert/...`) of `config`."""
    names = _shapes(EMBEDDING_AND_POOLER_VARIABLES, config)
    for i in range(config.num_hidden_layers):
        layer = [(f"bert/encoder/layer_{i}/{name}", shape) for name, shape in LAYER_VARIABLES]
        names.update(_shapes(layer, config))
    return names


def pretraining_head_variables(config):
    """`{name: shape}` of run_pretraining.py's heads (`cls/...`)."""
    return _shapes(PRETRAINING_HEAD_VARIABLES, config)


def classifier_head_variables(num_labels, hidden_size):
    """`{name: shape}` of run_classifier.py's head."""
    return _shapes(CLASSIFIER_HEAD_VARIABLES, num_labels=num_labels, hidden_size=hidden_size)


def squad_head_variables(hidden_size):
    """`{name: shape}` of run_squad.py's head."""
    return _shapes(SQUAD_HEAD_VARIABLES, hidden_size=hidden_size)
