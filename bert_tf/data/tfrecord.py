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


def decode_example(data):
    """`tf.train.Example` bytes of int64 and float lists -> `{name: [values]}`
    (the inverse of `encode_example`; packed or unpacked lists)."""
    decoded = {}
    for _, features in _fields(data):
        for _, entry in _fields(features):
            fields = dict(_fields(entry))
            name, feature = fields[1].decode(), fields.get(2, b"")
            values = []
            for kind, value_list in _fields(feature):
                values = _list_values(kind, value_list)
            decoded[name] = values
    return decoded


def _list_values(kind, value_list):
    """The values of an Int64List (feature kind 3) or FloatList (kind 2)."""
    values = []
    for _, value in _fields(value_list):
        if kind == 2:  # float32s: packed bytes, or one fixed32
            values.extend(struct.unpack(f"<{len(value) // 4}f", value))
        elif isinstance(value, int):
            values.append(value - (value >> 63 << 64))  # two's complement
        else:
            position = 0
            while position < len(value):
                number, position = _read_varint(value, position)
                values.append(number - (number >> 63 << 64))
    return values


def _fields(message):
    """`(field number, value)` of each field of protobuf bytes: an int for a
    varint, bytes for a length-delimited or fixed32 field."""
    position = 0
    while position < len(message):
        key, position = _read_varint(message, position)
        wire_type = key & 7
        if wire_type == 0:
            value, position = _read_varint(message, position)
        elif wire_type in (2, 5):
            length = 4
            if wire_type == 2:
                length, position = _read_varint(message, position)
            value, position = message[position : position + length], position + length
        else:
            raise ValueError(f"protobuf wire type {wire_type} is not in tf.train.Example")
        yield key >> 3, value


def _read_varint(data, position):
    """The varint at `position` of `data` and the position after it."""
    value = shift = 0
    while True:
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, position
        shift += 7


def unframe(framed_record):
    """The record in a framed record (one of `frame`'s)."""
    return framed_record[12:-4]


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
