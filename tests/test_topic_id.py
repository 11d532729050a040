"""Kafka's Uuid as topic ids are printed, parsed and drawn, held against ids real Kafka 3.1.0 wrote and,
where a JDK is at hand, against java.util.Base64 itself."""

from __future__ import annotations

import random
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from workbench.kafka import logdir
from workbench.kafka import topic_id as tid


def test_reserved_ids_are_the_two_smallest_uuids_and_reuse_logdir() -> None:
    assert tid.ZERO_UUID is logdir.ZERO_TOPIC_ID
    assert tid.to_longs(tid.from_string(tid.ZERO_UUID)) == (0, 0)
    assert tid.to_longs(tid.from_string(tid.METADATA_TOPIC_ID)) == (0, 1)
    assert tid.to_string(tid.from_longs(0, 1)) == tid.METADATA_TOPIC_ID
    assert tid.TOPIC_ID_RE.pattern == logdir.TOPIC_ID


@pytest.mark.parametrize(
    ("text", "java_uuid", "longs"),
    [
        # java.util.UUID's text for the same two longs (printed by JDK 17)
        ("XRnvgspBQPmwTEAXBZaszg", "5d19ef82-ca41-40f9-b04c-40170596acce",
         (6708656464963125497, -5743144957182038834)),
        ("-rKdLLykRi2fb7UTIXfk3g", "fab29d2c-bca4-462d-9f6f-b5132177e4de",
         (-382070202904066515, -6958143805493615394)),
        ("_" * 21 + "w", "ffffffff-ffff-ffff-ffff-ffffffffffff", (-1, -1)),
    ],
)  # fmt: skip
def test_string_form_is_url_safe_base64_of_the_two_longs(
    text: str, java_uuid: str, longs: tuple[int, int]
) -> None:
    value = tid.from_string(text)
    assert str(value) == java_uuid
    assert tid.to_longs(value) == longs  # signed, as Kafka's getMost/LeastSignificantBits
    assert tid.from_longs(*longs) == value
    assert tid.to_string(value) == text
    assert tid.to_string(value.bytes) == text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("A" * 25, "Input string with prefix `" + "A" * 24 + "` is too long to be decoded as a base64 UUID"),
        ("😀" * 13, "Input string with prefix `" + "😀" * 12 + "` is too long to be decoded as a base64 "
         "UUID"),  # Java counts UTF-16 units
        ("A" * 23, "Input string `" + "A" * 23 + "` decoded as 17 bytes, which is not equal to the expected "
         "16 bytes of a base64-encoded UUID"),
        ("", "Input string `` decoded as 0 bytes, which is not equal to the expected 16 bytes of a "
         "base64-encoded UUID"),
        ("A" * 21, "Last unit does not have enough valid bits"),
        ("A" * 22 + "=", "Input byte array has wrong 4-byte ending unit"),
        ("A" * 20 + "=AAA", "Input byte array has wrong 4-byte ending unit"),
        ("XRnvgspBQPmwTEAXBZasz+", "Illegal base64 character 2b"),
        ("XRnvgspBQPmwTEAXBZasz/", "Illegal base64 character 2f"),
        ("XRnvgspBQPmwTEAXBZaszé", "Illegal base64 character -17"),
        ("XRnvgspBQPmwTEAXBZasz€", "Illegal base64 character 3f"),
        ("A", "Input byte[] should at least have 2 bytes for base64 bytes"),
        ("AA==A", "Input byte array has incorrect ending byte at 4"),
    ],
)  # fmt: skip
def test_from_string_refuses_with_kafkas_own_message(text: str, message: str) -> None:
    with pytest.raises(ValueError) as e:
        tid.from_string(text)
    assert str(e.value) == message


def test_from_string_accepts_what_the_jdk_accepts_beyond_the_printed_form() -> None:
    zero = tid.from_string(tid.ZERO_UUID)
    assert tid.from_string("A" * 22 + "==") == zero  # padded
    assert tid.from_string("A" * 21 + "B") == zero  # stray low bits of the last unit are dropped
    assert not tid.could_be_random("A" * 21 + "B", "2.8.2")


class _Queued(random.Random):
    """A Random whose 128-bit draws are given in advance."""

    def __init__(self, draws: list[int]) -> None:
        super().__init__(0)
        self.draws = draws

    def getrandbits(self, k: int) -> int:
        assert k == 128
        return self.draws.pop(0)


def test_random_uuid_redraws_a_leading_dash_from_3_2_on() -> None:
    dash = 0xF8 << 120  # first 6 bits 111110: base64 '-'
    plain = 0x12 << 120
    assert tid.random_uuid(_Queued([dash, plain]), "2.8.2").startswith("-")
    assert tid.random_uuid(_Queued([dash, plain]), "3.1.0").startswith("-")
    redrawn = tid.random_uuid(_Queued([dash, plain]), "3.2.0")
    assert redrawn.startswith("E")
    assert tid.random_uuid(_Queued([dash, plain]), "3.6.2") == redrawn


def test_random_uuid_is_a_seeded_version_4_uuid() -> None:
    a = [tid.random_uuid(random.Random(42), "3.6.2") for _ in range(2)]
    assert a[0] == a[1]  # same seed, same id
    rng = random.Random(7)
    ids = [tid.random_uuid(rng, "3.6.2") for _ in range(2000)]
    assert len(set(ids)) == len(ids)
    for text in ids:
        value = tid.from_string(text)
        assert tid.TOPIC_ID_RE.fullmatch(text)
        assert value.version == 4 and value.variant == uuid.RFC_4122
        assert not text.startswith("-")
        assert tid.could_be_random(text, "3.6.2")
    rng = random.Random(7)
    older = [tid.random_uuid(rng, "2.8.2") for _ in range(2000)]
    assert sum(t.startswith("-") for t in older) > 10  # about 1 in 64, all kept by 2.8.2


def test_could_be_random_tells_kafka_versions_apart_on_real_ids(real_evidence: Path) -> None:
    # topic `design` in snapshot.f7 of a Kafka 3.1.0 cluster (FORMATS.md Part B): a leading '-' that
    # 3.2+ would have re-drawn
    assert tid.could_be_random("-rKdLLykRi2fb7UTIXfk3g", "3.1.0")
    assert not tid.could_be_random("-rKdLLykRi2fb7UTIXfk3g", "3.6.2")
    assert not tid.could_be_random(tid.ZERO_UUID, "2.8.2")
    assert not tid.could_be_random(tid.METADATA_TOPIC_ID, "3.6.2")
    assert not tid.could_be_random(tid.to_string(uuid.uuid1()), "3.6.2")  # version 1
    assert not tid.could_be_random("not-a-topic-id", "3.6.2")
    found = {}
    for f in (real_evidence / "datadir-kafka-3.1").rglob("partition.metadata"):
        fields = dict(line.split(": ", 1) for line in f.read_text().splitlines())
        found[f.parent.name] = fields["topic_id"]
    assert found["design1-0"] == "RJI454yPScCX7IO2JuPZvQ"
    assert len(found) == 6
    for text in found.values():
        assert tid.to_string(tid.from_string(text)) == text
        assert tid.could_be_random(text, "3.1.0")


JAVA_DECODER = """
import java.nio.ByteBuffer;
import java.util.Base64;
public class KafkaUuid {
  public static void main(String[] a) throws Exception {
    java.io.BufferedReader r = new java.io.BufferedReader(new java.io.InputStreamReader(System.in, "UTF-8"));
    for (String s; (s = r.readLine()) != null; ) {
      try {  // the steps and messages of Uuid.fromString (clients/.../Uuid.java @3.6.2 l.116)
        if (s.length() > 24) throw new IllegalArgumentException("Input string with prefix `"
            + s.substring(0, 24) + "` is too long to be decoded as a base64 UUID");
        ByteBuffer b = ByteBuffer.wrap(Base64.getUrlDecoder().decode(s));
        if (b.remaining() != 16) throw new IllegalArgumentException("Input string `" + s + "` decoded as "
            + b.remaining() + " bytes, which is not equal to the expected 16 bytes of a base64-encoded UUID");
        System.out.println("OK " + new java.util.UUID(b.getLong(), b.getLong()));
      } catch (IllegalArgumentException e) { System.out.println("ERR " + e.getMessage()); }
    }
  }
}
"""


def test_from_string_agrees_with_the_jdk_decoder(tmp_path: Path) -> None:
    """Random near-misses of the 22-character form, decoded by java.util.Base64 and by us."""
    java, javac = shutil.which("java"), shutil.which("javac")
    if not (java and javac):
        pytest.skip("no JDK (java and javac) on PATH")
    (tmp_path / "KafkaUuid.java").write_text(JAVA_DECODER)
    subprocess.run([javac, "-d", str(tmp_path), str(tmp_path / "KafkaUuid.java")], check=True)
    rng = random.Random(3)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=+/ é"
    cases = [
        "",
        "A",
        "==",
        "AA==",
        "AAA=",
        "A" * 22 + "==",
        "A" * 22 + "=A",
        "😀",
        "😀" * 13,
        "A" * 20 + "😀",
    ]
    for _ in range(500):
        chars = list(tid.random_uuid(rng))
        for _ in range(rng.randint(0, 3)):
            op, pos = rng.choice("ids"), rng.randint(0, len(chars) - 1)
            if op == "i":
                chars.insert(pos, rng.choice(alphabet))
            elif op == "d":
                del chars[pos]
            else:
                chars[pos] = rng.choice(alphabet)
        cases.append("".join(chars))
    run = subprocess.run(
        [java, "-cp", str(tmp_path), "KafkaUuid"],
        input="\n".join(cases) + "\n", capture_output=True, text=True, encoding="utf-8", check=True,
    )  # fmt: skip
    answers = run.stdout.splitlines()
    assert len(answers) == len(cases)
    refused = 0
    for text, answer in zip(cases, answers, strict=True):
        try:
            ours = f"OK {tid.from_string(text)}"
        except ValueError as e:
            ours, refused = f"ERR {e}", refused + 1
        assert ours == answer, text
    assert 100 < refused < len(cases) - 50  # both outcomes were exercised
