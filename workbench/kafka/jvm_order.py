"""The iteration order of the JVM maps Kafka writes as JSON, which is the key order of its znodes' data.

Kafka hands Jackson a Scala map `.asJava` (a `java.util.Properties` for `/config/...`), so the exact bytes
depend on that map's hashing: on the Scala version of the build (gradle.properties scalaVersion: 2.12.10
@2.5.1, 2.13.2 @2.6.0, 2.13.5 @2.8.2, 2.13.11 @3.6.2; _2.12 and _2.13 binaries are both published) and, for
Properties, on the JDK. Checked against real Kafka 3.1.0/Scala 2.12 snapshots and against scala-library
2.13.18 on a JVM.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

_M = 0xFFFFFFFF

# ---- Kafka versions and the Scala they are built with -------------------------------------------------

# Rules read at 2.5.1, 2.8.2, 3.6.2; later 3.x is not checked. 2.4 writes its znodes as 2.5 does: from 2.4.1
# to 2.5.1 ZkData.scala changed only its ACL znodes, and Json.scala, LeaderAndIsr.scala, Broker.scala and
# ReplicaAssignment.scala not at all (git diff --stat), on the same Scala 2.12 (gradle.properties 2.4.1).
# 1.1-2.3 write them as 2.4 does but for the topic znode (ZkData.scala 1.1.1..2.4.1: TopicZNode.encode,
# the reassignment znode and ACLs changed; Broker.scala and LeaderAndIsr.scala not in what they write).
SUPPORTED = ((1, 1, 0), (3, 7, 0))


def _v(kafka_version: str) -> tuple[int, int, int]:
    m = re.fullmatch(r"(\d+)\.(\d+)(?:\.(\d+))?\S*", kafka_version)
    if not m:
        raise ValueError(f"Kafka version must look like 2.8.2, got {kafka_version!r}")
    v = (int(m[1]), int(m[2]), int(m[3] or 0))
    if not SUPPORTED[0] <= v < SUPPORTED[1]:
        raise ValueError(f"znode rules are known for Kafka 1.1.0 to 3.6.x, not {kafka_version}")
    return v


def default_scala(kafka_version: str) -> str:
    """The Scala version of Kafka's default build at that version (gradle.properties scalaVersion: 2.11.12
    @1.1.1-2.1.1, 2.12.8 @2.2.2)."""
    v = _v(kafka_version)
    return "2.11" if v < (2, 2, 0) else "2.12" if v < (2, 6, 0) else "2.13"


def _scala(scala: str | None, kafka_version: str) -> str:
    """The Scala whose collections decide the order: 2.11's are 2.12's here (scala/scala git diff
    v2.11.12 v2.12.10 of immutable/HashMap.scala, TrieIterator.scala and mutable/HashTable.scala changes
    lookups, removal and `index`'s form, which gives the same bucket for every table of 2 or more)."""
    scala = scala or default_scala(kafka_version)
    if scala not in ("2.11", "2.12", "2.13"):
        raise ValueError(f"Kafka 1.1-3.6 is built with Scala 2.11, 2.12 or 2.13, not {scala}")
    return "2.12" if scala == "2.11" else scala


# ---- JVM hash and iteration order ---------------------------------------------------------------------


def _s32(x: int) -> int:
    x &= _M
    return x - (1 << 32) if x & 0x80000000 else x


def java_string_hash(s: str) -> int:
    """String.hashCode (over UTF-16 units); Scala's `##` on a String is the same."""
    h = 0
    units = s.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & _M
    return _s32(h)


def topic_partition_hash(topic: str, partition: int) -> int:
    """TopicPartition.hashCode (clients/.../common/TopicPartition.java l.46): 31 * (31 + p) + topic hash."""
    return _s32(31 * (31 + partition) + java_string_hash(topic))


def _improve(h: int) -> int:
    """scala/scala `collection/Hashing.scala` @v2.13.11 l.21 (2.12: `immutable/HashMap.scala` l.106)."""
    h &= _M
    h = (h + (~(h << 9) & _M)) & _M
    h ^= h >> 14
    h = (h + (h << 4)) & _M
    return h ^ (h >> 10)


def _hashes(keys: Sequence[Any], hashes: Sequence[int] | None) -> list[int]:
    return [h & _M for h in hashes] if hashes is not None else [java_string_hash(k) & _M for k in keys]


def scala_hashmap_order(
    keys: Sequence[Any], scala: str = "2.13", hashes: Sequence[int] | None = None
) -> list:
    """Iteration order of a Scala `immutable.HashMap` with these keys (given in insertion order).

    Both index a 32-way trie by 5-bit fragments of `improve(key.##)`, lowest bits first. 2.12
    (scala/scala `src/library/scala/collection/immutable/HashMap.scala` @v2.12.14, `makeHashTrieMap` l.327,
    `TrieIterator.scala`): a node's children, leaves and sub-tries alike, in fragment order, so keys sort by
    their fragment sequence. 2.13 (CHAMP, `immutable/HashMap.scala` @v2.13.11, `ChampCommon.scala` l.31
    `maskFrom`, l.107 `ChampBaseIterator`): a node yields its own single entries in fragment order first,
    then its sub-nodes in fragment order. Equal hashes keep insertion order (2.12 untested on a JVM).
    `hashes` overrides `##` for keys that are not strings.
    """
    items = list(zip(keys, (_improve(h) for h in _hashes(keys, hashes)), strict=True))
    if _scala(scala, "3.6.2") == "2.12":
        return [k for k, _ in sorted(items, key=lambda kh: [(kh[1] >> s) & 31 for s in range(0, 32, 5)])]

    def champ(group: list[tuple[Any, int]], shift: int) -> list:
        if shift >= 32:
            return [k for k, _ in group]
        buckets: dict[int, list[tuple[Any, int]]] = {}
        for kh in group:
            buckets.setdefault((kh[1] >> shift) & 31, []).append(kh)
        frags = sorted(buckets)
        out = [buckets[f][0][0] for f in frags if len(buckets[f]) == 1]
        for f in frags:
            if len(buckets[f]) > 1:
                out += champ(buckets[f], shift + 5)
        return out

    return champ(items, 0)


def _byteswap32(v: int) -> int:
    hc = int.from_bytes(((v * 0x9E3775CD) & _M).to_bytes(4, "big"), "little")
    return (hc * 0x9E3775CD) & _M


def scala_mutable_map_order(
    keys: Sequence[Any], scala: str = "2.13", applied: int = 0, hashes: Sequence[int] | None = None
) -> list:
    """Iteration order of a Scala `mutable.HashMap` built by `mutable.Map(<applied> pairs)` then `+=`
    (or `++=`: 2.13's `addAll` first calls `sizeHint`, which gives an empty map the table the adds would).

    2.12 (`collection/mutable/HashTable.scala` @v2.12.14: `addEntry0` l.152, `entriesIterator` l.212,
    `resize` l.256, `index` l.371, `improve` l.431 with `scala.util.hashing.byteswap32`): 16 buckets,
    index = top bits of rotateRight(byteswap32(##), 4), a new entry at the head of its bucket, the table
    doubles past 75% re-inserting from the last bucket, iteration from the last bucket down. 2.13
    (`mutable/HashMap.scala` @v2.13.11: `improveHash` l.66, `put0` l.238, `growTable` l.376,
    `tableSizeFor` l.423, `HashMap.from` l.601): h = ## ^ (## >>> 16), bucket h & (n - 1), buckets sorted by
    h, iteration from bucket 0; `mutable.Map(k1 -> v1, ...)` sizes the table for its pairs, `mutable.Map()`
    starts at 16, growth at 75%.
    """
    hs = _hashes(keys, hashes)
    if _scala(scala, "3.6.2") == "2.12":
        n = 16
        table: list[list[tuple[Any, int]]] = [[] for _ in range(16)]

        def index(h: int, n: int) -> int:
            r = _byteswap32(h)
            r = ((r >> 4) | (r << 28)) & _M
            return (r >> (33 - n.bit_length())) & (n - 1)

        for count, (k, h) in enumerate(zip(keys, hs, strict=True), 1):
            table[index(h, n)].insert(0, (k, h))
            if count > n * 750 // 1000:
                old, n = table, n * 2
                table = [[] for _ in range(n)]
                for bucket in reversed(old):
                    for kh in bucket:
                        table[index(kh[1], n)].insert(0, kh)
        return [k for bucket in reversed(table) for k, _ in bucket]

    def size_for(cap: int) -> int:
        return min(1 << (max(cap - 1, 4).bit_length()), 1 << 30)

    n = size_for(int((applied + 1) / 0.75)) if applied else 16
    for count in range(applied, len(keys)):
        if count + 1 >= int(n * 0.75):
            n *= 2
    improved = [_s32(h ^ (h >> 16)) for h in hs]
    order = sorted(range(len(keys)), key=lambda i: (improved[i] & (n - 1), improved[i], i))
    return [keys[i] for i in order]


def java_hashmap_order(keys: Sequence[str], capacity: int = 16) -> list[str]:
    """Iteration order of a `java.util.HashMap` or `HashSet` (e.g. `Collectors.toMap`; a ZooKeeper
    DataNode's children, `new HashSet<String>(8)`), keys in insertion order.

    OpenJDK `java/util/HashMap.java`: bin (h ^ h >>> 16) & (n - 1), n = `capacity` (a power of two)
    doubling past 75%, a bin keeps insertion order through resizes. Tree bins (8+ collisions) are not
    modelled.
    """
    n = capacity
    while len(keys) > n * 3 // 4:
        n *= 2
    spread = [(h ^ (h >> 16)) & (n - 1) for h in _hashes(keys, None)]
    return [keys[i] for i in sorted(range(len(keys)), key=lambda i: (spread[i], i))]


def java_properties_order(keys: Sequence[str], jdk: int, for_each: bool = False) -> list[str]:
    """Order in which a `java.util.Properties` filled in this order is serialized (or `forEach`-ed).

    JDK 9+ (`java/util/Properties.java` keeps `new ConcurrentHashMap<>(8)`; `ConcurrentHashMap.putVal`,
    `addCount`, `transfer`): 16 bins, grows at 12 entries, new entries at a bin's tail, a resize keeps each
    bin's tail run and puts the rest, reversed, in front of it; iteration by bin, ascending.
    JDK 8 (Properties extends `java/util/Hashtable.java`): 11 buckets, `(hash & 0x7FFFFFFF) % n`, rehash to
    2n + 1 at 75%, new entries at the head; `entrySet` (what Jackson iterates) runs from the last bucket
    down, `forEach` from the first up. Tree bins are not modelled.
    """
    hs = _hashes(keys, None)
    if jdk >= 9:
        n = 16
        bins: list[list[tuple[str, int]]] = [[] for _ in range(16)]
        for count, (k, h) in enumerate(zip(keys, hs, strict=True), 1):
            sp = (h ^ (h >> 16)) & 0x7FFFFFFF
            bins[sp & (n - 1)].append((k, sp))
            if count >= n - (n >> 2):
                new: list[list[tuple[str, int]]] = [[] for _ in range(2 * n)]
                for i, b in enumerate(bins):
                    run = len(b) - 1
                    while run > 0 and b[run - 1][1] & n == b[-1][1] & n:
                        run -= 1
                    for kh in b[:run]:  # prepended in front of the kept tail run
                        new[i + (kh[1] & n)].insert(0, kh)
                    for kh in b[run:]:
                        new[i + (kh[1] & n)].append(kh)
                n, bins = 2 * n, new
        return [k for b in bins for k, _ in b]
    n = 11
    table: list[list[tuple[str, int]]] = [[] for _ in range(11)]
    for count, (k, h) in enumerate(zip(keys, hs, strict=True)):
        if count >= int(n * 0.75):
            old, n = table, 2 * n + 1
            table = [[] for _ in range(n)]
            for bucket in reversed(old):
                for kh in bucket:
                    table[(kh[1] & 0x7FFFFFFF) % n].insert(0, kh)
        table[(h & 0x7FFFFFFF) % n].insert(0, (k, h))
    return [k for b in (table if for_each else reversed(table)) for k, _ in b]


def scala_set_order(keys: Sequence[Any], scala: str, mutable: bool = False,
                    hashes: Sequence[int] | None = None) -> list | None:  # fmt: skip
    """Iteration order of a Scala `Set` (Set1-Set4, then a HashSet with the HashMap's trie) or of a
    `mutable.Set` (2.13: the mutable.HashMap's buckets). None for 2.12's mutable.HashSet, an
    open-addressing FlatHashTable not modelled here."""
    if not mutable:
        return scala_map_order(keys, scala, hashes)
    return scala_mutable_map_order(keys, scala, hashes=hashes) if scala == "2.13" else None


def scala_map_order(keys: Sequence[Any], scala: str = "2.13", hashes: Sequence[int] | None = None) -> list:
    """Iteration order of a Scala immutable `Map`: Map1..Map4 keep insertion order, larger ones hash."""
    return list(keys) if len(keys) <= 4 else scala_hashmap_order(keys, scala, hashes)


def topic_assignment_order(topic: str, partitions: Sequence[int], scala: str) -> list[int]:
    """The order Kafka iterates a new topic's assignment when it writes the topic znode.

    `AdminZkClient.writeTopicPartitionAssignment` (@2.5.1 l.140, @2.8.2 l.163, @3.6.2 l.171) makes it an
    immutable `Map[TopicPartition, _]` (TopicPartition.hashCode); where keys of the `partitions` JSON map
    share a bucket, that order shows. The controller minting a topic id (`KafkaZkClient.setTopicIds`)
    re-encodes the map `TopicZNode.decode` built, which is this order too for more than 4 partitions;
    for fewer, the order of the JSON it read, which shows only under Scala 2.12 and so never with ids.
    """
    hashes = [topic_partition_hash(topic, p) for p in partitions]
    return scala_map_order(list(partitions), scala, hashes)


def controller_assignment_order(topic: str, partitions: Sequence[int], kafka_version: str,
                                scala: str | None = None) -> list[int]:  # fmt: skip
    """The order the controller iterates a topic's assignment when a reassignment rewrites its znode.

    `KafkaController.updateReplicaAssignmentForPartition` takes `ControllerContext.
    partitionFullReplicaAssignmentForTopic`: the context's `mutable.Map[Int, _]` (here filled in
    partition order; an Int hashes to itself) mapped into a mutable map of TopicPartition, then `.toMap`.
    Up to 2.5 it updates that immutable map in place (@2.5.1 l.850); from 2.6 it copies it into a
    `mutable.Map()` first (@2.6.0 l.849, @2.8.2 l.1030, @3.6.2 l.1085). Before 2.4 the context holds one
    `mutable.Map[TopicPartition, _]` of every topic, which it `filter`s to the topic (@1.1.1 l.784; keys
    taken here in partition order: where two share a bucket, that map's own order would decide). Under
    Scala 2.13 the JSON map's own hash order hides all of this; under 2.12 it shows where partitions share
    a bucket.
    """
    scala = _scala(scala, kafka_version)

    def hashes(ps: list[int]) -> list[int]:
        return [topic_partition_hash(topic, p) for p in ps]

    if _v(kafka_version) < (2, 4, 0):  # `filter` of the context's mutable map of every topic, then `.toMap`
        filtered = scala_mutable_map_order(sorted(partitions), scala, hashes=hashes(sorted(partitions)))
        return scala_map_order(filtered, scala, hashes(filtered))
    ints = scala_mutable_map_order(sorted(partitions), scala, hashes=sorted(partitions))
    mutable = scala_mutable_map_order(ints, scala, hashes=hashes(ints))
    full = scala_map_order(mutable, scala, hashes(mutable))
    if _v(kafka_version) < (2, 6, 0):
        return full
    return scala_mutable_map_order(full, scala, hashes=hashes(full))
