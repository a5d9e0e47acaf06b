"""bert_tf: Google's original BERT tooling on TensorFlow 2 / Keras 3."""

from bert_tf.config import BertConfig, preset
from bert_tf.pretrained import PretrainedBert, from_pretrained

__version__ = "0.1.0"

__all__ = ["BertConfig", "preset", "PretrainedBert", "from_pretrained"]
