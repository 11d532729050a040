"""Logger names (%c) as Kafka's log4j layout prints them, by the class that logs."""

from __future__ import annotations

KC = ("kafka.controller.KafkaController",)
ELECTOR = ("kafka.server.ZookeeperLeaderElector",)  # the controller's election until 0.11
TDM = ("kafka.controller.TopicDeletionManager",)
TDM_THREAD = ("kafka.controller.TopicDeletionManager$DeleteTopicsThread",)  # 0.10's deletion thread
RSM = ("kafka.controller.ZkReplicaStateMachine", "kafka.controller.ReplicaStateMachine")
PSM = ("kafka.controller.ZkPartitionStateMachine", "kafka.controller.PartitionStateMachine")
CHANNEL = ("kafka.controller.ControllerChannelManager", "kafka.controller.RequestSendThread")
# AbstractControllerBrokerRequestBatch logs under its concrete class's name, with no logIdent.
BATCH = ("kafka.controller.ControllerBrokerRequestBatch",)
EVENT_THREAD = ("kafka.controller.ControllerEventManager$ControllerEventThread",)
SCL = ("state.change.logger",)
# The controller's leader selectors until 1.0 (PartitionLeaderSelector.scala), each its own class
SELECTOR = ("kafka.controller.OfflinePartitionLeaderSelector",)
PARTITION = ("kafka.cluster.Partition",)
RM = ("kafka.server.ReplicaManager",)
LM = ("kafka.log.LogManager",)
LOG = (
    "kafka.log.Log",
    "kafka.log.UnifiedLog",
    "kafka.log.LocalLog",
    "kafka.log.LocalLog$",
    "org.apache.kafka.storage.internals.log.UnifiedLog",
    "org.apache.kafka.storage.internals.log.LocalLog",
)
SERVER = ("kafka.server.KafkaServer",)

APIS = ("kafka.server.KafkaApis",)
ADMIN_ZK = ("kafka.zk.AdminZkClient",)
ZK_CLIENT = ("kafka.zk.KafkaZkClient",)
ZK_UTILS = ("kafka.utils.ZkUtils",)  # the brokers' ZooKeeper access until 1.0 (and tools until 2.x)
ZKCLIENT = ("org.I0Itec.zkclient.ZkClient",)  # 101tec's zkclient, under ZkUtils
ZK_WRAPPER = ("kafka.zookeeper.ZooKeeperClient",)
CNXN = (
    "org.apache.zookeeper.ClientCnxn",
    "org.apache.zookeeper.ZooKeeper",
    "org.apache.zookeeper.ClientCnxnSocketNIO",
)
ZK_SERVER = (
    "org.apache.zookeeper.server.ZooKeeperServer",
    "org.apache.zookeeper.server.persistence.FileTxnLog",
    "org.apache.zookeeper.server.PrepRequestProcessor",
)
FETCHERS = ("kafka.server.ReplicaFetcherManager", "kafka.server.ReplicaAlterLogDirsManager")
FETCHER_THREADS = ("kafka.server.ReplicaFetcherThread", "kafka.server.ReplicaAlterLogDirsThread")
LOG_DIR_FAILURE = (
    "kafka.server.LogDirFailureChannel",
    "org.apache.kafka.storage.internals.log.LogDirFailureChannel",
)
META = ("kafka.server.BrokerMetadataCheckpoint",)
GROUP_COORDINATOR = ("kafka.coordinator.group.GroupCoordinator",)
GROUP_METADATA = ("kafka.coordinator.group.GroupMetadataManager",)
FETCH_SESSION = ("org.apache.kafka.clients.FetchSessionHandler",)
LOCAL_LOG = ("kafka.log.LocalLog", "org.apache.kafka.storage.internals.log.LocalLog")
