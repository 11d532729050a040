"""Topic-name rules give the answers Kafka's own tests assert, in each version's wording.

Vectors are copied from apache/kafka tests (file, tag, test named beside each).
"""

from __future__ import annotations

import random
import re
import string
import uuid

import pytest

from workbench.kafka import logdir
from workbench.kafka.names import (
    CLUSTER_METADATA_TOPIC_NAME,
    GROUP_METADATA_TOPIC_NAME,
    MAX_DIR_NAME_LENGTH,
    MAX_NAME_LENGTH,
    TRANSACTION_STATE_TOPIC_NAME,
    InvalidTopicException,
    TopicExistsException,
    contains_valid_pattern,
    has_collision,
    has_collision_chars,
    invalid_topic_message,
    is_internal,
    is_valid,
    log_dir_name,
    log_dir_name_with_suffix_capped_length,
    unify_collision_chars,
    validate,
    validate_log_future_dir_name,
    validate_topic_create,
)

VERSIONS = ["2.5.1", "2.8.2", "3.6.2"]


# TopicTest.java (all tags), shouldAcceptValidTopicNames; the 249-char name is TestUtils.randomString(249).
@pytest.mark.parametrize("version", VERSIONS)
def test_accept_valid_topic_names(version: str) -> None:
    for name in ["valid", "TOPIC", "nAmEs", "ar6", "VaL1d", "_0-9_.", "..."]:
        validate(name, version)
        assert is_valid(name)
    for seed in range(20):
        rng = random.Random(seed)
        validate("".join(rng.choices(string.ascii_letters + string.digits, k=249)), version)


# TopicTest.java (all tags), shouldThrowOnInvalidTopicNames
@pytest.mark.parametrize("version", VERSIONS)
def test_throw_on_invalid_topic_names(version: str) -> None:
    for name in ["", "foo bar", "..", "foo:bar", "foo=bar", ".", "a" * 250]:
        with pytest.raises(InvalidTopicException):
            validate(name, version)
        assert not is_valid(name)


# TopicTest.java (all tags), shouldRecognizeInvalidCharactersInTopicNames
def test_recognize_invalid_characters() -> None:
    for c in ["/", "\\", ",", "\u0000", ":", '"', "'", ";", "*", "?", " ", "\t", "\r", "\n", "="]:
        assert not contains_valid_pattern("Is " + c + "illegal")
    assert contains_valid_pattern(string.ascii_letters + string.digits + "._-")
    assert not contains_valid_pattern("caf\u00e9")  # letters, but not ASCII ones


# TopicTest.java (all tags), testTopicHasCollisionChars
def test_topic_has_collision_chars() -> None:
    for topic in ["start", "end", "middle", "many"]:
        assert not has_collision_chars(topic)
    for topic in [".start", "end.", "mid.dle", ".ma.ny.", "_start", "end_", "mid_dle", "_ma_ny."]:
        assert has_collision_chars(topic)


# TopicTest.java @3.6.2, testUnifyCollisionChars
def test_unify_collision_chars() -> None:
    assert unify_collision_chars("topic") == "topic"
    assert unify_collision_chars(".topic") == "_topic"
    assert unify_collision_chars("_topic") == "_topic"
    assert unify_collision_chars("_.topic") == "__topic"


# TopicTest.java (all tags), testTopicHasCollision
def test_topic_has_collision() -> None:
    period = [".topic", "to.pic", "topic.", "topic"]
    underscore = ["_topic", "to_pic", "topic_", "topic"]
    for topic in period + underscore:
        assert has_collision(topic, topic)
    for a, b in zip(period, underscore, strict=True):
        assert has_collision(a, b)
    for a, b in zip(period, reversed(underscore), strict=True):
        assert not has_collision(a, b)


# ReplicationControlManagerTest.java testValidateNewTopicNames @2.8.2 and @3.6.2 (the Topic.validate text);
# ControllerConfigurationValidatorTest.scala @3.6.2 testInvalidTopicNameRejected.
def test_messages_as_kafka_tests_assert_them() -> None:
    assert invalid_topic_message("", "2.8.2") == "Topic name is illegal, it can't be empty"
    assert invalid_topic_message(".", "2.8.2") == 'Topic name cannot be "." or ".."'
    assert invalid_topic_message("woo", "2.8.2") is None
    assert invalid_topic_message("", "3.6.2") == "Topic name is invalid: the empty string is not allowed"
    assert invalid_topic_message(".", "3.6.2") == "Topic name is invalid: '.' is not allowed"
    assert invalid_topic_message("woo", "3.6.2") is None
    assert invalid_topic_message("(<-invalid->)", "3.6.2") == (
        "Topic name is invalid: '(<-invalid->)' contains one or more characters other than "
        "ASCII alphanumerics, '.', '_' and '-'"
    )


# The other texts, from Topic.java @2.8.2 L40-46 and @3.6.2 L54-60 (no Kafka test asserts them).
def test_messages_from_topic_java() -> None:
    long_name = "x" * 250
    with pytest.raises(InvalidTopicException) as e:
        validate(long_name, "2.5.1")
    assert (
        str(e.value)
        == f"Topic name is illegal, it can't be longer than 249 characters, topic name: {long_name}"
    )
    assert invalid_topic_message(long_name, "3.6.2") == (
        f"Topic name is invalid: the length of '{long_name}' is longer than the max allowed length 249"
    )
    assert invalid_topic_message("..", "3.6.2") == "Topic name is invalid: '..' is not allowed"
    assert invalid_topic_message("foo bar", "2.8.2") == (
        'Topic name "foo bar" is illegal, it contains a character other than '
        "ASCII alphanumerics, '.', '_' and '-'"
    )
    # Java counts UTF-16 units: 125 characters outside the BMP are 250 long, refused for length first.
    astral = "\U0001d49c" * 125
    assert len(astral) <= MAX_NAME_LENGTH
    assert "longer than the max allowed length" in str(invalid_topic_message(astral, "3.6.2"))


def test_internal_topics() -> None:
    """Topic.isInternal, the same two names at 2.5.1, 2.8.2 and 3.6.2; __cluster_metadata is not one."""
    assert is_internal(GROUP_METADATA_TOPIC_NAME) and is_internal(TRANSACTION_STATE_TOPIC_NAME)
    assert GROUP_METADATA_TOPIC_NAME == "__consumer_offsets"
    assert TRANSACTION_STATE_TOPIC_NAME == "__transaction_state"
    assert not is_internal(CLUSTER_METADATA_TOPIC_NAME)
    assert not is_internal("__consumer_offsets_") and not is_internal("orders")


# AdminZkClientTest.scala (all tags): testTopicCreationWithCollision, testMockedConcurrentTopicCreation,
# testTopicCreationInZK (a second creation is TopicExistsException).
@pytest.mark.parametrize("version", VERSIONS)
def test_validate_topic_create(version: str) -> None:
    with pytest.raises(InvalidTopicException) as e:
        validate_topic_create("test_topic", ["test.topic"], version=version)
    assert str(e.value) == "Topic 'test_topic' collides with existing topics: test.topic"
    with pytest.raises(TopicExistsException, match=r"^Topic 'test\.topic' already exists\.$"):
        validate_topic_create(
            "test.topic",
            ["some.topic", "test.topic", "some.other.topic"],
            topic_exists=False,
            version=version,
        )
    with pytest.raises(TopicExistsException):
        validate_topic_create("test", ["test"], version=version)
    with pytest.raises(InvalidTopicException):
        validate_topic_create("", [], version=version)
    validate_topic_create("test.topic", ["test-topic", "testtopic"], version=version)


def test_marked_for_deletion_counts_from_3_1() -> None:
    """AdminZkClient.validateTopicCreate @3.6.2 L132-134 (KAFKA-13175); @2.8.2 has no such check."""
    with pytest.raises(TopicExistsException, match=r"^Topic 'gone' is marked for deletion\.$"):
        validate_topic_create("gone", ["gone"], marked_for_deletion=True, version="3.6.2")
    with pytest.raises(TopicExistsException, match="already exists"):
        validate_topic_create("gone", ["gone"], marked_for_deletion=True, version="2.8.2")


# LogTest.scala @2.5.1/@2.8.2 and LocalLogTest.scala @3.6.2, testLogDeleteDirName
def test_log_delete_dir_name() -> None:
    name1 = log_dir_name_with_suffix_capped_length("foo", 3, uuid.uuid4().hex, "-delete")
    assert len(name1) <= MAX_DIR_NAME_LENGTH
    assert re.fullmatch(r"foo-3\.[0-9a-z]{32}-delete", name1)
    name2 = log_dir_name_with_suffix_capped_length("n" + "o" * 248, 5, uuid.uuid4().hex, "-delete")
    assert len(name2) == 255
    assert re.fullmatch(r"n[o]{212}-5\.[0-9a-z]{32}-delete", name2)
    for name in (name1, name2):
        m = re.match(logdir.SUFFIXED_DIR, name)
        assert m is not None and m.group(4) == "delete"


# PlaintextAdminIntegrationTest.scala (2.5.1, 2.8.2, 3.6.2), testLongTopicNames: 249 x's is created, 250
# refused, and moving its partition 0 to another log dir is refused with InvalidTopicException.
def test_long_topic_names() -> None:
    validate("x" * 249)
    with pytest.raises(InvalidTopicException):
        validate("x" * 250)
    with pytest.raises(InvalidTopicException, match=r"^The topic name is too long\.$"):
        validate_log_future_dir_name("x" * 249, 0)
    validate_log_future_dir_name("x" * 10, 0)
    for length in range(200, 230):  # refused exactly when the real "-future" dir name would pass 255
        topic = "x" * length
        future = f"{log_dir_name(topic, 7)}.{uuid.uuid4().hex}-future"
        assert re.fullmatch(logdir.SUFFIXED_DIR, future)
        if len(future) > MAX_DIR_NAME_LENGTH:
            with pytest.raises(InvalidTopicException):
                validate_log_future_dir_name(topic, 7)
        else:
            validate_log_future_dir_name(topic, 7)
    # docs/ops.html: 249 leaves room for a dash and a 5-digit partition id within 255.
    assert len(log_dir_name("x" * 249, 99999)) == MAX_DIR_NAME_LENGTH
    assert len(log_dir_name("x" * 249, 100000)) > MAX_DIR_NAME_LENGTH
