"""TFRecord files and `tf.train.Example` bytes without TensorFlow.

Worker processes that only make records need neither TensorFlow's import
time (~4 s) nor its memory (~800 MB). The bytes are those TensorFlow writes:
`encode_example` equals `tf.train.Example.SerializeToString(deterministic=True)`
for features of int64 and float lists, and `TFRecordFile` equals
`tf.io.TFRecordWriter` (uncompressed): per record, the length (uint64 LE), the
masked CRC-32C of those 8 bytes, the data and the masked CRC-32C of the data.
"""

import dataclasses
import functools
import struct

import google_crc32c

from bert_tf import files

_UINT64 = struct.Struct("<Q")
_UINT32 = struct.Struct("<I")
_MASK_DELTA = 0xA282EAD8


def varint(value):
    """`value` (an int, negative ones as 64-bit two's complement) as protobuf varint bytes."""
    value &= 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def length_delimited(field_number, payload):
    """A protobuf field of wire type 2 (bytes, message, packed list)."""
    return varint(field_number << 3 | 2) + varint(len(payload)) + payload


def int64_feature(values):
    """A `tf.train.Feature` holding an Int64List, as bytes."""
    packed = b"".join(map(varint, values))
    return length_delimited(3, length_delimited(1, packed) if packed else b"")


def float_feature(values):
    """A `tf.train.Feature` holding a FloatList (float32), as bytes."""
    packed = struct.pack(f"<{len(values)}f", *values)
    return length_delimited(2, length_delimited(1, packed) if packed else b"")


def encode_example(features):
    """`{name: feature bytes}` (from `int64_feature` / `float_feature`) ->
    `tf.train.Example` bytes, map entries sorted by name as deterministic
    serialization sorts them."""
    entries = b"".join(
        length_delimited(1, length_delimited(1, name.encode()) + length_delimited(2, value))
        for name, value in sorted(features.items())
    )
    return length_delimited(1, entries)


def masked_crc32c(data):
    """TFRecord's checksum: CRC-32C rotated right by 15 bits plus a constant."""
    crc = google_crc32c.value(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def frame(record):
    """One record with its TFRecord header and footer, ready to append to a file."""
    return b"".join((_header(len(record)), record, _UINT32.pack(masked_crc32c(record))))


@functools.lru_cache(maxsize=4096)
def _header(length):
    """The length (uint64 LE) and its masked CRC-32C: records of a run have few lengths."""
    packed = _UINT64.pack(length)
    return packed + _UINT32.pack(masked_crc32c(packed))


class TFRecordFile:
    """A new TFRecord file (local or remote) to append records to; a context
    manager. Raises OSError if `path` cannot be written."""

    def __init__(self, path):
        self._file = files.open_file(path, "wb")

    def write_framed(self, framed_record):
        """Writes records already framed by `frame` (one, or several joined)."""
        self._file.write(framed_record)

    def write(self, record):
        """Writes one unframed record."""
        self._file.write(frame(record))

    def close(self):
        self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()


@dataclasses.dataclass(frozen=True)
class Damage:
    """Where a TFRecord file stops being readable: the record's number (from
    0), the byte offset of its header, what is wrong and the bytes from there
    to the end of the file."""

    record: int
    offset: int
    problem: str
    bytes_lost: int

    def describe(self):
        return f"record {self.record} (byte {self.offset}) is {self.problem}"


def find_damage(path):
    """The first damaged record of the TFRecord file at `path` (truncated, or
    a checksum that does not match), or None if every record reads back.
    Past a damaged record the framing cannot be trusted: TensorFlow's reader,
    and this scan, stop there."""
    size = files.size_and_mtime(path)[0]
    offset = record = 0
    with files.open_file(path, "rb") as f:
        while header := f.read(12):
            problem = None
            if len(header) < 12:
                problem = "truncated"
            elif masked_crc32c(header[:8]) != _UINT32.unpack(header[8:])[0]:
                problem = "corrupted (its length fails its checksum)"
            else:
                (length,) = _UINT64.unpack(header[:8])
                body = f.read(length + 4)
                if len(body) < length + 4:
                    problem = "truncated"
                elif masked_crc32c(body[:length]) != _UINT32.unpack(body[length:])[0]:
                    problem = "corrupted (its data fails its checksum)"
            if problem:
                return Damage(record, offset, problem, size - offset)
            offset += len(header) + length + 4
            record += 1
    return None
