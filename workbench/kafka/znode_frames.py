"""Kafka's znodes as Spark reads them: one schema per znode JSON the analyses parse (zkdata.py writes
them byte for byte), and the topic and partition frames of any ZooKeeper tree (a capture, or the tree as
of a zxid), so that every analysis reads `/brokers/topics/<t>` and its partitions' state the same way."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, IntegerType, MapType, StringType, StructField, StructType

from workbench.kafka.znodes import REASSIGN_PARTITIONS, STATE_PATH, TOPIC_PATH

_REPLICAS = MapType(StringType(), ArrayType(IntegerType()))
TOPIC_ZNODE = StructType(
    [
        StructField("version", IntegerType()),
        StructField("partitions", _REPLICAS),
        StructField("adding_replicas", _REPLICAS),
        StructField("removing_replicas", _REPLICAS),
        StructField("topic_id", StringType()),
    ]
)
# `/admin/reassign_partitions` (ReassignPartitionsZNode): the moves asked for and not yet taken up
REASSIGN_ZNODE = StructType(
    [
        StructField(
            "partitions",
            ArrayType(
                StructType(
                    [
                        StructField("topic", StringType()),
                        StructField("partition", IntegerType()),
                        StructField("replicas", ArrayType(IntegerType())),
                    ]
                )
            ),
        )
    ]
)
PARTITION_STATE = StructType(
    [
        StructField("leader", IntegerType()),
        StructField("leader_epoch", IntegerType()),
        StructField("controller_epoch", IntegerType()),
        StructField("isr", ArrayType(IntegerType())),
    ]
)


def controller_of(data: Column) -> Column:
    """The broker id `/controller` names (ControllerZNode: {"version":1,"brokerid":N,"timestamp":"ms"},
    3.4+ version 2 with kraftControllerEpoch); null where the JSON has none (zkdata_decode checks it)."""
    return F.get_json_object(data, "$.brokerid").try_cast("int")


def epoch_of(data: Column) -> Column:
    """The epoch `/controller_epoch` holds: its data is the number in decimal (ControllerEpochZNode); null
    where it is not one."""
    return data.try_cast("int")


def topics_in(znodes: DataFrame) -> DataFrame:
    """`/brokers/topics/<t>` in a ZooKeeper tree: topic, topic_id (null when the znode has none),
    znode_version (the JSON's), partitions map, adding/removing replicas, czxid, mzxid, ctime, mtime,
    data_version."""
    z = znodes.where(F.col("path").rlike(TOPIC_PATH))
    parsed = F.from_json("data", TOPIC_ZNODE)
    return z.select(
        F.regexp_extract("path", TOPIC_PATH, 1).alias("topic"),
        "path",
        parsed.alias("z"),
        "czxid",
        "mzxid",
        "ctime",
        "mtime",
        F.col("version").alias("data_version"),
    ).select(
        "topic",
        "path",
        F.col("z.topic_id").alias("topic_id"),
        F.col("z.version").alias("znode_version"),
        F.col("z.partitions").alias("assignment"),
        F.col("z.adding_replicas").alias("adding"),
        F.col("z.removing_replicas").alias("removing"),
        "czxid",
        "mzxid",
        "ctime",
        "mtime",
        "data_version",
    )


def partitions_in(znodes: DataFrame) -> DataFrame:
    """Every partition in a ZooKeeper tree: topic, topic_id, partition, replicas (assignment order: the
    first is the preferred leader), adding, removing, leader, leader_epoch, isr, controller_epoch,
    zk_version and the state znode's mzxid, mtime and path."""
    assigned = (
        topics_in(znodes)
        .select(
            "topic",
            "topic_id",
            F.explode("assignment").alias("p", "replicas"),
            "adding",
            "removing",
        )
        .select(
            "topic",
            "topic_id",
            F.col("p").cast("int").alias("partition"),
            "replicas",
            F.col("adding")[F.col("p")].alias("adding"),
            F.col("removing")[F.col("p")].alias("removing"),
        )
    )
    states = znodes.where(F.col("path").rlike(STATE_PATH)).select(
        F.regexp_extract("path", STATE_PATH, 1).alias("topic"),
        F.regexp_extract("path", STATE_PATH, 2).try_cast("int").alias("partition"),
        F.from_json("data", PARTITION_STATE).alias("s"),
        F.col("version").alias("zk_version"),
        F.col("mzxid").alias("state_mzxid"),
        F.col("mtime").alias("state_mtime"),
        F.col("path").alias("state_path"),
    )
    return assigned.join(states, ["topic", "partition"], "left").select(
        "topic",
        "topic_id",
        "partition",
        "replicas",
        "adding",
        "removing",
        F.col("s.leader").alias("leader"),
        F.col("s.leader_epoch").alias("leader_epoch"),
        F.col("s.isr").alias("isr"),
        F.col("s.controller_epoch").alias("controller_epoch"),
        "zk_version",
        "state_mzxid",
        "state_mtime",
        "state_path",
    )


def reassignment_requested(znodes: DataFrame) -> DataFrame:
    """Each move `/admin/reassign_partitions` asks for in a tree: topic, partition, replicas (the target)."""
    return (
        znodes.where(F.col("path") == REASSIGN_PARTITIONS)
        .select(F.explode(F.from_json("data", REASSIGN_ZNODE)["partitions"]).alias("r"))
        .select("r.topic", "r.partition", "r.replicas")
    )
