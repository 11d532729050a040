"""Kafka's behaviour about the replicas' logs (leadership, the ISR, truncation, high watermarks, log dirs),
stated once with the versions each fact holds for and its source lines; `behaviour.FACTS` holds these with
the rest, and tests/test_behaviour.py pins each."""

from __future__ import annotations

from workbench.kafka.fact import CLIENTS, Fact, K, Source

LOG_FACTS = (
    Fact(
        "broker_start_and_stop_lines",
        'KafkaServer.startup logs "starting" first and "started" last, once it is registered and serves '
        'requests; KafkaServer.shutdown logs "shutting down" first, then makes its controlled shutdown, and '
        '"shut down completed" last: a broker\'s restart is timed by its own lines.',
        None,
        None,
        (
            Source("0.10.2.2", f"{K}/server/KafkaServer.scala", "171-282"),
            Source("0.10.2.2", f"{K}/server/KafkaServer.scala", "572-612"),
            Source("2.8.2", f"{K}/server/KafkaServer.scala", "178-409"),
            Source("2.8.2", f"{K}/server/KafkaServer.scala", "657-744"),
            Source("3.6.2", f"{K}/server/KafkaServer.scala", "210-608"),
            Source("3.6.2", f"{K}/server/KafkaServer.scala", "890-994"),
        ),
    ),
    Fact(
        "partition_metadata_written_at_log_creation",
        "partition.metadata is written when the LeaderAndIsr that creates the log carries the topic id; in "
        "2.8 only a later LeaderAndIsr (to a log already attached) writes it.",
        (3, 0, 0),
        None,
        (
            Source("2.8.2", f"{K}/cluster/Partition.scala", "446-453"),
            Source("3.6.2", f"{K}/log/UnifiedLog.scala", "203-230"),
        ),
    ),
    Fact(
        "only_unclean_election_leaves_the_isr",
        "Every election picks a leader from the ISR except the offline election with "
        "unclean.leader.election.enable, which takes the first live assigned replica and writes an ISR of "
        "it alone: a leader outside the previous ISR with an ISR of itself is an unclean election.",
        None,
        None,
        (
            Source("2.5.1", f"{K}/controller/PartitionStateMachine.scala", "519-544"),
            Source("2.5.1", f"{K}/controller/Election.scala", "40-43"),
            Source("3.6.2", f"{K}/controller/PartitionStateMachine.scala", "532-557"),
            Source("3.6.2", f"{K}/controller/Election.scala", "41-44"),
        ),
    ),
    Fact(
        "unclean_election_warned",
        "Until 1.0 the controller's offline leader selector warns of an unclean election in words: \"No "
        "broker in ISR is alive for P. Elect leader L from live brokers ... There's potential data loss.\" "
        "From 1.1 no line says it: only the state it writes (an ISR of the new leader alone) and the metric.",
        None,
        (1, 1),
        (
            Source("0.10.2.2", f"{K}/controller/PartitionLeaderSelector.scala", "79-80"),
            Source("1.0.2", f"{K}/controller/PartitionLeaderSelector.scala", "79-80"),
            Source("1.1.1", f"{K}/controller/PartitionStateMachine.scala", "437-448"),
        ),
    ),
    Fact(
        "unclean_election_marks_recovering",
        "From 3.2, where the inter-broker protocol is 3.2 or later, a leader elected from outside the ISR "
        "is written with leaderRecoveryState RECOVERING (RECOVERED otherwise), which the state-change "
        "lines print.",
        (3, 2),
        None,
        (
            Source("3.2.0", f"{K}/controller/Election.scala", "45-47"),
            Source("3.2.0", f"{K}/controller/PartitionStateMachine.scala", "135"),
            Source("3.6.2", f"{K}/controller/Election.scala", "45-47"),
        ),
    ),
    Fact(
        "truncation_below_high_watermark_warned",
        "A follower whose fetcher truncates below its high watermark (committed records) warns "
        "'Truncating <tp> to offset X below high watermark H'. From 2.4 the log lowers its high watermark "
        "to the truncation offset (Log.updateLogEndOffset) before the fetcher compares them, so the "
        "warning is never written.",
        (2, 0, 0),
        (2, 4, 0),
        (
            Source("2.0.1", f"{K}/server/ReplicaFetcherThread.scala", "323-326"),
            Source("2.3.1", f"{K}/server/ReplicaFetcherThread.scala", "282-286"),
            Source("2.4.1", f"{K}/server/ReplicaFetcherThread.scala", "282-286"),
            Source("2.4.1", f"{K}/log/Log.scala", "744-751"),
            Source("3.6.2", f"{K}/log/UnifiedLog.scala", "1739-1740"),
        ),
    ),
    Fact(
        "follower_logs_its_log_end",
        "A broker made follower logs 'Follower <tp> starts at leader epoch E from offset O with high "
        "watermark H' (state.change.logger, INFO), O its log end, before its fetcher truncates anything "
        "(the fetcher is added after the line); from 3.3 only for a new leader epoch. With the fetcher's "
        "'Truncating to offset X' after it, O - X records were dropped.",
        (2, 6, 0),
        None,
        (
            Source("2.6.0", f"{K}/cluster/Partition.scala", "572-576"),
            Source("2.8.2", f"{K}/cluster/Partition.scala", "654-657"),
            Source("3.6.2", f"{K}/cluster/Partition.scala", "832-838"),
        ),
    ),
    Fact(
        "acks_all_waits_for_the_high_watermark",
        "A produce with acks=all (-1) is answered only once the leader's high watermark has reached its "
        "records (DelayedProduce asks Partition.checkEnoughReplicasReachOffset): a record at or above the "
        "high watermark was never acknowledged to an acks=all producer, only to acks=0 or 1.",
        None,
        None,
        (
            Source("2.5.1", f"{K}/cluster/Partition.scala", "738"),
            Source("2.8.2", f"{K}/cluster/Partition.scala", "839"),
            Source("3.6.2", f"{K}/cluster/Partition.scala", "1064"),
        ),
    ),
    Fact(
        "leader_epochs_not_rebuilt_after_clean_shutdown",
        "After a clean shutdown a log is not recovered, so its leader epoch cache is only what "
        "leader-epoch-checkpoint holds (recovery would rebuild it from the batches); a follower without a "
        "latest epoch truncates to its local high watermark instead of asking the leader where its epochs "
        "diverge (OffsetsForLeaderEpoch, KIP-101).",
        None,
        None,
        (
            Source("2.8.2", f"{K}/log/Log.scala", "892-902"),
            Source("2.8.2", f"{K}/server/AbstractFetcherThread.scala", "160-184"),
            Source("2.8.2", f"{K}/server/AbstractFetcherThread.scala", "246-255"),
            Source("3.6.2", f"{K}/log/LogLoader.scala", "415"),
            Source("3.6.2", f"{K}/server/AbstractFetcherThread.scala", "148-173"),
        ),
    ),
    Fact(
        "leader_is_first_live_isr_replica",
        "The offline election and the controlled-shutdown election both take the first replica in "
        "assignment order that is alive and in the ISR (controlled shutdown: and not shutting down); with "
        "none, the partition keeps no leader (unless unclean election is enabled, offline only).",
        None,
        None,
        (
            Source("2.5.1", f"{K}/controller/PartitionStateMachine.scala", "519-542"),
            Source("2.8.2", f"{K}/controller/PartitionStateMachine.scala", "523-546"),
            Source("3.6.2", f"{K}/controller/PartitionStateMachine.scala", "532-555"),
        ),
    ),
    Fact(
        "offline_in_the_tree",
        "A partition is offline as the controller counts it (OfflinePartition, OfflinePartitionsCount) when "
        "its state znode's leader is -1 or a broker that is not live; one without a state znode is new. A "
        "broker's failure is handled in one event: its partitions are elected first, then its replicas go "
        "offline, which writes leader -1 where no leader could be elected; a state still naming a broker "
        "not registered is one no controller has handled yet.",
        None,
        None,
        (
            Source("2.5.1", f"{K}/controller/PartitionStateMachine.scala", "82-97"),
            Source("2.5.1", f"{K}/controller/KafkaController.scala", "439-452"),
            Source("2.8.2", f"{K}/controller/PartitionStateMachine.scala", "83-98"),
            Source("2.8.2", f"{K}/controller/KafkaController.scala", "610-621"),
            Source("3.6.2", f"{K}/controller/PartitionStateMachine.scala", "85-100"),
            Source("3.6.2", f"{K}/controller/KafkaController.scala", "664-675"),
            Source("3.6.2", f"{K}/controller/ReplicaStateMachine.scala", "344-345"),
        ),
    ),
    Fact(
        "last_isr_member_kept",
        "A replica going offline leaves the ISR, except the last member, which stays: a partition whose "
        "leader was alone in the ISR goes to no leader with that ISR, and comes back only with that broker.",
        None,
        None,
        (
            Source("2.5.1", f"{K}/controller/ReplicaStateMachine.scala", "331-332"),
            Source("2.8.2", f"{K}/controller/ReplicaStateMachine.scala", "344-345"),
            Source("3.6.2", f"{K}/controller/ReplicaStateMachine.scala", "344-345"),
        ),
    ),
    Fact(
        "under_replicated_signals",
        "`kafka-topics --describe --under-replicated-partitions` lists a partition whose ISR (ZooKeeper's, "
        "through the metadata) is smaller than its replicas (TopicCommand isUnderReplicated); the "
        "UnderReplicatedPartitions metric is each broker's count over the partitions it leads "
        "(ReplicaManager.underReplicatedPartitionCount), so a partition nobody leads is in no count.",
        None,
        None,
        (
            Source("2.5.1", f"{K}/admin/TopicCommand.scala", "123-125"),
            Source("2.5.1", f"{K}/server/ReplicaManager.scala", "252"),
            Source("2.8.2", f"{K}/admin/TopicCommand.scala", "136-138"),
            Source("2.8.2", f"{K}/server/ReplicaManager.scala", "297"),
            Source("3.6.2", f"{K}/admin/TopicCommand.scala", "127-129"),
            Source("3.6.2", f"{K}/server/ReplicaManager.scala", "345"),
        ),
    ),
    Fact(
        "controlled_shutdown_keeps_a_sole_isr_leader",
        "A controlled shutdown moves a partition's leadership only to another live in-sync replica; with "
        "none, the election fails and the broker keeps it, retries, then shuts down uncleanly ('Proceeding "
        "to do an unclean shutdown as all the controlled shutdown attempts failed'): the partition is "
        "offline until the broker returns (`last_isr_member_kept`).",
        None,
        None,
        (
            Source("2.5.1", f"{K}/controller/PartitionStateMachine.scala", "540-542"),
            Source("2.5.1", f"{K}/server/KafkaServer.scala", "589"),
            Source("2.8.2", f"{K}/server/KafkaServer.scala", "647"),
            Source("3.6.2", f"{K}/controller/PartitionStateMachine.scala", "553-555"),
            Source("3.6.2", f"{K}/server/KafkaServer.scala", "880"),
        ),
    ),
    Fact(
        "follower_fetches_only_at_its_leaders_epoch",
        "A leader answers a fetch carrying an older leader epoch than its own with FENCED_LEADER_EPOCH and a "
        "newer one with UNKNOWN_LEADER_EPOCH. A fenced follower stops fetching until a new LeaderAndIsr (a "
        "replica with a stale id refuses it, so it leaves the ISR); one ahead of its leader retries and "
        "never catches up (a repaired follower of a leader that refused the current epoch).",
        None,
        None,
        (
            Source("2.5.1", f"{K}/cluster/Partition.scala", "328-341"),
            Source("2.8.2", f"{K}/cluster/Partition.scala", "359-371"),
            Source("2.8.2", f"{K}/server/AbstractFetcherThread.scala", "302-315"),
            Source("2.8.2", f"{K}/server/AbstractFetcherThread.scala", "407-414"),
            Source("3.6.2", f"{K}/cluster/Partition.scala", "478-490"),
            Source("3.6.2", f"{K}/server/AbstractFetcherThread.scala", "293-306"),
        ),
    ),
    Fact(
        "delete_dirs_queued_again_at_startup",
        "A broker that starts queues every '-delete' dir it finds for deletion again (LogManager.loadLog): "
        "a dir whose removal failed, or that a crash left, goes once the cause is fixed and the broker "
        "restarted.",
        None,
        None,
        (
            Source("2.5.1", f"{K}/log/LogManager.scala", "274-275"),
            Source("2.8.2", f"{K}/log/LogManager.scala", "275-276"),
            Source("3.6.2", f"{K}/log/LogManager.scala", "313-314"),
        ),
    ),
    Fact(
        "halted_broker_leaves_its_session_to_expire",
        "A broker that halts for a failed log dir ('Halting broker because dir D is offline', 'Shutdown "
        "broker because all log dirs in ... have failed', at FATAL) calls Exit.halt, which is "
        "Runtime.halt: the JVM stops at once without running its shutdown hooks, so KafkaServer.shutdown "
        "(the 'kafka-shutdown-hook') never runs and never closes its ZooKeeper session. The halt line is "
        "its last, and ZooKeeper expires the session a session timeout later.",
        None,
        None,
        (
            Source("1.1.1", f"{K}/log/LogManager.scala", "190-191"),
            Source("1.1.1", f"{K}/server/ReplicaManager.scala", "196-197"),
            Source("1.1.1", f"{K}/Kafka.scala", "71-72"),
            Source("1.1.1", f"{CLIENTS}/common/utils/Exit.java", "29-32"),
            Source("2.8.2", f"{K}/log/LogManager.scala", "193-194"),
            Source("2.8.2", f"{K}/server/ReplicaManager.scala", "272-273"),
            Source("2.8.2", f"{K}/utils/Exit.scala", "32-35"),
            Source("2.8.2", f"{CLIENTS}/common/utils/Exit.java", "33-36"),
            Source("2.8.2", f"{K}/Kafka.scala", "99-100"),
            Source("3.6.2", f"{K}/log/LogManager.scala", "221-222"),
            Source("3.6.2", f"{K}/server/ReplicaManager.scala", "311-312"),
            Source("3.6.2", f"{CLIENTS}/common/utils/Exit.java", "35"),
            Source("3.6.2", f"{K}/Kafka.scala", "103-104"),
        ),
    ),
    Fact(
        "failed_log_dir_takes_its_replicas_offline",
        "A broker whose log dir fails stops serving every replica in it ('Stopping serving replicas in "
        "dir D') and tells the controller; it halts instead ('Halting broker because dir D is offline') "
        "where its inter-broker protocol is older than 1.0, and when the dir was its last one ('Shutdown "
        "broker because all log dirs in ... have failed').",
        None,
        None,
        (
            Source("2.5.1", f"{K}/server/ReplicaManager.scala", "224-230"),
            Source("2.5.1", f"{K}/log/LogManager.scala", "190-194"),
            Source("2.8.2", f"{K}/server/ReplicaManager.scala", "269-275"),
            Source("2.8.2", f"{K}/server/ReplicaManager.scala", "326-331"),
            Source("2.8.2", f"{K}/server/ReplicaManager.scala", "1837-1874"),
            Source("2.8.2", f"{K}/log/LogManager.scala", "191-195"),
            Source("3.6.2", f"{K}/server/ReplicaManager.scala", "308-314"),
            Source("3.6.2", f"{K}/log/LogManager.scala", "219-223"),
        ),
    ),
    Fact(
        "acks_all_answered_at_the_high_watermark",
        "A produce request with acks=all is answered only once the leader's high watermark reaches its "
        "records (checkEnoughReplicasReachOffset), and the high watermark is the least end offset of the "
        "ISR's replicas: a follower in the ISR that stopped keeping up holds every acks=all request to the "
        "partition until it catches up or its leader drops it from the ISR ('Shrinking ISR', once it has "
        "not caught up for replica.lag.time.max.ms, checked every half of that). acks=0 and 1 are not held.",
        None,
        None,
        (
            Source("2.5.1", f"{K}/cluster/Partition.scala", "716-738"),
            Source("2.8.2", f"{K}/cluster/Partition.scala", "817-839"),
            Source("2.8.2", f"{K}/server/ReplicaManager.scala", "324"),
            Source("3.6.2", f"{K}/cluster/Partition.scala", "1042-1064"),
            Source("3.6.2", f"{K}/server/ReplicaManager.scala", "376"),
        ),
    ),
    Fact(
        "shrink_line_prints_high_watermark",
        "The leader's 'Shrinking ISR' line prints its high watermark and end offset, and each dropped "
        "replica's end offset, from 2.2; before, only the ISRs.",
        (2, 2, 0),
        None,
        (
            Source("2.1.1", f"{K}/cluster/Partition.scala", "639"),
            Source("2.2.0", f"{K}/cluster/Partition.scala", "642"),
            Source("2.8.2", f"{K}/cluster/Partition.scala", "947-955"),
        ),
    ),
    Fact(
        "shrink_line_prints_last_caught_up",
        "The leader's 'Shrinking ISR' line prints each dropped replica's lastCaughtUpTimeMs (its clock) "
        "beside its endOffset from 3.6; before, only the endOffset (2.5 to 3.5).",
        (3, 6, 0),
        None,
        (
            Source("3.5.2", f"{K}/cluster/Partition.scala", "1161-1171"),
            Source("3.6.2", f"{K}/cluster/Partition.scala", "1186-1200"),
        ),
    ),
)
