"""Kafka's `org.apache.kafka.common.Uuid` as topic ids are printed and parsed.

A topic id is 16 bytes (two Java longs, most significant first) shown as url-safe base64 without
padding: 22 characters. Sources, apache/kafka `clients/src/main/java/org/apache/kafka/common/Uuid.java`:
@2.8.2 (`randomUuid` l.53, `toString` l.100, `fromString` l.107) and @3.6.2 (`METADATA_TOPIC_ID` l.33,
`randomUuid` l.62, `toString` l.109, `fromString` l.116). `java.util.UUID.randomUUID` and
`java.util.Base64.Decoder` are the JDK's (OpenJDK 17 `java/util/UUID.java`, `java/util/Base64.java`).
Whether an id *could* have come from `randomUuid` at a given Kafka version is a forensic question: an id
starting with '-' was not made by a 3.2+ broker or tool.
"""

from __future__ import annotations

import base64
import random
import re
import uuid

from workbench.kafka.logdir import TOPIC_ID, ZERO_TOPIC_ID

ZERO_UUID = ZERO_TOPIC_ID  # Uuid.ZERO_UUID = new Uuid(0L, 0L): "no topic id"
# Uuid(0L, 1L): public METADATA_TOPIC_ID since 3.0.0 (the KRaft `__cluster_metadata` topic); at 2.8.2 the
# same value is the private SENTINEL_ID_INTERNAL. randomUuid never returns it in either.
METADATA_TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAQ"
TOPIC_ID_RE = re.compile(TOPIC_ID)
# Uuid.java @3.2.0 and later: `uuid.toString().startsWith("-")` is re-drawn (apache/kafka 5c1dd493d6f).
_NO_LEADING_DASH_SINCE = (3, 2, 0)
_URL_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
_URL_VALUE = {c: i for i, c in enumerate(_URL_ALPHABET)}


def _version(kafka_version: str) -> tuple[int, ...]:
    m = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", kafka_version)
    if not m:
        raise ValueError(f"Kafka version must look like 3.6.2, got {kafka_version!r}")
    return (int(m[1]), int(m[2]), int(m[3] or 0))


def to_string(value: uuid.UUID | bytes) -> str:
    """Uuid.toString: url-safe base64 of the 16 bytes, no padding."""
    raw = value.bytes if isinstance(value, uuid.UUID) else bytes(value)
    if len(raw) != 16:
        raise ValueError(f"a Kafka Uuid is 16 bytes, got {len(raw)}")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def from_longs(most: int, least: int) -> uuid.UUID:
    """new Uuid(mostSigBits, leastSigBits); the longs may be signed, as Java prints them."""
    for v in (most, least):
        if not -(1 << 63) <= v < (1 << 64):
            raise ValueError(f"{v} is not a Java long")
    return uuid.UUID(int=((most & (2**64 - 1)) << 64) | (least & (2**64 - 1)))


def to_longs(value: uuid.UUID) -> tuple[int, int]:
    """getMostSignificantBits, getLeastSignificantBits: signed, as Kafka logs and compares them."""

    def signed(v: int) -> int:
        return v - (1 << 64) if v >= 1 << 63 else v

    return signed(value.int >> 64), signed(value.int & (2**64 - 1))


def _java_url_decode(text: str) -> bytes:
    """java.util.Base64.getUrlDecoder().decode(String), with the JDK's IllegalArgumentException texts.

    The string is taken as ISO-8859-1 bytes (other characters become '?'); '=' padding is accepted only
    where RFC 4648 puts it; unused low bits of the last unit are ignored, as the JDK does.
    """
    data = text.encode("latin-1", errors="replace")
    if 0 < len(data) < 2:
        raise ValueError("Input byte[] should at least have 2 bytes for base64 bytes")
    out = bytearray()
    bits, shift, pos = 0, 18, 0
    while pos < len(data):
        ch = chr(data[pos])
        pos += 1
        if ch == "=":
            # "=" opening a unit, or "xx=" not followed by a second "=": refused; "x=" fails below
            if shift == 18 or (shift == 6 and (pos == len(data) or data[pos] != ord("="))):
                raise ValueError("Input byte array has wrong 4-byte ending unit")
            pos += 1 if shift == 6 else 0
            break
        value = _URL_VALUE.get(ch)
        if value is None:
            signed = data[pos - 1] - 256 if data[pos - 1] > 127 else data[pos - 1]
            raise ValueError(f"Illegal base64 character {'-' if signed < 0 else ''}{abs(signed):x}")
        bits |= value << shift
        shift -= 6
        if shift < 0:
            out += bytes(((bits >> 16) & 0xFF, (bits >> 8) & 0xFF, bits & 0xFF))
            bits, shift = 0, 18
    if shift == 6:
        out.append((bits >> 16) & 0xFF)
    elif shift == 0:
        out += bytes(((bits >> 16) & 0xFF, (bits >> 8) & 0xFF))
    elif shift == 12:
        raise ValueError("Last unit does not have enough valid bits")
    if pos < len(data):
        raise ValueError(f"Input byte array has incorrect ending byte at {pos}")
    return bytes(out)


def from_string(text: str) -> uuid.UUID:
    """Uuid.fromString: what Kafka accepts as a topic id, refusing the rest with Kafka's own message.

    Kafka is more lenient than the 22-character form it prints: "...AA==" (24 characters) and a last
    character with stray low bits are accepted and name the same id.
    """
    units = text.encode("utf-16-le", "surrogatepass")  # String.length() and substring count UTF-16 units
    if len(units) > 48:
        prefix = units[:48].decode("utf-16-le", "surrogatepass")
        raise ValueError(f"Input string with prefix `{prefix}` is too long to be decoded as a base64 UUID")
    raw = _java_url_decode(text)
    if len(raw) != 16:
        raise ValueError(
            f"Input string `{text}` decoded as {len(raw)} bytes, which is not equal to the expected 16 "
            "bytes of a base64-encoded UUID"
        )
    return uuid.UUID(bytes=raw)


def _rejected(topic_id: str, version: tuple[int, ...]) -> bool:
    """The re-draw condition of Uuid.randomUuid at that version."""
    if topic_id in (ZERO_UUID, METADATA_TOPIC_ID):
        return True
    return version >= _NO_LEADING_DASH_SINCE and topic_id.startswith("-")


def random_uuid(rng: random.Random, kafka_version: str = "3.6.2") -> str:
    """Uuid.randomUuid as that Kafka version draws it, from a caller-seeded RNG (so fixtures repeat).

    java.util.UUID.randomUUID: 16 random bytes, version nibble 4 (byte 6), IETF variant (byte 8).
    Kafka then re-draws ZERO_UUID and Uuid(0, 1) (never hit by a version-4 UUID, but it is the rule) and,
    since 3.2.0, any id whose string starts with '-', which command-line tools would take for an option.
    """
    version = _version(kafka_version)
    while True:
        raw = bytearray(rng.getrandbits(128).to_bytes(16, "big"))
        raw[6] = (raw[6] & 0x0F) | 0x40
        raw[8] = (raw[8] & 0x3F) | 0x80
        text = to_string(bytes(raw))
        if not _rejected(text, version):
            return text


def could_be_random(topic_id: str, kafka_version: str) -> bool:
    """True when `Uuid.randomUuid` of that Kafka version could have returned this id.

    Kafka's own ids are version-4, IETF-variant UUIDs and never the reserved ones; since 3.2.0 they never
    start with '-'. An id that fails this was made elsewhere (a hand edit, a tool, an older broker).
    """
    if not TOPIC_ID_RE.fullmatch(topic_id):
        return False
    value = from_string(topic_id)
    if to_string(value) != topic_id or value.version != 4 or value.variant != uuid.RFC_4122:
        return False
    return not _rejected(topic_id, _version(kafka_version))
