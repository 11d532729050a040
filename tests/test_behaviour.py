"""Each fact about Kafka's behaviour pinned at the versions on both sides of its bounds, and cited."""

from __future__ import annotations

import re

import pytest

from workbench.kafka import behaviour
from workbench.kafka.behaviour import FACTS, holds, parse, went_silent, zk_session_timeout_default_ms
from workbench.model.outage import silence

# fact -> (versions it holds for, versions it does not), read at the tags its sources name
PINNED = {
    "first_leader_and_isr_refused": (("3.0.0", "3.6.2", "3.9.1"), ("2.8.0", "2.8.2")),
    "partition_metadata_written_at_log_creation": (("3.0.0", "3.6.2"), ("2.8.1", "2.8.2")),
    "topic_ids": (("2.8.0", "3.6.2"), ("2.7.2", "2.5.1")),
    "leader_and_isr_carries_the_controllers_topic_id": (("2.8.0", "3.6.2", "3.9.0"), ("2.7.2",)),
    "topic_znode_v2": (("2.4.0", "2.5.1", "2.7.2"), ("2.3.1", "2.8.0")),
    "topic_znode_v3": (("2.8.0", "3.9.0"), ("2.7.2",)),
    "replica_state_changes_logged_by_default": (("2.4.1", "2.5.1"), ("2.6.0", "2.8.2", "3.6.2")),
    "topic_deletion_disabled_error": (("2.1.0", "2.8.2"), ("2.0.1", "1.1.1")),
    "reassignment_of_deleted_topic_refused": (("2.5.1", "3.6.2"), ()),
    "offline_replicas_halt_deletion": (("2.5.1", "2.8.2", "3.6.2"), ()),
    "deletion_blocks_election": (("2.5.1", "2.8.2", "3.6.2"), ()),
    "acks_all_answered_at_the_high_watermark": (("2.5.1", "2.8.2", "3.6.2"), ()),
    "produce_request_times_out": (("2.5.1", "2.8.2", "3.6.2"), ()),
    "shrink_line_prints_last_caught_up": (("3.6.0", "3.6.2"), ("3.5.2", "2.8.2")),
    "shrink_line_prints_high_watermark": (("2.2.0", "2.8.2", "3.6.2"), ("2.1.1", "1.1.1")),
    "reassignment_completes_with_its_targets_in_the_isr": (("2.5.1", "2.8.2", "3.6.2"), ()),
    "producer_retries_within_delivery_timeout": (("2.1.0", "2.8.2", "3.6.2"), ("2.0.1", "1.1.1")),
    "halted_deletion_resumes": (("2.5.1", "2.8.2", "3.6.2"), ()),
    "ready_before_reassignments_and_deletions": (("2.5.1", "3.6.2"), ()),
    "zk_session_timeout_18s": (("2.5.0", "3.6.2"), ("2.4.1", "1.1.1")),
    "replica_lag_time_max_30s": (("2.5.0", "3.6.2"), ("2.4.1", "1.1.1")),
    "refused_leader_and_isr_keeps_role": (("2.8.0", "3.6.2"), ("2.7.2", "2.5.1")),
    "controller_acts_only_on_storage_errors": (("2.5.1", "2.8.2", "3.6.2"), ()),
    "leader_is_first_live_isr_replica": (("2.5.1", "2.8.2", "3.6.2"), ()),
    "last_isr_member_kept": (("2.5.1", "2.8.2", "3.6.2"), ()),
    "controlled_shutdown_keeps_a_sole_isr_leader": (("2.5.1", "2.8.2", "3.6.2"), ()),
    "under_replicated_signals": (("2.5.1", "2.8.2", "3.6.2"), ()),
    "follower_fetches_only_at_its_leaders_epoch": (("2.5.1", "2.8.2", "3.6.2"), ()),
    "reassignment_blocks_deletion": (("2.5.1", "2.8.2", "3.6.2"), ()),
    "auto_rebalance_waits_for_reassignments": (("2.5.1", "2.8.2", "3.3.2"), ("3.4.0", "3.6.2")),
    "auto_rebalance_leaves_topics_queued_for_deletion": (("2.5.1", "3.6.2"), ()),
    "offline_count_leaves_out_deletions_started": (("2.3.0", "2.8.2", "3.6.2"), ("2.2.2", "1.1.1")),
    "offline_count_set_after_each_event": (("1.1.1", "2.5.1", "2.8.2", "3.6.2"), ()),
    "deletion_starts_when_eligible": (("2.3.0", "2.8.2", "3.6.2"), ("2.2.2", "1.1.1")),
    "under_replicated_counts_every_partition_led": (("2.5.1", "2.8.2", "3.6.2"), ()),
    "auto_rebalance_elects_a_stale_replica_in_the_isr": (("2.8.0", "2.8.2", "3.6.2"), ("2.7.2", "2.5.1")),
    "only_unclean_election_leaves_the_isr": (("2.5.1", "2.8.2", "3.6.2"), ()),
    "bounced_broker_loses_its_leadership": (("2.2.0", "2.8.2", "3.6.2"), ("2.1.1", "1.1.1")),
    "new_controller_takes_registrations_as_it_finds_them": (("2.5.1", "2.8.2", "3.6.2"), ()),
    "leader_and_isr_at_a_held_epoch_ignored": (("1.1.1", "2.5.1", "2.8.2", "3.6.2"), ()),
    "expired_session_keeps_leaderships": (("2.5.1", "2.8.2", "3.6.2"), ()),
    "failed_send_means_unreachable": (("0.10.2.2", "1.1.1", "2.8.2", "3.6.2"), ()),
    "printed_state_names_its_version": (("2.5.1", "2.8.2", "3.6.2"), ()),
    "registered_broker_line_prints_its_epoch": (("2.2.0", "2.8.2", "3.6.2"), ("2.1.0", "1.1.1")),
    "resigning_logged_by_every_expired_broker": (("2.5.1", "2.8.2", "3.6.2"), ()),
    "broker_start_and_stop_lines": (("0.10.2.2", "2.8.2", "3.6.2", "3.9.0"), ()),
    "unclean_election_warned": (("0.10.2", "1.0.2"), ("1.1.1", "2.5.1")),
    "unclean_election_marks_recovering": (("3.2.0", "3.6.2"), ("3.1.2", "2.8.2")),
    "truncation_below_high_watermark_warned": (("2.0.1", "2.3.1"), ("1.1.1", "2.4.1", "2.8.2", "3.6.2")),
    "follower_logs_its_log_end": (("2.6.0", "2.8.2", "3.6.2"), ("2.5.1", "1.1.1")),
    "acks_all_waits_for_the_high_watermark": (("0.10.2.2", "2.5.1", "3.6.2"), ()),
    "leader_epochs_not_rebuilt_after_clean_shutdown": (("2.5.1", "2.8.2", "3.6.2"), ()),
    "zk_client_idle_beyond_read_timeout_means_it_stood_still": (("1.1.1", "2.8.2", "3.6.2"), ()),
    "failed_log_dir_takes_its_replicas_offline": (("2.5.1", "2.8.2", "3.6.2"), ()),
    "offline_in_the_tree": (("2.5.1", "2.8.2", "3.6.2"), ()),
    "halted_broker_leaves_its_session_to_expire": (("1.1.1", "2.8.2", "3.6.2"), ()),
    "delete_dirs_queued_again_at_startup": (("2.5.1", "2.8.2", "3.6.2"), ()),
    "new_partition_starts_at_leader_epoch_0": (("1.1.1", "2.5.1", "2.8.2", "3.6.2"), ()),
    "controller_election_in_server_log": (("0.10.2.2",), ("0.11.0.2", "1.0.2", "2.8.2")),
}


def test_every_fact_is_pinned() -> None:
    assert set(PINNED) == set(FACTS)


@pytest.mark.parametrize("key", sorted(PINNED))
def test_fact_holds_where_its_source_says(key: str) -> None:
    yes, no = PINNED[key]
    assert [holds(key, v) for v in yes] == [True] * len(yes)
    assert [holds(key, v) for v in no] == [False] * len(no)
    assert holds(key, None) is None


@pytest.mark.parametrize("key", sorted(PINNED))
def test_fact_is_cited_at_a_release_tag(key: str) -> None:
    fact = FACTS[key]
    assert fact.claim and fact.sources
    for s in fact.sources:
        assert re.fullmatch(r"(release-)?\d+\.\d+\.\d+(\.\d+)?", s.tag), s
        assert re.fullmatch(r"\d+(-\d+)?", s.lines), s
        assert s.path.endswith((".scala", ".java", ".properties")), s
    tags = [t for t in (parse(s.tag) for s in fact.sources) if t is not None]
    # the behaviour is read at a tag where it holds, and a change at a tag on each side of it
    if fact.since is not None:
        assert any(t >= fact.since for t in tags), key
    if fact.until is not None:
        assert any(t < fact.until for t in tags) and any(t >= fact.until for t in tags), key


def test_session_timeout_default_by_version() -> None:
    assert zk_session_timeout_default_ms("2.4.1") == 6000
    assert zk_session_timeout_default_ms("2.8.2") == 18000
    assert zk_session_timeout_default_ms(None) is None
    # a shorter timeout is said beside it, the release's default named (the fix's setting, with its number)
    assert behaviour.below_default(10_000, "3.6.2") == "; below Kafka 3.6.2's default, 18000 ms"
    assert behaviour.below_default(10_000, "2.4.1") == ""  # 6000 ms before 2.5
    assert behaviour.below_default(4_000, "2.4.1") == "; below Kafka 2.4.1's default, 6000 ms"
    assert behaviour.below_default(18_000, "2.8.2") == behaviour.below_default(4_000, None) == ""
    assert behaviour.replica_lag_time_max_default_ms("1.1.1") == 10_000
    assert behaviour.replica_lag_time_max_default_ms("2.5.1") == 30_000


def test_a_session_expiry_bounds_when_the_client_went_silent() -> None:
    # heard last between 20 s and 22 s before the expiry (a tick of 2 s), silent at most 6 s after that
    assert went_silent(100_000, 18_000) == (80_000, 88_000)
    # the simulator's crash (expiry = crash + timeout + up to a tick) always lies inside the window
    for jitter in (0, 1_000, behaviour.TICK_MS_DEFAULT):
        crash = 50_000
        earliest, latest = went_silent(crash + 18_000 + jitter, 18_000)
        assert earliest <= crash <= latest


def test_a_silent_brokers_bounds_take_its_last_sign_and_the_controllers_failed_send() -> None:
    """`outage.silence`, the one reckoning of when a broker whose session expired went silent, with
    ZooKeeper's history (its expiry) and from the lines alone (the controller's handling of its failure)."""
    assert silence(100_000, 18_000, None, None, None) == (80_000, 88_000, False)
    # its last line after the earliest the expiry allows: it lived until then
    assert silence(100_000, 18_000, None, 85_000, None) == (85_000, 88_000, False)
    assert silence(100_000, 18_000, None, 70_000, None) == (80_000, 88_000, True)  # heard after it
    # the controller failed to send to it at 83 s: gone by then
    assert silence(100_000, 18_000, None, 70_000, 83_000) == (80_000, 83_000, True)
    # a send before the window (the expiry's time stands for a later one): the send is the proof
    assert silence(100_000, 18_000, None, None, 75_000) == (75_000, 75_000, False)


def test_a_client_that_stood_still_is_told_from_one_that_heard_nothing() -> None:
    # a running client times out at the read timeout (12 s of 18 s); a paused one reports the pause
    assert not behaviour.stood_still(12_003, 18_000)
    assert behaviour.stood_still(17_800, 18_000)  # heard last just after its last ping went out
    assert behaviour.stood_still(41_000, 18_000)
