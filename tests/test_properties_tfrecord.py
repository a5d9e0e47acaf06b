"""Property test: `tfrecord.find_damage` against TensorFlow's own TFRecord
reader on files TensorFlow wrote, then damaged at random. The reader is
`tf_record_iterator`: the same C++ RecordReader as `tf.data.TFRecordDataset`,
ten times faster to start."""

import re
import struct

import google_crc32c
import pytest
import tensorflow as tf
from hypothesis import event, given, settings
from hypothesis import strategies as st

from bert_tf.data import tfrecord


def masked_crc(data):
    """TFRecord's checksum (tensorflow/core/lib/hash/crc32c.h `Mask`)."""
    crc = google_crc32c.value(data)
    return ((crc >> 15 | crc << 17) + 0xA282EAD8) & 0xFFFFFFFF


def tensorflow_read(path):
    """(records read, (problem, byte offset) of the DataLossError or None)."""
    records = []
    try:
        for record in tf.compat.v1.io.tf_record_iterator(path):
            records.append(record)
    except tf.errors.DataLossError as e:
        problem, at = re.search(r"(corrupted|truncated) record at (\d+)", str(e)).groups()
        return records, (problem, int(at))
    return records, None


@pytest.fixture(scope="module")
def tmp_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("tfrecord")


@settings(max_examples=200)
@given(
    records=st.lists(st.binary(max_size=40), max_size=4),
    damage=st.sampled_from(["none", "cut", "flip", "length", "append"]),
    data=st.data(),
)
def test_find_damage_reports_where_tensorflows_reader_stops(tmp_dir, records, damage, data):
    path = str(tmp_dir / "records")
    with tf.io.TFRecordWriter(path) as writer:
        for record in records:
            writer.write(record)
    with open(path, "rb") as f:
        content = bytearray(f.read())
    starts = [sum(16 + len(r) for r in records[:k]) for k in range(len(records))]
    if damage == "cut" and content:
        del content[data.draw(st.integers(0, len(content) - 1)) :]
    elif damage == "flip" and content:  # in a length, a checksum or the data
        content[data.draw(st.integers(0, len(content) - 1))] ^= data.draw(st.integers(1, 255))
    elif damage == "length" and records:  # a wrong length with a valid checksum
        start = data.draw(st.sampled_from(starts))
        length = struct.pack("<Q", data.draw(st.integers(0, 60)))
        content[start : start + 12] = length + struct.pack("<I", masked_crc(length))
    elif damage == "append":
        content += data.draw(st.binary(min_size=1, max_size=30))
    with open(path, "wb") as f:
        f.write(content)

    read, error = tensorflow_read(path)
    found = tfrecord.find_damage(path)
    event(found.problem if found else "intact")
    offset = sum(16 + len(r) for r in read)
    # TensorFlow's reader takes a file that ends inside a header for a whole
    # file; find_damage calls it truncated.
    if error is None and offset == len(content):
        assert found is None
        return
    assert (found.record, found.offset, found.bytes_lost) == (
        len(read),
        offset,
        len(content) - offset,
    )
    if error is None or error[0] == "truncated":
        assert found.problem == "truncated"
        assert error is None or error[1] == offset
    elif error[1] == offset:
        assert found.problem == "corrupted (its length fails its checksum)"
    else:
        assert error[1] == offset + 12
        assert found.problem == "corrupted (its data fails its checksum)"
