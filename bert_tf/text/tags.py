"""Entity tags and the chunks they spell, as the CoNLL `conlleval` script reads them.

Tags are `O` or `<prefix>-<TYPE>`; the tagging scheme says which prefixes:
- "bio": B or I (IOB1 and BIO / IOB2 alike). Chunks are found with
  conlleval's `startOfChunk` / `endOfChunk` rules: B starts a chunk, and so
  does an I after O or after a tag of another type (IOB1); a chunk ends
  before O, B, or a tag of another type.
- "bioes": B, I, E, S, strictly (as seqeval's strict IOBES mode): a chunk
  is `B I* E` of one type or a single `S`; any other run is no chunk.
- "bmes": "bioes" with M for I (Chinese segmentation style).
Used to make tags from spans (data), read entities from predicted tags
(exports) and score them (`bert_tf.metrics.entities`).
"""

from bert_tf.errors import InputError

OUTSIDE = "O"
# The prefixes of each tagging scheme, in the order of an entity's tags.
SCHEMES = {"bio": ("B", "I"), "bioes": ("B", "I", "E", "S"), "bmes": ("B", "M", "E", "S")}


def split_tag(tag, scheme="bio"):
    """`"B-PER"` -> `("B", "PER")`; `"O"` -> `("O", "")`; InputError when the
    prefix is not one of `scheme`'s."""
    if tag == OUTSIDE:
        return OUTSIDE, ""
    prefix, sep, entity_type = tag.partition("-")
    if not sep or prefix not in SCHEMES[scheme] or not entity_type:
        expected = " / ".join(f"{p}-<TYPE>" for p in SCHEMES[scheme])
        raise InputError(f"tag {tag!r} is neither O nor {expected}")
    return prefix, entity_type


def detect_scheme(labels):
    """The scheme of a label set: "bmes" with an M- tag, else "bioes" with an
    E- or S- tag, else "bio"."""
    prefixes = {label.partition("-")[0] for label in labels if label != OUTSIDE}
    if "M" in prefixes:
        return "bmes"
    if prefixes & {"E", "S"}:
        return "bioes"
    return "bio"


def span_tags(entity_type, length, scheme):
    """The tags of one entity of `length` words: `["B-T", "I-T", ...]` in
    "bio", `B I* E` or `S` in "bioes", `B M* E` or `S` in "bmes"."""
    if scheme == "bio":
        prefixes = ["B"] + ["I"] * (length - 1)
    elif length == 1:
        prefixes = ["S"]
    else:
        begin, inside, end, _ = SCHEMES[scheme]
        prefixes = [begin] + [inside] * (length - 2) + [end]
    return [f"{prefix}-{entity_type}" for prefix in prefixes]


def _ends(prev_prefix, prefix, prev_type, entity_type):
    """conlleval's endOfChunk: the previous token closes a chunk."""
    if prev_prefix == OUTSIDE:
        return False
    return prefix in ("B", OUTSIDE) or prev_type != entity_type


def _starts(prev_prefix, prefix, prev_type, entity_type):
    """conlleval's startOfChunk: this token opens a chunk."""
    if prefix == OUTSIDE:
        return False
    return prefix == "B" or prev_prefix == OUTSIDE or prev_type != entity_type


def _strict_chunks(tags, scheme):
    """The chunks of "bioes" / "bmes" tags: `B I* E` (`B M* E`) of one type, or `S`."""
    found = set()
    start = None  # the open chunk's first index
    open_type = ""
    for index, tag in enumerate(tags):
        prefix, entity_type = split_tag(tag, scheme)
        if start is not None and prefix in ("I", "M", "E") and entity_type == open_type:
            if prefix == "E":
                found.add((open_type, start, index))
                start = None
            continue
        start = None
        if prefix == "S":
            found.add((entity_type, index, index))
        elif prefix == "B":
            start, open_type = index, entity_type
    return found


def chunks(tags, scheme="bio"):
    """The entity chunks of one sentence's tags: a set of `(type, first, last)`
    word indices (inclusive)."""
    if scheme != "bio":
        return _strict_chunks(tags, scheme)
    found = set()
    prev_prefix, prev_type, start = OUTSIDE, "", None
    for index, tag in enumerate([*tags, OUTSIDE]):
        prefix, entity_type = split_tag(tag)
        if start is not None and _ends(prev_prefix, prefix, prev_type, entity_type):
            found.add((prev_type, start, index - 1))
            start = None
        if _starts(prev_prefix, prefix, prev_type, entity_type):
            start = index
        prev_prefix, prev_type = prefix, entity_type
    return found
