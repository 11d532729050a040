"""Kafka's rules for topic names: what is legal, which names collide, which are internal, and dir-name limits.

Sources, apache/kafka:
- `clients/src/main/java/org/apache/kafka/common/internals/Topic.java` @2.5.1 = @2.8.2 (identical files):
  constants L27-34, validate L36-47, isInternal L49-51, hasCollisionChars L59-61, hasCollision L70-72,
  containsValidPattern L77-88. @3.6.2: constants L29-41, validate L43-47, detectInvalidTopic L49-62,
  isValid L64-67, validate(name, logPrefix, ...) L69-74, isInternal L76-78, hasCollisionChars L86-88,
  unifyCollisionChars L97-99, hasCollision L108-110, containsValidPattern L115-126.
  The rules are the same at all tags; the wording of validate changed in 3.4.0 (commit c5745d2845c), and
  unifyCollisionChars appeared in 3.3.0 (KAFKA-13743). isInternal is the same two topics at every tag.
- `core/src/main/scala/kafka/zk/AdminZkClient.scala` validateTopicCreate (2.5.1 L102-119, 2.8.2 L124-141,
  3.6.2 L128-147; the marked-for-deletion check is 3.1.0+, KAFKA-13175).

Directory names: Kafka checks no dir-name length when a topic is created; the 249 limit itself is the rule
("255 characters ... a dash and a potentially 5 digit long partition id", docs/ops.html @2.5.1 L38, @2.8.2 and
@3.6.2 L35; KAFKA-3219). A -delete dir (and -stray, 3.6) cuts the topic so the name stays within 255
(Log.scala logDeleteDirName @2.5.1 L2501, @2.8.2 L2664-2669; LocalLog.scala
logDirNameWithSuffixCappedLength @3.6.2 L655-660, KAFKA-4893). A -future dir is not cut: AlterReplicaLogDirs
refuses a partition whose future dir name would pass 255 (ReplicaManager.scala @2.5.1 L601-602,
@2.8.2 L741-742, @3.6.2 L1047-1048).
"""

from __future__ import annotations

from collections.abc import Iterable

GROUP_METADATA_TOPIC_NAME = "__consumer_offsets"
TRANSACTION_STATE_TOPIC_NAME = "__transaction_state"
CLUSTER_METADATA_TOPIC_NAME = "__cluster_metadata"  # 3.x constant (KRaft); not in INTERNAL_TOPICS
INTERNAL_TOPICS = frozenset({GROUP_METADATA_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME})
LEGAL_CHARS = "[a-zA-Z0-9._-]"
MAX_NAME_LENGTH = 249
MAX_DIR_NAME_LENGTH = 255  # the file-system limit Kafka designs for
UNIQUE_ID_LENGTH = 32  # UUID.randomUUID without its dashes, in -delete/-future/-stray dir names

_VALID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


class InvalidTopicException(ValueError):
    """org.apache.kafka.common.errors.InvalidTopicException."""


class TopicExistsException(ValueError):
    """org.apache.kafka.common.errors.TopicExistsException."""


def _version(version: str) -> tuple[int, int]:
    """(major, minor) of a Kafka version such as "2.8.2"."""
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def _java_length(s: str) -> int:
    """String.length() in Java: UTF-16 code units, so a character outside the BMP counts twice."""
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def contains_valid_pattern(topic: str) -> bool:
    """Topic.containsValidPattern: only ASCII letters, digits, '.', '_' and '-' (not Unicode letters)."""
    return all(c in _VALID_CHARS for c in topic)


def invalid_topic_message(topic: str, version: str = "2.8.2") -> str | None:
    """The InvalidTopicException message Topic.validate gives for this name at this Kafka version, or None."""
    new = _version(version) >= (3, 4)  # 'Topic name is invalid: ...' since 3.4.0
    if not topic:
        if new:
            return "Topic name is invalid: the empty string is not allowed"
        return "Topic name is illegal, it can't be empty"
    if topic in (".", ".."):
        if new:
            return f"Topic name is invalid: '{topic}' is not allowed"
        return 'Topic name cannot be "." or ".."'
    if _java_length(topic) > MAX_NAME_LENGTH:
        if new:
            return (
                f"Topic name is invalid: the length of '{topic}' is longer than the max allowed length "
                f"{MAX_NAME_LENGTH}"
            )
        return (
            f"Topic name is illegal, it can't be longer than {MAX_NAME_LENGTH} characters, "
            f"topic name: {topic}"
        )
    if not contains_valid_pattern(topic):
        if new:
            return (
                f"Topic name is invalid: '{topic}' contains one or more characters other than "
                "ASCII alphanumerics, '.', '_' and '-'"
            )
        return (
            f'Topic name "{topic}" is illegal, it contains a character other than '
            "ASCII alphanumerics, '.', '_' and '-'"
        )
    return None


def is_valid(topic: str) -> bool:
    """Topic.isValid (@3.6.2); the same answer at every version, only the wording of a refusal changed."""
    return invalid_topic_message(topic) is None


def validate(topic: str, version: str = "2.8.2") -> None:
    """Topic.validate: raise InvalidTopicException with Kafka's message for a name it refuses."""
    message = invalid_topic_message(topic, version)
    if message is not None:
        raise InvalidTopicException(message)


def is_internal(topic: str) -> bool:
    """Topic.isInternal: __consumer_offsets and __transaction_state (2.5.1 to 3.6.2)."""
    return topic in INTERNAL_TOPICS


def has_collision_chars(topic: str) -> bool:
    """Topic.hasCollisionChars: '.' and '_' map to the same metric name, so such names may collide."""
    return "_" in topic or "." in topic


def unify_collision_chars(topic: str) -> str:
    """Topic.unifyCollisionChars: the name with every '.' as '_', used only to compare names."""
    return topic.replace(".", "_")


def has_collision(topic_a: str, topic_b: str) -> bool:
    """Topic.hasCollision: equal once '.' and '_' are unified (a name collides with itself)."""
    return unify_collision_chars(topic_a) == unify_collision_chars(topic_b)


def validate_topic_create(
    topic: str,
    all_topics: Iterable[str],
    *,
    topic_exists: bool | None = None,
    marked_for_deletion: bool = False,
    version: str = "2.8.2",
) -> None:
    """The name checks of AdminZkClient.validateTopicCreate, in Kafka's order.

    all_topics are the children of /brokers/topics; topic_exists is whether /brokers/topics/<topic> exists
    (read separately in Kafka, so a concurrent creation can make them disagree; default: topic in all_topics).
    marked_for_deletion (/admin/delete_topics/<topic>) counts from 3.1.0. Colliding topics are listed in the
    order given (Kafka prints its Set's order). The replica checks follow, in
    assignment.validate_topic_create_assignment.
    """
    validate(topic, version)
    topics = list(all_topics)
    if marked_for_deletion and _version(version) >= (3, 1):
        raise TopicExistsException(f"Topic '{topic}' is marked for deletion.")
    if topic_exists if topic_exists is not None else topic in topics:
        raise TopicExistsException(f"Topic '{topic}' already exists.")
    if has_collision_chars(topic):
        if topic in topics:
            raise TopicExistsException(f"Topic '{topic}' already exists.")
        colliding = [t for t in topics if has_collision(topic, t)]
        if colliding:
            raise InvalidTopicException(
                f"Topic '{topic}' collides with existing topics: {', '.join(colliding)}"
            )


def log_dir_name(topic: str, partition: int) -> str:
    """Log.logDirName / LocalLog.logDirName: the live partition dir, "<topic>-<partition>"."""
    return f"{topic}-{partition}"


def log_dir_name_with_suffix_capped_length(topic: str, partition: int, unique_id: str, suffix: str) -> str:
    """A -delete (3.6: and -stray) dir: "<topic>-<partition>.<uniqueId><suffix>", the topic cut to fit 255."""
    full_suffix = f"-{partition}.{unique_id}{suffix}"
    return topic[: min(len(topic), MAX_DIR_NAME_LENGTH - len(full_suffix))] + full_suffix


def log_future_dir_name_length(topic: str, partition: int) -> int:
    """The length of "<topic>-<partition>.<uniqueId>-future" (Log.logFutureDirName), never cut."""
    return len(log_dir_name(topic, partition)) + 1 + UNIQUE_ID_LENGTH + len("-future")


def validate_log_future_dir_name(topic: str, partition: int) -> None:
    """ReplicaManager.alterReplicaLogDirs: a partition whose future dir name passes 255 cannot move dirs."""
    if log_future_dir_name_length(topic, partition) > MAX_DIR_NAME_LENGTH:
        raise InvalidTopicException("The topic name is too long.")
