"""Catalog entries for what a broker writes while nothing goes wrong: segment rolls, consumer groups and
fetch sessions.

Typed so that a search can skip them (or count rebalances around an incident) rather than leave them
untyped; text and sources as in the other catalog modules.
"""

from __future__ import annotations

from workbench.kafka.messages.loggers import FETCH_SESSION, GROUP_COORDINATOR, GROUP_METADATA, LOCAL_LOG, LOG
from workbench.kafka.templates import Template as T

PRODUCER_APPEND = (
    "kafka.log.ProducerAppendInfo",
    "org.apache.kafka.storage.internals.log.ProducerAppendInfo",
)

# fmt: off
BACKGROUND = [
    # a follower's append of a batch whose producer epoch went back, logged from a val (warn(message))
    T("log.producer_epoch_stale", "Epoch of producer {producer_id} at offset {offset} in {tp} is {producer_epoch}, which is smaller than the last seen epoch {last_epoch}",
      PRODUCER_APPEND, "ProducerStateManager.scala checkProducerEpoch 2.8.2:204-208; ProducerAppendInfo.java 3.6.2:97-101"),
    T("log.producer_epoch_stale", "Producer's epoch at offset {offset} in {tp} is {producer_epoch}, which is smaller than the last seen epoch {last_epoch}",
      PRODUCER_APPEND, "ProducerStateManager.scala checkProducerEpoch 2.7.2:199-203"),
    T("log.segment_rolled", "Rolled new log segment at offset {offset} in {ms} ms.",
      LOCAL_LOG, "LocalLog.scala roll 3.6.2:511"),
    T("log.segment_rolled", "Rolled new log segment at offset {offset} in {ms} ms.",
      LOG, "Log.scala roll 2.5.1:1927 2.8.2:2092"),
    T("group.preparing_rebalance", "Preparing to rebalance group {group} in state {state} with old generation {generation} ({offsets_partition}) (reason: {reason})",
      GROUP_COORDINATOR, "GroupCoordinator.scala prepareRebalance 2.5.1:1077 2.8.2:1148 3.6.2:1450"),
    T("group.stabilized", "Stabilized group {group} generation {generation} ({offsets_partition}) with {members} members",
      GROUP_COORDINATOR, "GroupCoordinator.scala onCompleteJoin 2.8.2:1223 3.6.2:1525"),
    T("group.stabilized", "Stabilized group {group} generation {generation} ({offsets_partition})",
      GROUP_COORDINATOR, "GroupCoordinator.scala onCompleteJoin 2.5.1:1155"),
    T("group.assignment_received", "Assignment received from leader {member} for group {group} for generation {generation}. The group has {members} members, {static_members} of which are static.",
      GROUP_COORDINATOR, "GroupCoordinator.scala doSyncGroup 3.6.2:602"),
    T("group.assignment_received", "Assignment received from leader for group {group} for generation {generation}. The group has {members} members, {static_members} of which are static.",
      GROUP_COORDINATOR, "GroupCoordinator.scala doSyncGroup 2.8.2:411"),
    T("group.assignment_received", "Assignment received from leader for group {group} for generation {generation}",
      GROUP_COORDINATOR, "GroupCoordinator.scala doSyncGroup 2.5.1:389"),
    T("group.member_failed", "Member {member} in group {group} has failed, removing it from the group",
      GROUP_COORDINATOR, "GroupCoordinator.scala onExpireHeartbeat 2.5.1:1223 2.8.2:1380 3.6.2:1682"),
    T("fetcher.session_error", "Node {leader} was unable to process the fetch request with (sessionId={fetch_session}, epoch={fetch_epoch}): {error}.",
      FETCH_SESSION, "FetchSessionHandler.java handleResponse 2.5.1:403 2.8.2:403 3.6.2:528"),
    T("group.offsets_expired", "Removed {count} expired offsets in {ms} milliseconds.",
      GROUP_METADATA, "GroupMetadataManager.scala cleanupGroupMetadata 2.5.1:772 2.8.2:831 3.6.2:841"),
]
# fmt: on
