"""The catalog against Kafka's own source: the listing of every log call of the classes that matter at each
release line from 0.10.2 to 3.9 (workbench/kafka/messages/listing.py, committed as messages/log_calls.json),
the templates made from it (messages/source.py), and the reader that makes it (workbench/kafka/log_calls.py),
held to source written for these tests."""

from __future__ import annotations

from collections import Counter

import pyarrow as pa

from workbench.kafka import log_calls
from workbench.kafka.messages import CATALOG, CURATED, listing, source
from workbench.sources.catalog import type_batch

SCALA = '''
package kafka.example

import kafka.utils.Logging

class Controller(config: Config,
                 time: Time) extends Logging {
  this.logIdent = s"[Controller id=${config.brokerId}] "
  case class Pending(topic: String)  // no body: not a class the calls below are in

  def elect(): Unit = {
    info(s"${config.brokerId} successfully elected as the controller. Epoch incremented to $epoch")
    debug("Broker %d was elected as controller instead of broker %d".format(leader, config.brokerId))
    warn("Controller " + config.brokerId + " lost its session; " + reason)
    stateChangeLogger.withControllerEpoch(e).trace(s"Sending ${if (l) "leader" else "follower"} LeaderAndIsr")
    error(s"Error completing reassignment of partition $tp", e)  // the throwable is not the message
    info(message)  // no text of its own
  }

  def refuse(): Unit = {
    stateChangeLogger.warn(("Ignoring LeaderAndIsr request from controller %d with correlation id %d " +
      "since its controller epoch %d is old").format(controllerId, correlationId, epoch))
    val message = s"Invalid config value for resource $resource: " +
      s"${e.getMessage}"
    if (client) info(message) else error(message)
  }

  private def reinitialize(name: String, message: String, delayMs: Long): Unit = warn(message)

  def expire(): Unit = {
    reinitialize("session-expired", "Session expired.", delayMs = 0L)
    reinitialize(name = "auth-failed", message = s"Reinitializing after $reason", delayMs = 5L)
  }

  case object TopicDeletion extends ControllerEvent {
    def process(): Unit = info(s"Handling deletion for topics ${topics.mkString(",")}")  // the controller's
  }

  class SendThread(name: String) extends ShutdownableThread(name) {
    override def doWork(): Unit = warn(s"Controller's connection to broker $broker was unsuccessful")
  }
}

object Controller extends Logging {
  def apply(): Unit = fatal(s"""Unexpected "state" $state""")
}
'''

JAVA = """
package org.apache.kafka.storage.internals.log;

public class LocalLog {
    private static final Logger LOG = LoggerFactory.getLogger(LocalLog.class);
    void roll() {
        LOG.info("Rolled new log segment at offset {} in {} ms.", offset, ms);
        LOG.warn(String.format("Newly rolled segment file %s already exists", file));
    }
    static void logEnv(String msg, Logger log) {
        log.info("Environment: " + msg);  // the caller's logger
    }
}
"""


def test_the_reader_takes_each_call_s_message_apart_where_kafka_interpolates() -> None:
    found = {(c.level, c.fragments) for c in log_calls.calls(SCALA, "Controller.scala")}
    assert ("info", ("", " successfully elected as the controller. Epoch incremented to ", "")) in found
    assert ("debug", ("Broker ", " was elected as controller instead of broker ", "")) in found
    assert ("warn", ("Controller ", " lost its session; ", "")) in found
    assert ("trace", ("Sending ", " LeaderAndIsr")) in found
    assert ("error", ("Error completing reassignment of partition ", "")) in found
    assert ("fatal", ('Unexpected "state" ', "")) in found
    assert ("info", ("", "")) in found  # info(message): listed as dynamic, left out of the listing
    assert [c for c in log_calls.calls(SCALA, "Controller.scala") if c.dynamic] == [
        c for c in log_calls.calls(SCALA, "Controller.scala") if c.fragments == ("", "")
    ]
    java = {(c.level, c.fragments) for c in log_calls.calls(JAVA, "LocalLog.java")}
    assert java == {
        ("info", ("Rolled new log segment at offset ", " in ", " ms.")),
        ("warn", ("Newly rolled segment file ", " already exists")),
        ("info", ("Environment: ", "")),
    }


def test_a_message_formatted_whole_or_passed_by_name_is_read_where_it_is_written() -> None:
    """`("..." + "...").format(x)` (0.10-0.11's state-change lines), a message built in a val of the method
    (`val message = s"..."; info(message)`) and one passed as a parameter, from each call in the file."""
    found = {(c.level, c.fragments): c for c in log_calls.calls(SCALA, "Controller.scala")}
    refused = found["warn", ("Ignoring LeaderAndIsr request from controller ", " with correlation id ",
                             " since its controller epoch ", " is old")]  # fmt: skip
    assert refused.holes == ("controllerId", "correlationId", "epoch")
    assert refused.logger == "state.change.logger"
    invalid = ("Invalid config value for resource ", ": ", "")
    assert found["info", invalid].holes == found["error", invalid].holes == ("resource", "e.getMessage")
    assert found["info", invalid].line == SCALA.count("\n", 0, SCALA.index("if (client) info")) + 1
    assert ("warn", ("Session expired.",)) in found
    assert found["warn", ("Reinitializing after ", "")].holes == ("reason",)
    assert not [c for c in found.values() if c.level == "warn" and c.dynamic]  # warn(message) resolved


def test_the_reader_keeps_what_kafka_interpolates_at_each_hole() -> None:
    holes = {c.fragments[0] or c.fragments[1]: c.holes for c in log_calls.calls(SCALA, "Controller.scala")}
    assert holes[" successfully elected as the controller. Epoch incremented to "] == (
        "config.brokerId",
        "epoch",
    )
    assert holes["Broker "] == ("leader", "config.brokerId")  # .format's arguments, in order
    assert holes["Controller "] == ("config.brokerId", "reason")
    assert holes["Handling deletion for topics "] == ('topics.mkString(",")',)
    java = {c.fragments[0]: c.holes for c in log_calls.calls(JAVA, "LocalLog.java")}
    assert java["Rolled new log segment at offset "] == ("offset", "ms")  # slf4j's arguments
    assert java["Newly rolled segment file "] == ("file",)  # String.format's
    assert source.field_name('topics.mkString(",")') == "topics"
    assert source.field_name("partition.topicPartition") == "topic_partition"
    assert source.field_name("epochAndOffset._1") == "epoch_and_offset"
    assert source.field_name("Long.toHexString(sessionId)") == "session_id"
    assert source.field_name("logsToLoad.length") == "logs_to_load_count"
    assert source.field_name('if (isLeader) "leader" else "follower"') == "value"


def test_each_call_is_given_the_logger_it_writes_to() -> None:
    loggers = {c.fragments[0]: c.logger for c in log_calls.calls(SCALA, "Controller.scala")}
    assert loggers["Broker "] == "kafka.example.Controller"  # not the bodiless case class before it
    assert loggers["Sending "] == "state.change.logger"
    assert loggers["Handling deletion for topics "] == "kafka.example.Controller"  # an event object
    assert loggers["Controller's connection to broker "] == "kafka.example.Controller$SendThread"
    assert loggers['Unexpected "state" '] == "kafka.example.Controller$"  # the companion object
    java = {c.fragments[0]: c.logger for c in log_calls.calls(JAVA, "LocalLog.java")}
    assert java["Rolled new log segment at offset "] == "org.apache.kafka.storage.internals.log.LocalLog"
    assert java["Environment: "] == ""  # a Logger passed in: whose it is, the source does not say here


def test_the_listing_covers_every_release_line_on_zookeeper() -> None:
    entries = listing.load()
    per_release = Counter(r for e in entries for r in e["releases"])
    assert set(per_release) == set(listing.RELEASES)
    for release in listing.RELEASES:
        loggers = {e["logger"] for e in entries if release in e["releases"]}
        assert {
            "kafka.controller.KafkaController",
            "kafka.cluster.Partition",
            "state.change.logger",
        } <= loggers
        assert {"kafka.server.ReplicaManager", "kafka.server.KafkaServer"} <= loggers, release
        assert {"org.apache.zookeeper.ClientCnxn", "org.apache.zookeeper.ZooKeeper"} <= loggers, release
    # an abstract class's calls are listed under its concrete classes' names too (Logging's getClass)
    fetcher = {
        tuple(e.get("subclasses", ())) for e in entries if e["logger"].endswith(".AbstractFetcherThread")
    }
    both = ("kafka.server.ReplicaAlterLogDirsThread", "kafka.server.ReplicaFetcherThread")
    assert both in fetcher and fetcher <= {both, both[1:]}  # ReplicaAlterLogDirsThread came with 1.1
    # and only at the releases where the class has them: ReplicaStateMachine was the class until 2.3
    machine = [
        e for e in entries if e["logger"] == "kafka.controller.ReplicaStateMachine" and "1.1" in e["releases"]
    ]
    assert machine and all(
        e["subclasses"] == ["kafka.controller.ZkReplicaStateMachine"] and e["subclassed_in"][0] == "2.3"
        for e in machine
        if "2.4" in e["releases"]
    )
    # the 0.10 controller's election and 3.x's log loading are both read
    loggers = {e["logger"] for e in entries}
    assert {"kafka.server.ZookeeperLeaderElector", "kafka.log.UnifiedLog", "kafka.log.LogLoader"} <= loggers


# How many of each release line's listed messages the curated catalog types, measured when the listing was
# made: a template lost or a wording broken lowers one, and fails here.
TYPED_AT_LEAST = {
    "0.10.2": 117, "0.11.0": 123, "1.0": 143, "1.1": 176, "2.0": 178, "2.1": 181, "2.2": 186, "2.3": 190,
    "2.4": 193, "2.5": 191, "2.6": 198, "2.7": 205, "2.8": 206, "3.0": 205, "3.1": 207, "3.2": 208,
    "3.3": 208, "3.4": 208, "3.5": 209, "3.6": 210, "3.7": 208, "3.8": 207, "3.9": 207,
}  # fmt: skip


def test_the_curated_catalog_types_no_fewer_of_each_release_s_messages() -> None:
    texts = [t.text for t in CURATED]
    typed: Counter[str] = Counter()
    for entry in listing.load():
        if listing.typed_by(entry["fragments"], texts):
            typed.update(entry["releases"])
    assert {r: typed[r] for r in TYPED_AT_LEAST if typed[r] < TYPED_AT_LEAST[r]} == {}


def test_every_listed_message_is_typed_by_the_loader_or_has_a_reason() -> None:
    """A line of each listed message the curated catalog does not type (its values numbers, then words)
    goes through the loader's typing: every one is typed, by a template made from the source or by a
    curated one with a wildcard, except those UNTYPED names a reason for."""
    entries = listing.load()
    left = [e for e in entries if source.fixed_text(e) < source.MIN_FIXED]
    assert len(left) < 20 and set(source.UNTYPED) == {"too_little_fixed_text"}
    texts = [t.text for t in CURATED]
    wanted = [e for e in entries if e not in left and not listing.typed_by(e["fragments"], texts)]
    for value in ("7", "some-value"):
        logger = pa.array([e["logger"] or None for e in wanted], pa.string())
        message = pa.array([value.join(e["fragments"]) for e in wanted])
        nothing = pa.nulls(len(wanted), pa.string())
        events = type_batch(logger, message, nothing, nothing).event.to_pylist()
        untyped = [(e["logger"], message[i].as_py()) for i, e in enumerate(wanted) if events[i] is None]
        assert untyped == [], untyped[:10]
    made = CATALOG[len(CURATED) :]
    assert all(t.kind.startswith("source.") and t.loose for t in made) and len(made) > len(CURATED)


def test_a_message_is_not_typed_by_a_longer_one() -> None:
    """Where Kafka interpolates one value a template may have one field or constants, not more text with
    fields: 0.11's short ISR shrink is not 2.5's longer one, and is typed only by its own template."""
    short = ("Shrinking ISR from ", " to ", "")
    long = "Shrinking ISR from {from_isr} to {to_isr}. Leader: (highWatermark: {high_watermark})."
    assert listing.typed_by(short, [long]) == []
    assert listing.typed_by(short, ["Shrinking ISR from {from_isr} to {to_isr}"]) == [0]
    split = ("Sending ", " LeaderAndIsr request to broker ", "")
    assert listing.typed_by(split, ["Sending become-leader LeaderAndIsr request to broker {broker}"]) == [0]
