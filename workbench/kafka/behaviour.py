"""Kafka's (and ZooKeeper's) behaviour that the analyses, the repair plan and the simulator rely on, stated
once: each fact with the Kafka versions it holds for and the source lines that show it (apache/kafka at the
tag named; `k/` is core/src/main/scala/kafka/). A wrong belief here would be wrong in the simulator and in
the analyses at once, so each fact is read from Kafka's source, never from memory, and pinned by a test
(tests/test_behaviour.py). ../shared/reference/KAFKA_BEHAVIOUR.md tells each in full.
"""

from __future__ import annotations

from workbench.kafka.behaviour_log import LOG_FACTS
from workbench.kafka.fact import ZK, Fact, K, Source, Version, parse

PRODUCER = "clients/src/main/java/org/apache/kafka/clients/producer"

__all__ = ["Fact", "Source", "Version", "parse"]

_FACTS = (
    Fact(
        "first_leader_and_isr_refused",
        "After a restart the first LeaderAndIsr whose topic id differs from partition.metadata is refused "
        "(INCONSISTENT_TOPIC_ID): the Partition sees the log loaded at start-up. In 2.8 a partition with no "
        "log attached yet accepts any id, so only the next LeaderAndIsr is refused.",
        (3, 0, 0),
        None,
        (
            Source("2.8.2", f"{K}/cluster/Partition.scala", "438-466"),
            Source("3.0.0", f"{K}/cluster/Partition.scala", "435-436"),
            Source("3.6.2", f"{K}/cluster/Partition.scala", "561-564"),
        ),
    ),
    Fact(
        "topic_ids",
        "Topics have ids (KIP-516): the controller (IBP >= 2.8) mints one for every topic without one at "
        "failover, for new topics only at TopicChange, never on a partition modification.",
        (2, 8, 0),
        None,
        (
            Source("2.8.2", f"{K}/controller/KafkaController.scala", "1692-1735"),
            Source("2.8.2", f"{K}/zk/KafkaZkClient.scala", "490-505"),
            Source("3.6.2", f"{K}/controller/KafkaController.scala", "1710-1728"),
        ),
    ),
    Fact(
        "leader_and_isr_carries_the_controllers_topic_id",
        "A LeaderAndIsr carries each topic's id as the controller's context holds it: read from "
        "/brokers/topics/<t> when the controller starts (minted and written there where it had none), "
        "so the id a broker's refusal prints as the request's is the one ZooKeeper held for that "
        "controller (the context keeps it if a tool rewrites the znode later).",
        (2, 8, 0),
        None,
        (
            Source("2.8.2", f"{K}/controller/ControllerChannelManager.scala", "486-492"),
            Source("2.8.2", f"{K}/controller/KafkaController.scala", "908-909"),
            Source("2.8.2", f"{K}/controller/KafkaController.scala", "1660-1677"),
            Source("3.6.2", f"{K}/controller/ControllerChannelManager.scala", "547-558"),
            Source("3.6.2", f"{K}/controller/KafkaController.scala", "963-964"),
            Source("3.6.2", f"{K}/controller/KafkaController.scala", "1710-1728"),
        ),
    ),
    Fact(
        "topic_znode_v2",
        "Tools and brokers write /brokers/topics/<t> as JSON version 2 (adding_replicas, removing_replicas, "
        "no topic_id): a 2.4-2.7 tool's rewrite drops the topic id.",
        (2, 4, 0),
        (2, 8, 0),
        (
            Source("2.3.1", f"{K}/zk/ZkData.scala", "241-245"),
            Source("2.4.0", f"{K}/zk/ZkData.scala", "243-261"),
            Source("2.7.2", f"{K}/zk/ZkData.scala", "283-301"),
            Source("2.8.2", f"{K}/zk/ZkData.scala", "286-309"),
        ),
    ),
    Fact(
        "topic_znode_v3",
        "/brokers/topics/<t> is JSON version 3, with topic_id when the id is known.",
        (2, 8, 0),
        None,
        (Source("2.8.2", f"{K}/zk/ZkData.scala", "286-309"),),
    ),
    Fact(
        "replica_state_changes_logged_by_default",
        "state.change.logger is at TRACE in the shipped log4j.properties, so replica state changes "
        "(logged at TRACE) are in state-change.log; from 2.6 it is INFO and their absence proves nothing.",
        None,
        (2, 6, 0),
        (Source("2.5.1", "config/log4j.properties", "85"), Source("2.6.0", "config/log4j.properties", "85")),
    ),
    Fact(
        "topic_deletion_disabled_error",
        "With delete.topic.enable=false, DeleteTopics v3+ is answered TOPIC_DELETION_DISABLED (v0-2: "
        "INVALID_REQUEST); a ZooKeeper tool's marker is removed by the controller.",
        (2, 1, 0),
        None,
        (
            Source("2.1.0", f"{K}/server/KafkaApis.scala", "1471"),
            Source("2.8.2", f"{K}/controller/TopicDeletionManager.scala", "102-106"),
        ),
    ),
    Fact(
        "reassignment_of_deleted_topic_refused",
        "A reassignment of a topic queued for deletion (halted or not) is refused, whether new, changed or "
        "a cancellation ('Skipping reassignment of <tp> since the topic is currently being deleted'; the "
        "tool gets UNKNOWN_TOPIC_OR_PARTITION, 'The partition does not exist.'); one already in progress "
        "is resumed and completes on its own.",
        None,
        None,
        (
            Source("2.5.1", f"{K}/controller/KafkaController.scala", "645-673"),
            Source("2.8.2", f"{K}/controller/KafkaController.scala", "820-822"),
            Source("3.6.2", f"{K}/controller/KafkaController.scala", "871-899"),
        ),
    ),
    Fact(
        "offline_replicas_halt_deletion",
        "A replica of a topic being deleted on a broker that is not live is not deleted: it is moved to "
        "ReplicaDeletionIneligible and the topic made ineligible for deletion ('offline replicas') until "
        "the deletion resumes.",
        None,
        None,
        (
            Source("2.5.1", f"{K}/controller/TopicDeletionManager.scala", "293-316"),
            Source("2.8.2", f"{K}/controller/TopicDeletionManager.scala", "291-314"),
            Source("3.6.2", f"{K}/controller/TopicDeletionManager.scala", "291-314"),
        ),
    ),
    Fact(
        "halted_deletion_resumes",
        "A deletion halted (its topic ineligible) resumes when a reassignment of the topic completes, when "
        "a broker hosting one of its replicas starts (onBrokerStartup), or under a new controller, which "
        "holds back only topics with an offline replica or a reassignment in progress.",
        None,
        None,
        (
            Source("2.5.1", f"{K}/controller/KafkaController.scala", "377"),
            Source("2.5.1", f"{K}/controller/KafkaController.scala", "588"),
            Source("2.8.2", f"{K}/controller/KafkaController.scala", "548"),
            Source("2.8.2", f"{K}/controller/KafkaController.scala", "757"),
            Source("2.8.2", f"{K}/controller/KafkaController.scala", "964-974"),
            Source("3.6.2", f"{K}/controller/KafkaController.scala", "602"),
            Source("3.6.2", f"{K}/controller/KafkaController.scala", "812"),
            Source("3.6.2", f"{K}/controller/KafkaController.scala", "1019-1029"),
        ),
    ),
    Fact(
        "deletion_blocks_election",
        "The controller elects no leader for a partition of a topic queued for deletion "
        "(triggerOnlinePartitionStateChange leaves them out): such a partition without a leader stays "
        "without one, even when a replica's broker comes back, until its topic is gone.",
        None,
        None,
        (
            Source("2.5.1", f"{K}/controller/PartitionStateMachine.scala", "69-71"),
            Source("2.8.2", f"{K}/controller/PartitionStateMachine.scala", "70-72"),
            Source("3.6.2", f"{K}/controller/PartitionStateMachine.scala", "72-74"),
        ),
    ),
    Fact(
        "ready_before_reassignments_and_deletions",
        "onControllerFailover logs 'Ready to serve as the new controller' after the replica state machine "
        "(a LeaderAndIsr for every online replica) and the partition state machine start, and before it "
        "resumes reassignments, tries deletions and runs the preferred election.",
        None,
        None,
        (
            Source("2.5.1", f"{K}/controller/KafkaController.scala", "245-253"),
            Source("3.6.2", f"{K}/controller/KafkaController.scala", "316-324"),
        ),
    ),
    Fact(
        "refused_leader_and_isr_keeps_role",
        "A partition whose LeaderAndIsr is refused for its topic id (INCONSISTENT_TOPIC_ID) is never passed "
        "to makeLeader or makeFollower: the broker keeps its old role, so a broker ZooKeeper names leader "
        "that did not lead before does not lead, and logs no 'starts at leader epoch' line.",
        (2, 8, 0),
        None,
        (
            Source("2.8.2", f"{K}/server/ReplicaManager.scala", "1373-1416"),
            Source("3.6.2", f"{K}/server/ReplicaManager.scala", "1829-1897"),
        ),
    ),
    Fact(
        "controller_acts_only_on_storage_errors",
        "The controller reads a LeaderAndIsr response's partition errors only for KAFKA_STORAGE_ERROR "
        "(replicas on an offline log dir); any other error, INCONSISTENT_TOPIC_ID among them, changes "
        "nothing: no new election, ZooKeeper's state stays as written.",
        None,
        None,
        (
            Source("2.5.1", f"{K}/controller/KafkaController.scala", "1176-1200"),
            Source("2.8.2", f"{K}/controller/KafkaController.scala", "1369-1395"),
            Source("3.6.2", f"{K}/controller/KafkaController.scala", "1421-1448"),
        ),
    ),
    Fact(
        "reassignment_completes_with_its_targets_in_the_isr",
        "A partition's reassignment completes only once every target replica is in its ISR "
        "(isReassignmentComplete): a target replica that never joins, or keeps leaving, holds it.",
        None,
        None,
        (
            Source("2.5.1", f"{K}/controller/KafkaController.scala", "804-813"),
            Source("2.8.2", f"{K}/controller/KafkaController.scala", "984-993"),
            Source("3.6.2", f"{K}/controller/KafkaController.scala", "1039-1048"),
        ),
    ),
    Fact(
        "reassignment_blocks_deletion",
        "While a partition is being reassigned its topic is ineligible for deletion "
        "(onPartitionReassignment: 'topic reassignment in progress'); a queued deletion waits for it.",
        None,
        None,
        (
            Source("2.5.1", f"{K}/controller/KafkaController.scala", "555-557"),
            Source("3.6.2", f"{K}/controller/KafkaController.scala", "779-781"),
        ),
    ),
    Fact(
        "auto_rebalance_waits_for_reassignments",
        "The automatic leader rebalance elects nothing while any partition is being reassigned "
        "(checkAndTriggerAutoLeaderRebalance requires partitionsBeingReassigned to be empty); from 3.4 "
        "it no longer waits.",
        None,
        (3, 4, 0),
        (
            Source("2.5.1", f"{K}/controller/KafkaController.scala", "1064-1069"),
            Source("3.3.2", f"{K}/controller/KafkaController.scala", "1262-1269"),
            Source("3.4.0", f"{K}/controller/KafkaController.scala", "1270-1274"),
        ),
    ),
    Fact(
        "auto_rebalance_elects_a_stale_replica_in_the_isr",
        "The automatic leader rebalance (auto.leader.rebalance.enable) makes the preferred replica leader "
        "wherever it is alive and in the ISR (canPreferredReplicaBeLeader); nothing asks for its topic "
        "id, so a replica holding a stale one while still in the ISR is elected, and refuses.",
        (2, 8, 0),
        None,
        (
            Source("2.8.2", f"{K}/controller/KafkaController.scala", "1236-1279"),
            Source("3.6.2", f"{K}/controller/KafkaController.scala", "1291-1331"),
        ),
    ),
    Fact(
        "auto_rebalance_leaves_topics_queued_for_deletion",
        "The automatic leader rebalance leaves out topics queued for deletion, both from each broker's "
        "imbalance ratio and from the partitions it moves.",
        None,
        None,
        (
            Source("2.5.1", f"{K}/controller/KafkaController.scala", "1042-1069"),
            Source("3.6.2", f"{K}/controller/KafkaController.scala", "1291-1317"),
        ),
    ),
    Fact(
        "offline_count_leaves_out_deletions_started",
        "OfflinePartitionsCount leaves out the partitions of topics whose deletion the controller has begun "
        "(topicsWithDeletionStarted), not those only queued; before 2.3 it left out every topic queued "
        "for deletion (KafkaController.updateMetrics).",
        (2, 3, 0),
        None,
        (
            Source("1.1.1", f"{K}/controller/KafkaController.scala", "1146-1155"),
            Source("2.3.1", f"{K}/controller/ControllerContext.scala", "288-298"),
            Source("2.8.2", f"{K}/controller/ControllerContext.scala", "392-402"),
            Source("3.6.2", f"{K}/controller/ControllerContext.scala", "404-413"),
            Source("3.6.2", f"{K}/controller/TopicDeletionManager.scala", "257-272"),
        ),
    ),
    Fact(
        "offline_count_set_after_each_event",
        "OfflinePartitionsCount is the active controller's count as it stood after the last event it handled "
        "(0 on every other broker, and frozen on a controller that stands still). A broker's failure "
        "(onReplicasBecomeOffline) and a new controller's start (partitionStateMachine.startup) take "
        "partitions offline and elect their new leaders within one event, so a partition led again there is "
        "never counted: before the event the controller did not know its leader was gone, after it it had "
        "a leader.",
        None,
        None,
        (
            Source("1.1.1", f"{K}/controller/ControllerEventManager.scala", "61-75"),
            Source("1.1.1", f"{K}/controller/KafkaController.scala", "426-437"),
            Source("2.5.1", f"{K}/controller/KafkaController.scala", "439-450"),
            Source("2.5.1", f"{K}/controller/KafkaController.scala", "1868-1875"),
            Source("2.8.2", f"{K}/controller/KafkaController.scala", "262"),
            Source("2.8.2", f"{K}/controller/KafkaController.scala", "610-621"),
            Source("2.8.2", f"{K}/controller/KafkaController.scala", "1426-1431"),
            Source("2.8.2", f"{K}/controller/KafkaController.scala", "2475-2480"),
            Source("2.8.2", f"{K}/controller/PartitionStateMachine.scala", "83-97"),
            Source("3.6.2", f"{K}/controller/KafkaController.scala", "664-673"),
            Source("3.6.2", f"{K}/controller/KafkaController.scala", "1478-1500"),
            Source("3.6.2", f"{K}/controller/KafkaController.scala", "2660-2666"),
        ),
    ),
    Fact(
        "deletion_starts_when_eligible",
        "A queued topic's deletion begins (onTopicDeletion, beginTopicDeletion) when resumeDeletions finds "
        "it eligible: at its queueing, whatever reassignment is in progress (processTopicDeletion marks a "
        "reassigned topic ineligible before queueing it, and the mark takes only topics already queued), "
        "at a new controller's start unless a replica is offline or a reassignment is in "
        "progress (fetchTopicDeletionsInProgress), and when a broker holding one of its replicas registers "
        "(onBrokerStartup) or a reassignment of one of its partitions completes, both clearing its "
        "ineligibility (halted_deletion_resumes); it stays begun, halted or not, until the topic is gone "
        "or the controller resigns (resetContext): a new controller begins with none.",
        (2, 3, 0),
        None,
        (
            Source("2.3.1", f"{K}/controller/TopicDeletionManager.scala", "258-270"),
            Source("3.6.2", f"{K}/controller/TopicDeletionManager.scala", "170-177"),
            Source("3.6.2", f"{K}/controller/TopicDeletionManager.scala", "221-225"),
            Source("3.6.2", f"{K}/controller/TopicDeletionManager.scala", "257-272"),
            Source("3.6.2", f"{K}/controller/TopicDeletionManager.scala", "318-358"),
            Source("3.6.2", f"{K}/controller/KafkaController.scala", "536"),
            Source("3.6.2", f"{K}/controller/KafkaController.scala", "596-602"),
            Source("3.6.2", f"{K}/controller/KafkaController.scala", "812"),
            Source("3.6.2", f"{K}/controller/KafkaController.scala", "1019-1030"),
            Source("3.6.2", f"{K}/controller/KafkaController.scala", "1799-1810"),
        ),
    ),
    Fact(
        "under_replicated_counts_every_partition_led",
        "UnderReplicatedPartitions is counted by each broker over every partition it leads, whatever its "
        "topic's deletion state (only the controller's leader imbalance leaves out topics queued for "
        "deletion: auto_rebalance_leaves_topics_queued_for_deletion).",
        None,
        None,
        (
            Source("2.8.2", f"{K}/server/ReplicaManager.scala", "297"),
            Source("3.6.2", f"{K}/server/ReplicaManager.scala", "345"),
        ),
    ),
    Fact(
        "bounced_broker_loses_its_leadership",
        "A broker the active controller finds registered again with a newer registration (its session "
        "expired and it registered before the controller read /brokers/ids: a larger czxid, its broker "
        'epoch; "bounced brokers" in the controller\'s line) is failed and started again in one event: the '
        "partitions it led get a leader from the rest of their ISR, their state znodes written, and it "
        "leaves the others' ISR. Before 2.2 the controller compared broker ids only and did nothing.",
        (2, 2, 0),
        None,
        (
            Source("2.1.1", f"{K}/controller/KafkaController.scala", "1238-1263"),
            Source("2.2.0", f"{K}/controller/KafkaController.scala", "1291-1324"),
            Source("2.8.2", f"{K}/controller/KafkaController.scala", "1560-1607"),
            Source("3.6.2", f"{K}/controller/KafkaController.scala", "1610-1657"),
        ),
    ),
    Fact(
        "leader_and_isr_at_a_held_epoch_ignored",
        "A broker ignores a LeaderAndIsr for a partition it already runs at a leader epoch no older than the "
        "request's (STALE_CONTROLLER_EPOCH), so a new controller's LeaderAndIsr at its failover, at the "
        "epochs ZooKeeper holds, changes no broker's role and starts no leader or follower line: logged at "
        "WARN before 2.3, then at WARN for an older epoch and for the same epoch at DEBUG until 2.6 and at "
        "INFO since. A partition the process has not loaded yet (after a restart) runs at -1 and takes it "
        "('Previous leader epoch was -1'). At 3.x the same epoch with a topic id the log lacks assigns it.",
        None,
        None,
        (
            Source("1.1.1", f"{K}/server/ReplicaManager.scala", "1040-1068"),
            Source("2.3.0", f"{K}/server/ReplicaManager.scala", "1074-1106"),
            Source("2.5.1", f"{K}/server/ReplicaManager.scala", "1210-1236"),
            Source("2.8.2", f"{K}/server/ReplicaManager.scala", "1369-1398"),
            Source("2.8.2", f"{K}/cluster/Partition.scala", "237"),
            Source("2.8.2", f"{K}/cluster/Partition.scala", "572-580"),
            Source("3.6.2", f"{K}/server/ReplicaManager.scala", "1822-1885"),
        ),
    ),
    Fact(
        "new_controller_takes_registrations_as_it_finds_them",
        "A newly elected controller reads /brokers/ids once as it initializes its context and takes every "
        "broker registered then as live: one whose session expired and that registered again before that "
        "read is not seen to have gone, so its partitions keep it as their leader and no state znode is "
        "written, though it did no work while it stood still.",
        None,
        None,
        (
            Source("2.5.1", f"{K}/controller/KafkaController.scala", "725-728"),
            Source("2.8.2", f"{K}/controller/KafkaController.scala", "896-904"),
            Source("3.6.2", f"{K}/controller/KafkaController.scala", "951-959"),
        ),
    ),
    Fact(
        "expired_session_keeps_leaderships",
        "A broker whose ZooKeeper session expired keeps every role its replica manager holds: on the new "
        "session only the controller (it resigns, registers anew and runs for election), the config-change "
        "listener and the feature listener react, so a process that ran again serves what it led until a "
        "LeaderAndIsr changes that, registered or not.",
        None,
        None,
        (
            Source("2.5.1", f"{K}/controller/KafkaController.scala", "148-159"),
            Source("2.5.1", f"{K}/controller/KafkaController.scala", "1798-1806"),
            Source("2.8.2", f"{K}/controller/KafkaController.scala", "161-172"),
            Source("2.8.2", f"{K}/controller/KafkaController.scala", "2400-2408"),
            Source("3.6.2", f"{K}/controller/KafkaController.scala", "208-219"),
            Source("3.6.2", f"{K}/controller/KafkaController.scala", "2584-2592"),
        ),
    ),
    Fact(
        "failed_send_means_unreachable",
        "The controller's request thread for a broker logs that its connection 'was unsuccessful' when it "
        "could not connect within controller.socket.timeout.ms (a closed port fails at once), and that it "
        "'fails to send request ... Reconnecting' when a request's connection broke or got no answer; it "
        "retries every 100 ms until the broker is removed. Either line says the controller could not reach "
        "the broker then: one that logged nothing since was gone by that line (its own clock aside).",
        None,
        None,
        (
            Source("0.10.2.2", f"{K}/controller/ControllerChannelManager.scala", "186-205"),
            Source("0.10.2.2", f"{K}/controller/ControllerChannelManager.scala", "235-249"),
            Source("1.1.1", f"{K}/controller/ControllerChannelManager.scala", "221-241"),
            Source("1.1.1", f"{K}/controller/ControllerChannelManager.scala", "268-283"),
            Source("2.8.2", f"{K}/controller/ControllerChannelManager.scala", "242-262"),
            Source("2.8.2", f"{K}/controller/ControllerChannelManager.scala", "289-304"),
            Source("3.6.2", f"{K}/controller/ControllerChannelManager.scala", "247-268"),
            Source("3.6.2", f"{K}/controller/ControllerChannelManager.scala", "295-310"),
        ),
    ),
    Fact(
        "printed_state_names_its_version",
        "A partition's state is written to its state znode conditionally, and what Kafka keeps of it takes "
        "the version ZooKeeper's setData returned: each write of the state raises that version by one, and "
        "a line that names the version names the one the state was written at: LeaderAndIsr's zkVersion= "
        "(partitionEpoch= at 3.6), the leader's 'ISR updated to ... version updated to', and "
        "LeaderIsrAndControllerEpoch's ZkVersion: only at 2.7.2, 2.8.1-2.8.2 and from 3.1 (2.8.0 and 3.0 "
        "print it without). Ordered by that version, a topic's lines give its partitions' states in the "
        "order they were written, whichever broker's clock printed them; a version no line names is a write "
        "nobody printed.",
        None,
        None,
        (
            Source("2.5.1", f"{K}/zk/KafkaZkClient.scala", "272"),
            Source("2.5.1", f"{K}/cluster/Partition.scala", "1192-1197"),
            Source("2.8.0", f"{K}/controller/KafkaController.scala", "2568-2576"),
            Source("2.8.2", f"{K}/controller/KafkaController.scala", "2580-2589"),
            Source("2.8.2", f"{K}/zk/KafkaZkClient.scala", "274"),
            Source("2.8.2", f"{K}/cluster/Partition.scala", "1429-1431"),
            Source("3.6.2", f"{K}/zk/KafkaZkClient.scala", "370"),
            Source("3.6.2", f"{K}/cluster/Partition.scala", "1905-1908"),
        ),
    ),
    Fact(
        "registered_broker_line_prints_its_epoch",
        "A broker registers by creating its ephemeral /brokers/ids/N, and once the create returned "
        "KafkaZkClient.registerBroker logs 'Registered broker N at path /brokers/ids/N with addresses: ...'; "
        "from 2.2 the line ends with the create's czxid, the broker epoch ('czxid (broker epoch): Z'), so "
        "it names the very txn ZooKeeper made the registration at. Before 2.2 it prints no epoch.",
        (2, 2, 0),
        None,
        (
            Source("2.1.0", f"{K}/zk/KafkaZkClient.scala", "85-89"),
            Source("2.2.0", f"{K}/zk/KafkaZkClient.scala", "95-100"),
            Source("2.8.2", f"{K}/zk/KafkaZkClient.scala", "94-100"),
            Source("3.6.2", f"{K}/zk/KafkaZkClient.scala", "104-110"),
        ),
    ),
    Fact(
        "resigning_logged_by_every_expired_broker",
        "A broker whose ZooKeeper session expires runs the controller's resignation whether it was the "
        'controller or not, so "Resigning" and "Resigned" prove nothing; only the active controller has '
        "request threads to the brokers (started in onControllerFailover), which the resignation stops.",
        None,
        None,
        (
            Source("2.5.1", f"{K}/controller/KafkaController.scala", "1803-1806"),
            Source("2.8.2", f"{K}/controller/KafkaController.scala", "2405-2408"),
            Source("2.8.2", f"{K}/controller/KafkaController.scala", "450-485"),
            Source("3.6.2", f"{K}/controller/KafkaController.scala", "2589-2592"),
        ),
    ),
    Fact(
        "zk_session_timeout_18s",
        "zookeeper.session.timeout.ms defaults to 18000 (KIP-537); before 2.5 it was 6000.",
        (2, 5, 0),
        None,
        (
            Source("2.4.1", f"{K}/server/KafkaConfig.scala", "49"),
            Source("2.5.1", f"{K}/server/KafkaConfig.scala", "51"),
            Source("3.6.2", f"{K}/server/KafkaConfig.scala", "64"),
        ),
    ),
    Fact(
        "replica_lag_time_max_30s",
        "replica.lag.time.max.ms defaults to 30000 (KIP-537); before 2.5 it was 10000.",
        (2, 5, 0),
        None,
        (
            Source("1.1.1", f"{K}/server/KafkaConfig.scala", "124"),
            Source("2.4.1", f"{K}/server/KafkaConfig.scala", "131"),
            Source("2.5.1", f"{K}/server/KafkaConfig.scala", "138"),
            Source("3.6.2", f"{K}/server/KafkaConfig.scala", "138"),
        ),
    ),
    Fact(
        "produce_request_times_out",
        "A produce request waiting for its acks (DelayedProduce) is answered REQUEST_TIMED_OUT once its "
        "timeout passes, counted by kafka.server:type=DelayedProduceMetrics,name=ExpiresPerSec; the producer "
        "sends its request.timeout.ms as that timeout (30000 by default) and retries.",
        None,
        None,
        (
            Source("2.8.2", f"{K}/server/DelayedProduce.scala", "65"),
            Source("2.8.2", f"{K}/server/DelayedProduce.scala", "131-142"),
            Source(
                "2.8.2",
                "clients/src/main/java/org/apache/kafka/clients/producer/ProducerConfig.java",
                "329-331",
            ),
            Source(
                "2.8.2",
                "clients/src/main/java/org/apache/kafka/clients/producer/internals/Sender.java",
                "731",
            ),
            Source("3.6.2", f"{K}/server/DelayedProduce.scala", "72"),
            Source("3.6.2", f"{K}/server/DelayedProduce.scala", "139-145"),
            Source(
                "3.6.2",
                "clients/src/main/java/org/apache/kafka/clients/producer/ProducerConfig.java",
                "382-384",
            ),
        ),
    ),
    Fact(
        "zk_client_idle_beyond_read_timeout_means_it_stood_still",
        "A ZooKeeper client checks, at least every read timeout (2/3 of the negotiated session timeout), "
        "how long it has heard nothing from its server; past the read timeout it logs 'Client session "
        "timed out, have not heard from server in <idle>ms' and reconnects. A client that keeps running "
        "therefore logs an idle time of about the read timeout; one near or beyond the whole session "
        "timeout means its process did not run meanwhile (a long GC pause, a stalled disk, a frozen VM). "
        "The idle time is measured on a monotonic clock, so it counts the pause. Every Kafka version's "
        "bundled client (3.4 to 3.8).",
        None,
        None,
        (
            Source("release-3.5.9", f"{ZK}/ClientCnxn.java", "1178-1192"),
            Source("release-3.5.9", f"{ZK}/ClientCnxn.java", "1386"),
            Source("release-3.8.4", f"{ZK}/ClientCnxn.java", "1246-1258"),
            Source("release-3.8.4", f"{ZK}/ClientCnxn.java", "1446"),
        ),
    ),
    Fact(
        "controller_election_in_server_log",
        "The controller's election is logged by ZookeeperLeaderElector ('N successfully elected as leader'), "
        "whose kafka.server logger goes to server.log; from 0.11 KafkaController logs it, to controller.log "
        "(the shipped log4j.properties routes kafka.controller there).",
        None,
        (0, 11, 0),
        (
            Source("0.10.2.2", f"{K}/server/ZookeeperLeaderElector.scala", "83"),
            Source("0.10.2.2", "config/log4j.properties", "64-76"),
            Source("0.11.0.2", f"{K}/controller/KafkaController.scala", "1576"),
        ),
    ),
    Fact(
        "new_partition_starts_at_leader_epoch_0",
        "A partition's first state (NewPartition to OnlinePartition) is written at leader epoch 0 and znode "
        "version 0; a topic's completed deletion removes /brokers/topics/<t> with its partitions' states, "
        "so the same topic created again starts at leader epoch 0 once more.",
        None,
        None,
        (
            Source("1.1.1", f"{K}/api/LeaderAndIsr.scala", "21-26"),
            Source("2.5.1", f"{K}/controller/PartitionStateMachine.scala", "273-290"),
            Source("2.5.1", f"{K}/zk/KafkaZkClient.scala", "1086-1087"),
            Source("2.8.2", f"{K}/api/LeaderAndIsr.scala", "21-28"),
            Source("2.8.2", f"{K}/controller/PartitionStateMachine.scala", "270-287"),
            Source("3.6.2", f"{K}/api/LeaderAndIsr.scala", "24-32"),
            Source("3.6.2", f"{K}/controller/PartitionStateMachine.scala", "274-291"),
            Source("3.6.2", f"{K}/controller/TopicDeletionManager.scala", "36"),
            Source("3.6.2", f"{K}/controller/TopicDeletionManager.scala", "239-247"),
            Source("3.6.2", f"{K}/zk/KafkaZkClient.scala", "1271-1272"),
        ),
    ),
    Fact(
        "producer_retries_within_delivery_timeout",
        "With the producer's defaults from 2.1 (KIP-91: retries unbounded, delivery.timeout.ms 120 s, "
        "request.timeout.ms 30 s) a send that finds no leader is retried until delivery.timeout.ms has "
        "passed since send(), then fails; before 2.1 retries defaulted to 0.",
        (2, 1, 0),
        None,
        (
            Source("2.1.0", f"{PRODUCER}/ProducerConfig.java", "254-285"),
            Source("2.8.2", f"{PRODUCER}/ProducerConfig.java", "300-331"),
            Source("3.6.2", f"{PRODUCER}/ProducerConfig.java", "350-384"),
        ),
    ),
)
PRODUCER_DELIVERY_TIMEOUT_MS = 120_000  # `producer_retries_within_delivery_timeout`
PRODUCER_REQUEST_TIMEOUT_MS = 30_000  # `produce_request_times_out`
FACTS: dict[str, Fact] = {f.key: f for f in _FACTS + LOG_FACTS}

# ZooKeeper (release-3.8.4), whatever the Kafka version: a client pings after readTimeout / 2 idle, with
# readTimeout = 2/3 of the negotiated session timeout (ClientCnxn.java:436, 1262), and the server expires a
# session `timeout` after it last heard from it, rounded up to the next tickTime (SessionTrackerImpl).
PING_EVERY_OF_TIMEOUT = 1 / 3
TICK_MS_DEFAULT = 2000  # zoo.cfg tickTime as shipped (conf/zoo_sample.cfg)


def holds(key: str, version: str | Version | None) -> bool | None:
    return FACTS[key].holds(version)


def zk_session_timeout_default_ms(version: str | None) -> int | None:
    """zookeeper.session.timeout.ms when server.properties does not set it; None for an unknown version."""
    newer = holds("zk_session_timeout_18s", version)
    return None if newer is None else (18_000 if newer else 6_000)


def below_default(timeout_ms: int, version: str | None) -> str:
    """Where a broker's ZooKeeper session timeout is shorter than its release's default
    (`zk_session_timeout_18s`), said after how it is known: the pause, GC or network stall it survives is
    shorter than Kafka ships with, the setting the fix names; nothing at or above it, or where the version
    is not known."""
    default = zk_session_timeout_default_ms(version)
    if default is None or timeout_ms >= default:
        return ""
    return f"; below Kafka {version}'s default, {default} ms"


def replica_lag_time_max_default_ms(version: str | None) -> int | None:
    """replica.lag.time.max.ms when server.properties does not set it; None for an unknown version."""
    newer = holds("replica_lag_time_max_30s", version)
    return None if newer is None else (30_000 if newer else 10_000)


def went_silent(
    expired_ms: int, timeout_ms: int, tick_ms: int = TICK_MS_DEFAULT, heard_ms: int | None = None
) -> tuple[int, int]:
    """When a client whose session ZooKeeper expired at `expired_ms` stopped being heard (it froze, died or
    lost its network), as (earliest, latest): the server last heard from it `timeout` before the expiry,
    up to a tick more, and a live client is heard at least every third of the timeout, so it went silent
    at most that long after it was last heard. `heard_ms`: when the client itself last heard from its
    server, where its time-out line tells it: it went silent at most a third of the timeout after that
    too."""
    last_heard = expired_ms - timeout_ms
    earliest, latest = last_heard - tick_ms, last_heard + round(timeout_ms * PING_EVERY_OF_TIMEOUT)
    if heard_ms is not None:
        latest = max(earliest, min(latest, heard_ms + round(timeout_ms * PING_EVERY_OF_TIMEOUT)))
    return earliest, latest


def stood_still(idle_ms: int, timeout_ms: int) -> bool:
    """Whether a 'Client session timed out ... in <idle_ms>ms' line says the client's process did not run
    (`zk_client_idle_beyond_read_timeout_means_it_stood_still`): a running client reports about the read
    timeout (2/3 of the session's); a paused one at least the time ZooKeeper needed to expire it. The
    midpoint between the two (5/6 of the timeout) tells them apart."""
    return idle_ms * 6 > timeout_ms * 5
