"""Catalog entries for threads, clients and services starting and stopping: the lines that frame every
failover and restart (when the controller's request threads stopped, when a ZooKeeper client connected,
which Kafka version started). Text and sources as in the other catalog modules; helper threads log under
their own class's name, so the ShutdownableThread lines take any logger.
"""

from __future__ import annotations

from workbench.kafka.messages.loggers import (
    CHANNEL,
    CNXN,
    FETCH_SESSION,
    FETCHER_THREADS,
    GROUP_COORDINATOR,
    GROUP_METADATA,
    KC,
    LM,
    LOG,
)
from workbench.kafka.templates import Template as T

THREAD = "ShutdownableThread.scala 2.5.1:{} 2.8.2:{}; server-common ShutdownableThread.java 3.6.2:{}"
FEATURES = ("kafka.server.FinalizedFeatureCache", "kafka.server.metadata.ZkMetadataCache")
TO_CONTROLLER = ("kafka.server.BrokerToControllerRequestThread",)
SEGMENT = ("kafka.log.LogSegment",)
ACCEPTOR = ("kafka.network.Acceptor", "kafka.network.DataPlaneAcceptor", "kafka.network.ControlPlaneAcceptor")
SOCKET_SERVER = ("kafka.network.SocketServer",)
COORDINATORS = (
    *GROUP_COORDINATOR,
    "kafka.coordinator.transaction.TransactionCoordinator",
    "org.apache.kafka.coordinator.group.GroupCoordinatorService",
)
PRODUCER_IDS = (
    "kafka.coordinator.transaction.ProducerIdManager",
    "kafka.coordinator.transaction.ZkProducerIdManager",
)
APP_INFO = ("org.apache.kafka.common.utils.AppInfoParser",)
MX4J = ("kafka.utils.Mx4jLoader$",)  # a Scala object: its class's name ends in $
CONFIG = ("kafka.server.KafkaConfig",)  # AbstractConfig logs under its subclass's name (getClass())
RUNTIME = (
    "org.apache.kafka.coordinator.common.runtime.CoordinatorRuntime",
    "org.apache.kafka.coordinator.group.runtime.CoordinatorRuntime",
)

# fmt: off
LIFECYCLE = [
    T("thread.starting", "Starting", (), THREAD.format(93, 93, 127)),
    T("thread.stopped", "Stopped", (), THREAD.format("101,109", "101,109", "134,142")),
    T("thread.shutting_down", "Shutting down", (), THREAD.format(51, 51, 85)),
    T("thread.shutdown_completed", "Shutdown completed", (), THREAD.format(70, 70, 104)),
    T("zk.client_initiating", "Initiating client connection, connectString={zk_connect} sessionTimeout={timeout_ms} watcher={watcher}",
      CNXN, "ZooKeeper.java release-3.5.9:868 release-3.6.3:1007 release-3.8.4:638"),
    T("zk.client_setting", "jute.maxbuffer value is {bytes} Bytes",
      ("org.apache.zookeeper.ClientCnxnSocket",), "ClientCnxnSocket.java release-3.5.9:237 release-3.8.4:239",
      {"setting": "jute.maxbuffer"}),
    T("zk.client_setting", "zookeeper.request.timeout value is {timeout_ms}. feature enabled={_}",
      CNXN, "ClientCnxn.java initRequestTimeout release-3.5.9:1653 release-3.8.4:1748",
      {"setting": "zookeeper.request.timeout"}),
    T("zk.socket_connected", "Socket connection established, initiating session, client: {client}, server: {server}",
      CNXN, "ClientCnxn.java primeConnection release-3.5.9:959 release-3.8.4:1014"),
    T("zk.event_thread_stopped", "EventThread shut down for session: {session}",
      CNXN, "ClientCnxn.java release-3.5.9:524 release-3.8.4:569"),
    T("features.cache_updated", "Updated cache from existing {old} to latest {new}.",
      FEATURES, "FinalizedFeatureCache.scala 2.8.2:120; metadata/ZkMetadataCache.scala 3.6.2:671"),
    T("broker.controller_recorded", "Recorded new controller, from now on will use broker {controller_node}",
      TO_CONTROLLER, "BrokerToControllerChannelManager.scala 2.8.2:373"),
    T("broker.controller_recorded", "Recorded new controller, from now on will use node {controller_node}",
      TO_CONTROLLER, "BrokerToControllerChannelManager.scala 3.6.2:426"),
    T("fetcher.fetch_failed", "Error sending fetch request {fetch_session} to node {leader}:{_}",
      FETCH_SESSION, "FetchSessionHandler.java handleError 2.5.1:481 2.8.2:481 3.6.2:615"),
    T("fetcher.truncating", "Truncating partition {tp} with {truncation} due to leader epoch and offset {epoch_end_offset}",
      FETCHER_THREADS, "AbstractFetcherThread.scala truncate 3.1.0:270 3.6.2:263"),
    T("fetcher.truncating", "Truncating partition {tp} with {truncation} due to local high watermark {high_watermark}",
      FETCHER_THREADS, "AbstractFetcherThread.scala truncateToHighWatermark 3.6.2:244"),
    T("fetcher.truncating", "Truncating partition {tp} to local high watermark {high_watermark}",
      FETCHER_THREADS, "AbstractFetcherThread.scala truncateToHighWatermark 2.5.1:237 2.8.2:255"),
    T("log.truncate_noop", "Truncating to {offset} has no effect as the largest offset in the log is {last_offset}",
      LOG, "Log.scala truncateTo 2.5.1:2054 2.8.2:2184; UnifiedLog.scala 3.6.2:1712"),
    T("log.truncated_below_hw", "Truncating {tp} to offset {offset} below high watermark {high_watermark}",
      FETCHER_THREADS, "ReplicaFetcherThread.scala truncate 2.5.1:295 2.8.2:319 3.6.2:182"),
    T("log.truncated", "Truncating to offset {offset}",
      LOG, "Log.scala truncateTo 2.5.1:2057 2.8.2:2196; UnifiedLog.scala 3.6.2:1724"),
    T("log.segments_deleting", "Deleting segment files {segments}",
      LOG, "Log.scala 2.8.2:2371; LocalLog.scala deleteSegmentFiles 3.6.2:946"),
    T("log.segments_deleting", "Deleting segments {segments}",
      LOG, "Log.scala deleteSegmentFiles 2.5.1:2215"),
    *(T("log.segment_file_deleted", f"Deleted {kind} {{path}}.", SEGMENT,
        "LogSegment.scala deleteIfExists 2.5.1:612 2.8.2:613 3.6.2:618", {"file_type": kind})
      for kind in ("log", "offset index", "time index", "transaction index")),
    T("log_manager.cleanup_scheduled", "Starting log cleanup with a period of {ms} ms.",
      LM, "LogManager.scala startup 2.5.1:391 2.8.2:427 3.6.2:575"),
    T("log_manager.flusher_scheduled", "Starting log flusher with a default period of {ms} ms.",
      LM, "LogManager.scala startup 2.5.1:397 2.8.2:433 3.6.2:580"),
    T("controller.broker_modifications_registered", "Register BrokerModifications handler for {brokers}",
      KC, "KafkaController.scala 2.5.1:391 2.8.2:562 3.6.2:616"),
    T("controller.broker_modifications_unregistered", "Unregister BrokerModifications handler for {brokers}",
      KC, "KafkaController.scala 2.5.1:400 2.8.2:571 3.6.2:625"),
    T("controller.connecting_to_broker", "Controller {controller} trying to connect to broker {broker}",
      CHANNEL, "ControllerChannelManager.scala addNewBroker 2.5.1:112 2.8.2:114 3.6.2:119"),
    T("group.offsets_removed_for_deleted_partitions", "Removed {count} offsets associated with deleted partitions: {partitions}.",
      GROUP_COORDINATOR, "GroupCoordinator.scala handleDeletedPartitions 2.5.1:806 2.8.2:840 3.6.2:1108"),
    T("group.dead", "Group {group} transitioned to Dead in generation {generation}",
      GROUP_METADATA, "GroupMetadataManager.scala 2.5.1:790 2.8.2:849 3.6.2:860"),
    T("coordinator.starting", "Starting up.",
      COORDINATORS, "GroupCoordinator.scala startup 2.5.1:108 2.8.2:107 3.6.2:109; TransactionCoordinator.scala 2.5.1:559 2.8.2:595 3.6.2:733"),
    T("coordinator.started", "Startup complete.",
      COORDINATORS, "GroupCoordinator.scala startup 2.5.1:111 2.8.2:110 3.6.2:112; TransactionCoordinator.scala 2.5.1:571 2.8.2:606 3.6.2:744"),
    T("coordinator.unloading_scheduled", "Scheduling unloading of metadata for {tp} with epoch {coordinator_epoch}",
      RUNTIME, "CoordinatorRuntime.java 3.6.2:1303 (group-coordinator), trunk coordinator-common"),
    T("producer_ids.block_acquired", "Acquired new producerId block {block} by writing to Zk with path version {version}",
      PRODUCER_IDS, "ProducerIdManager.scala 2.5.1:118 2.8.2:123; ZkProducerIdManager 3.6.2:107"),
    T("network.listening", "Awaiting socket connections on {address}.",
      ACCEPTOR, "SocketServer.scala Acceptor 2.0.1:439 2.5.1:602 2.8.2:664 3.6.2:731"),
    T("network.started", "Started {count} acceptor threads{_}",
      SOCKET_SERVER, "SocketServer.scala 2.0.1:123 2.5.1:163"),
    T("network.started", "Started processors for {count} acceptors",
      SOCKET_SERVER, "SocketServer.scala 2.0.1:133"),
    T("network.started", "Started data-plane processors for {count} acceptors",
      SOCKET_SERVER, "SocketServer.scala 2.5.1:191"),
    T("network.started", "Started socket server acceptors and processors",
      SOCKET_SERVER, "SocketServer.scala 2.8.2:197"),
    T("network.started", "Started {plane} acceptor and processor(s) for endpoint : {listener}",
      SOCKET_SERVER, "SocketServer.scala 2.8.2:222"),
    T("network.enabled", "Enabling request processing.",
      SOCKET_SERVER, "SocketServer.scala 3.6.2:227"),
    T("app.version", "Kafka version: {kafka_version}", APP_INFO, "AppInfoParser.java 2.5.1:117 2.8.2:119 3.6.2:119"),
    T("app.version", "Kafka version : {kafka_version}", APP_INFO, "AppInfoParser.java 2.0.1:109"),
    T("app.commit_id", "Kafka commitId: {commit}", APP_INFO, "AppInfoParser.java 2.5.1:118 2.8.2:120 3.6.2:120"),
    T("app.commit_id", "Kafka commitId : {commit}", APP_INFO, "AppInfoParser.java 2.0.1:110"),
    T("app.start_time", "Kafka startTimeMs: {ms}", APP_INFO, "AppInfoParser.java 2.5.1:119 2.8.2:121 3.6.2:121"),
    # MX4J, an optional HTTP adaptor for JMX, loaded at start-up (KafkaServer.startup) when on the classpath
    T("app.mx4j", "Will not load MX4J, mx4j-tools.jar is not in the classpath",
      MX4J, "Mx4jLoader.scala 0.10.2.2:65 2.8.2:65 3.6.2:65", {"loaded": "false"}),
    T("app.mx4j", "mx4j successfully loaded",
      MX4J, "Mx4jLoader.scala 2.2.2:60 2.8.2:60 3.6.2:60", {"loaded": "true"}),
    T("app.mx4j", "mx4j successfuly loaded",
      MX4J, "Mx4jLoader.scala 0.10.2.2:60 2.1.1:60", {"loaded": "true"}),
    T("app.mx4j", "Could not start register mbean in JMX",
      MX4J, "Mx4jLoader.scala 0.10.2.2:67 2.8.2:67 3.6.2:67", {"loaded": "false"}),
    T("app.config", "KafkaConfig values: {_}",
      CONFIG, "AbstractConfig.java logAll 0.10.2.2:169 2.8.2:361 3.6.2:359 (a line a setting follows)"),
]
# fmt: on
