"""Type log events with the catalog of Kafka's messages, as Spark column expressions.

For each event the first template whose loggers, literal text and regex all match wins (`_t`); only the
templates of the event's logger are tried, literal text first. Its fields
come from one `regexp_replace` with the winning pattern, which rewrites the message into its groups joined
by \\x01, zipped with the template's field names into a map. The pattern is looked up by `_t` from a literal
array, so the plan stays small whatever the size of the catalog. `topic` and `partition` become columns,
the other fields and the template's constants go to `attrs`. Events about a partition's log
(`[Log partition=t-0, ...]`) or a Partition object (`[Partition t-0 broker=1]`) get their
topic-partition from the context.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from workbench.kafka.messages import CATALOG
from workbench.kafka.templates import Template

CONTEXT_TP = r"(?:^Partition |partition=)([A-Za-z0-9._-]+)-(\d+)(?:,| broker=|$)"
REPLICA_TOPIC = r"Topic=([A-Za-z0-9._-]+),Partition=(\d+)"
SEP = "\x01"


def _literal_array(values: list[str]) -> Column:
    return F.array(*[F.lit(v) for v in values])


def _candidates(catalog: list[Template], logger: Column) -> Column:
    """Positions of the templates an event from this logger may match, in catalog order."""
    free = [i for i, t in enumerate(catalog) if not t.loggers]
    by_logger: dict[str, list[int]] = {}
    for i, tmpl in enumerate(catalog):
        for name in tmpl.loggers:
            by_logger.setdefault(name, list(free)).append(i)
    numbers = F.create_map(
        *[x for name, ids in by_logger.items() for x in (F.lit(name), F.array(*map(F.lit, sorted(ids))))]
    )
    every = F.array(*[F.lit(i) for i in range(len(catalog))])
    return F.when(logger.isNull(), every).otherwise(
        F.coalesce(numbers[logger], F.array(*map(F.lit, free)).cast("array<int>"))
    )


def type_events(events: DataFrame, catalog: list[Template] = CATALOG) -> DataFrame:
    """Add event, topic, partition and attrs to a frame with `logger`, `message`, `context` and
    `exception` columns."""
    logger, message = F.col("logger"), F.col("message")
    literals = _literal_array([tmpl.literal for tmpl in catalog])
    patterns = _literal_array([tmpl.java_pattern for tmpl in catalog])
    matching = F.filter(
        _candidates(catalog, logger),
        lambda i: message.contains(F.get(literals, i)) & F.rlike(message, F.get(patterns, i)),
    )
    typed = events.withColumn("_t", F.get(matching, 0))
    t = F.col("_t")

    def names(tmpl: Template) -> list[str]:
        return sorted(tmpl.fields, key=tmpl.fields.__getitem__)

    kinds = _literal_array([tmpl.kind for tmpl in catalog])
    replacements = _literal_array(
        [SEP.join(f"${g}" for g in sorted(tmpl.fields.values())) for tmpl in catalog]
    )
    field_names = F.array(*[F.array(*[F.lit(n) for n in names(tmpl)]) for tmpl in catalog])
    groups = F.split(F.regexp_replace(message, F.get(patterns, t), F.get(replacements, t)), SEP)
    keys = F.get(field_names, t).cast("array<string>")
    fields = F.when(
        t.isNotNull() & (F.size(keys) > 0) & (F.size(keys) == F.size(groups)),
        F.map_from_arrays(keys, groups),
    )
    consts = F.array(
        *[
            F.create_map(*[x for k, v in sorted(tmpl.consts.items()) for x in (F.lit(k), F.lit(v))])
            for tmpl in catalog
        ]
    )
    const_map = F.when(t.isNotNull(), F.get(consts.cast("array<map<string,string>>"), t))
    exception = F.create_map(F.lit("exception"), F.col("exception"))
    empty = F.create_map().cast("map<string,string>")
    attrs = F.map_filter(
        F.map_concat(F.coalesce(fields, empty), F.coalesce(const_map, empty), exception),
        lambda k, v: v.isNotNull() & (v != "") & ~k.isin("topic", "partition"),
    )
    context_tp = F.regexp_extract(F.coalesce("context", F.lit("")), CONTEXT_TP, 1)
    replica_tp = F.regexp_extract(message, REPLICA_TOPIC, 1)
    topic = F.coalesce(
        fields["topic"],
        F.nullif(context_tp, F.lit("")),
        F.when(t.isNotNull(), F.nullif(replica_tp, F.lit(""))),
        _single(fields["topics"]),
    )
    partition = F.coalesce(
        fields["partition"].try_cast("int"),
        F.when(context_tp != "", F.regexp_extract("context", CONTEXT_TP, 2).try_cast("int")),
    )
    return typed.select(
        "*",
        F.get(kinds, t).alias("event"),
        topic.alias("topic"),
        partition.alias("partition"),
        attrs.alias("attrs"),
    ).drop("_t")


def _single(topics: Column) -> Column:
    """The topic of a one-topic list ('design2', 'Set(design2)'), else null."""
    bare = F.regexp_replace(topics, r"^(?:Set|HashSet|List|ArrayBuffer)?\((.*)\)$", "$1")
    return F.when(bare.rlike(r"^[A-Za-z0-9._-]+$"), bare)
