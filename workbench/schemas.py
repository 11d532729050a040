"""Every DataFrame schema of the workbench, each column documented. Names are Kafka's and ZooKeeper's own.

`file` columns are bundle-relative paths (`brokers/2/logs/state-change.log`) or, for loose inputs, the
path given. `broker_id` is the broker whose evidence it is (from the bundle's `brokers/<id>/` folder or a
log dir's meta.properties), null when unknown. Log timestamps are the broker's wall clock as written
(log4j prints no zone); they are stored as if UTC, the session time zone.
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)


def _schema(*fields: tuple[str, object, str]) -> StructType:
    return StructType(
        [StructField(name, dtype, True, {"comment": doc}) for name, dtype, doc in fields]  # type: ignore[arg-type]
    )


LOG_EVENTS = _schema(
    ("broker_id", IntegerType(), "broker whose log this is"),
    ("file", StringType(), "log file it came from"),
    ("log", StringType(), "appender file: server, controller, state-change, log-cleaner, ..."),
    ("line_no", LongType(), "1-based physical line where the event starts"),
    ("lines", IntegerType(), "physical lines the event spans (message continuations, stack trace)"),
    ("ts", TimestampType(), "the %d of the layout, broker wall clock"),
    ("level", StringType(), "TRACE, DEBUG, INFO, WARN, ERROR or FATAL"),
    ("logger", StringType(), "the %c of the layout, e.g. kafka.controller.KafkaController"),
    (
        "context",
        StringType(),
        "the logIdent prefix without brackets, e.g. 'Controller id=1 epoch=5'",
    ),
    ("message", StringType(), "the message without context and logger; multi-line if it was"),
    ("event", StringType(), "catalog kind (workbench.kafka.messages) or null"),
    ("topic", StringType(), "topic the event is about, when it names one"),
    ("partition", IntegerType(), "partition the event is about, when it names one"),
    ("attrs", MapType(StringType(), StringType()), "the template's other fields, and 'exception'"),
    ("stack_trace", StringType(), "throwable printed after the line, if any"),
)

DATADIR_FILES = _schema(
    ("broker_id", IntegerType(), "broker that owns the log dir"),
    ("log_dir", StringType(), "the log dir's folder in the bundle ('0', '1', ...) or its name"),
    ("path", StringType(), "path relative to the log dir, as in listing.tsv"),
    ("dir_name", StringType(), "partition dir name, null for files at the log dir root"),
    ("topic", StringType(), "topic parsed from dir_name as Kafka does"),
    ("partition", IntegerType(), "partition parsed from dir_name"),
    ("dir_state", StringType(), "live, delete, future, stray, or unrecognized (Kafka refuses it)"),
    ("file", StringType(), "file name inside the dir; null for a dir a pasted listing shows (ls -l)"),
    ("size", LongType(), "bytes; null where the listing cannot give them (du's blocks, ls -h)"),
    ("mtime", TimestampType(), "modification time; null where the listing's zone or year is not known"),
    ("mtime_precision", StringType(), "what the listing gave: subsecond, second, minute or day"),
    ("mtime_text", StringType(), "the time as a pasted listing printed it (null for listing.tsv)"),
    ("listed_as", StringType(), "find -printf (listing.tsv), ls -l, find -ls, du or stat"),
    ("listing", StringType(), "the listing file the row comes from"),
    ("line_no", LongType(), "its line in a pasted listing (null for listing.tsv)"),
    ("taken_at", TimestampType(), "when a pasted listing was taken, from the manifest; null: unknown"),
)

PARTITION_DESCRIPTIONS = _schema(
    ("topic", StringType(), "as kafka-topics --describe printed it"),
    ("topic_id", StringType(), "its TopicId (2.8+); null where the output has none or no topic line"),
    ("partition", IntegerType(), "null on a topic line printed alone (--topics-with-overrides)"),
    ("leader", IntegerType(), "null for 'none' (no leader; -1 is kept as printed before 2.4)"),
    ("replicas", ArrayType(IntegerType()), "in the order printed: the assignment's"),
    ("isr", ArrayType(IntegerType()), "the in-sync replicas"),
    ("adding_replicas", ArrayType(IntegerType()), "a reassignment's (2.6+); null where not printed"),
    ("removing_replicas", ArrayType(IntegerType()), "a reassignment's (2.6+); null where not printed"),
    ("elr", ArrayType(IntegerType()), "eligible leader replicas (3.8+); null where not printed or N/A"),
    ("last_known_elr", ArrayType(IntegerType()), "(3.8+); null where not printed or N/A"),
    ("marked_for_deletion", BooleanType(), "true where printed (0.11-2.8 over ZooKeeper); else null"),
    (
        "shown_by",
        StringType(),
        "the partition filter its command named (unavailable-partitions, under-replicated-partitions, ...); "
        "null: none, or the command was not pasted",
    ),
    ("partition_count", IntegerType(), "from the topic line; null where the output has none"),
    ("replication_factor", IntegerType(), "from the topic line"),
    (
        "configs",
        MapType(StringType(), StringType()),
        "from the topic line: overrides (and, over a broker, the broker's own non-default values)",
    ),
    ("file", StringType(), "the pasted file"),
    ("line_no", LongType(), "its line"),
    ("taken_at", TimestampType(), "when it was taken, from the manifest; null: unknown"),
)

LOG_DIR_DESCRIPTIONS = _schema(
    ("broker_id", IntegerType(), "the broker kafka-log-dirs --describe asked"),
    ("log_dir", StringType(), "the log dir's path on the broker"),
    ("error", StringType(), "the failed dir's exception class (KafkaStorageException: offline); null: none"),
    ("topic", StringType(), "of a replica in the dir; null for a dir printed with none"),
    ("partition", IntegerType(), "of the replica"),
    ("size", LongType(), "bytes of the replica's log"),
    (
        "offset_lag",
        LongType(),
        "a future replica's lag behind the current one; 0 for a current one, -1 unknown",
    ),
    (
        "is_future",
        BooleanType(),
        "a replica being moved into this dir (kafka-reassign-partitions between dirs)",
    ),
    ("file", StringType(), "the pasted file"),
    ("line_no", LongType(), "its line (the JSON is one line)"),
    ("taken_at", TimestampType(), "when it was taken, from the manifest; null: unknown"),
)

PARTITION_METADATA = _schema(
    ("broker_id", IntegerType(), "broker that owns the log dir"),
    ("log_dir", StringType(), "log dir folder"),
    ("dir_name", StringType(), "partition dir"),
    ("topic", StringType(), "topic from the dir name"),
    ("partition", IntegerType(), "partition from the dir name"),
    ("dir_state", StringType(), "live, delete, future or stray"),
    ("version", IntegerType(), "file format version (0)"),
    ("topic_id", StringType(), "as Kafka prints it: 22 chars of url-safe base64"),
    ("topic_uuid", StringType(), "the same 16 bytes as a canonical UUID"),
    ("file", StringType(), "the partition.metadata file"),
)

LEADER_EPOCHS = _schema(
    ("broker_id", IntegerType(), "broker that owns the log dir"),
    ("log_dir", StringType(), "log dir folder"),
    ("dir_name", StringType(), "partition dir"),
    ("topic", StringType(), "topic from the dir name"),
    ("partition", IntegerType(), "partition from the dir name"),
    ("dir_state", StringType(), "live, delete, future or stray"),
    ("epoch", IntegerType(), "leader epoch"),
    ("start_offset", LongType(), "first offset written in that epoch"),
    ("file", StringType(), "the leader-epoch-checkpoint file"),
    ("line_no", IntegerType(), "line of the entry in the file"),
)

CHECKPOINTS = _schema(
    ("broker_id", IntegerType(), "broker that owns the log dir"),
    ("log_dir", StringType(), "log dir folder"),
    ("topic", StringType(), "topic of the entry"),
    ("partition", IntegerType(), "partition of the entry"),
    ("kind", StringType(), "replication-offset (high watermark), recovery-point-offset, ..."),
    ("offset", LongType(), "the checkpointed offset"),
    ("file", StringType(), "the checkpoint file"),
    ("line_no", IntegerType(), "line of the entry in the file"),
)

META_PROPERTIES = _schema(
    ("broker_id", IntegerType(), "broker that owns the log dir (bundle folder)"),
    ("log_dir", StringType(), "log dir folder"),
    ("version", IntegerType(), "0 = ZooKeeper mode, 1 = KRaft"),
    ("cluster_id", StringType(), "cluster.id"),
    ("stored_broker_id", IntegerType(), "broker.id (version 0) or node.id (version 1)"),
    ("directory_id", StringType(), "directory.id (KRaft 3.7+), else null"),
    ("written", StringType(), "the date comment java.util.Properties.store wrote"),
    ("properties", MapType(StringType(), StringType()), "every key=value in the file"),
    ("file", StringType(), "the meta.properties file"),
)

ZNODES = _schema(
    ("path", StringType(), "absolute znode path; the root is '/'"),
    ("parent", StringType(), "parent path, null for the root"),
    ("name", StringType(), "last path element"),
    ("data", StringType(), "data as UTF-8 text, or base64 when data_encoding says so; null for null data"),
    ("data_encoding", StringType(), "'utf-8' or 'base64'; null with null data"),
    ("data_length", IntegerType(), "bytes of data (Stat.dataLength)"),
    ("czxid", LongType(), "zxid of the create"),
    ("mzxid", LongType(), "zxid of the last setData"),
    ("pzxid", LongType(), "zxid of the last change to the children"),
    ("ctime", TimestampType(), "create time (the leader's clock)"),
    ("mtime", TimestampType(), "last setData time"),
    ("version", IntegerType(), "data version (Stat.version; Kafka's zkVersion)"),
    ("cversion", IntegerType(), "children version as a client reads it (creates and deletes of children)"),
    ("aversion", IntegerType(), "ACL version"),
    ("ephemeral_owner", LongType(), "session id owning an ephemeral znode, else 0"),
    ("num_children", IntegerType(), "children count"),
    ("redacted", BooleanType(), "capture replaced a secret in data"),
    ("source", StringType(), "zk/znodes.jsonl, or the snapshot (+ txns replayed up to a zxid) it came from"),
)

ZNODES_OBSERVED = _schema(
    ("path", StringType(), "Kafka's znode path: a chroot the command named before Kafka's root taken off"),
    ("exists", BooleanType(), "false where the shell said 'Node does not exist' (or NoNode)"),
    (
        "observed_as",
        StringType(),
        "zkCli get, ls, ls -s, ls -R, ls2, stat; zk_shell tree, get, ls, json export",
    ),
    ("command", StringType(), "the command as typed, or the line that shows the znode"),
    ("data", StringType(), "as shown (text, or base64 per data_encoding); null: null data or not shown"),
    ("data_encoding", StringType(), "'utf-8' or 'base64' where data was shown and not null"),
    ("data_shown", BooleanType(), "the command shows data (get, a json export); false: data is not known"),
    ("data_length", IntegerType(), "Stat.dataLength where printed"),
    ("czxid", LongType(), "where printed; null: not printed"),
    ("mzxid", LongType(), "where printed"),
    ("pzxid", LongType(), "where printed"),
    ("ctime", TimestampType(), "where printed and its zone known (the shell's host zone)"),
    ("mtime", TimestampType(), "where printed and its zone known"),
    ("version", IntegerType(), "dataVersion where printed"),
    ("cversion", IntegerType(), "where printed"),
    ("aversion", IntegerType(), "aclVersion where printed"),
    ("ephemeral_owner", LongType(), "session id where printed (0: persistent)"),
    ("num_children", IntegerType(), "where printed"),
    ("children", ArrayType(StringType()), "the names an ls printed: all, at that moment; null: not listed"),
    ("file", StringType(), "the pasted file"),
    ("line_no", LongType(), "the line of the command (or of the znode in a tree or export)"),
    ("taken_at", TimestampType(), "when the paste was taken, from the manifest; null: unknown"),
)

ZNODE_HISTORY = _schema(
    ("zxid", LongType(), "ZooKeeper transaction id; sub-ops of a multi share it"),
    ("time", TimestampType(), "the leader's clock when it logged the txn"),
    ("session_id", LongType(), "client session (TxnHeader.clientId)"),
    ("cxid", IntegerType(), "the client's request counter"),
    ("op", StringType(), "ZooKeeper's op name: create, setData, delete, check, error, closeSession, ..."),
    ("path", StringType(), "znode the op is about"),
    ("data", StringType(), "data written (create, setData), text or base64 per data_encoding"),
    ("data_encoding", StringType(), "'utf-8' or 'base64'; null with null data"),
    ("version", IntegerType(), "setData: the new data version; check/setACL: the version required or set"),
    ("ephemeral", BooleanType(), "create: an ephemeral znode"),
    ("acl", StringType(), "create/setACL: scheme:id=perms, comma separated"),
    ("session_timeout", IntegerType(), "createSession: negotiated timeout in ms"),
    ("deleted_paths", ArrayType(StringType()), "closeSession: the ephemerals it deletes (3.6+)"),
    ("err", IntegerType(), "error: the KeeperException code (-101 NONODE, -103 BADVERSION, -110 NODEEXISTS)"),
    ("applied", BooleanType(), "false for an error txn and for every op of a failed multi"),
    ("multi_index", IntegerType(), "position of the op within its multi, null outside a multi"),
    ("file", StringType(), "txn log file"),
    ("offset", LongType(), "byte offset of the txn's entry in the file"),
)

BAD_RECORDS = _schema(
    ("source", StringType(), "log, listing, partition.metadata, leader-epoch-checkpoint, ..."),
    ("file", StringType(), "file the record came from"),
    (
        "position",
        LongType(),
        "1-based line for text, byte offset for binary; null for a whole file",
    ),
    ("reason", StringType(), "what was expected, in Kafka's words where Kafka has them"),
    ("raw", StringType(), "the record, cut to 500 characters"),
)

RAW_CUT = 500

FINDINGS = _schema(
    ("kind", StringType(), "dotted kind: topic_id.mismatch, deletion.stuck, controller.election, ..."),
    ("severity", StringType(), "critical, warning or info"),
    ("subject", MapType(StringType(), StringType()), "topic, partition, broker, epoch, zxid ... it is about"),
    ("summary", StringType(), "one sentence for a postmortem"),
    (
        "evidence",
        ArrayType(StringType()),
        "refs a person can open: zk:/path@mzxid=0x1a, broker-2:logs/...:12",
    ),
)
