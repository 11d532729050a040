"""The repair plan without ZooKeeper's state: the id the brokers' refusals (or a paste) name is taken as
current, the replicas holding another are planned in broker order without a forecast, and each script
checks against ZooKeeper, when it is run, the id, the files and the assignment before it changes anything.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import with_pastes
from pyspark.sql import SparkSession
from test_remediation import MISMATCH, broker_3_host, snapshot

from workbench import remediation
from workbench.frames import open_bundle
from workbench.remediation import from_logs
from workbench.remediation.from_logs import Named, OnDisk
from workbench.simulate.replay import cluster_of, replay

DESCRIBED = "Topic: orders\tTopicId: {id}\tPartitionCount: 6\tReplicationFactor: 3\tConfigs: \n"
TRUTH = json.loads((MISMATCH / "truth.json").read_text())


@pytest.fixture(scope="module")
def logs_plan(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    """The mismatch sample without its zk/: data dirs, logs and configs only."""
    bundle = with_pastes(tmp_path_factory.mktemp("nozk"), MISMATCH.name, {}, zk=False)
    with open_bundle(bundle, spark) as opened:
        plan = remediation.plan(opened)
    out = bundle.parent / "repair"
    plan.write(out)
    return plan, out


def test_without_zookeeper_the_refused_id_is_current_and_every_replica_holding_another_is_planned(
    logs_plan: tuple[remediation.RepairPlan, Path],
) -> None:
    plan, out = logs_plan
    expected = {
        (s["broker"], s["topic"], s["partition"], s["disk_topic_id"]) for s in TRUTH["stale_topic_ids"]
    }
    planned = {(s.broker, r.topic, r.partition, r.disk_topic_id) for s in plan.steps for r in s.replicas}
    assert planned == expected and expected
    # the id the refusals name is the one ZooKeeper held at the capture
    assert {r.zk_topic_id for s in plan.steps for r in s.replicas} == {
        s["zk_topic_id"] for s in TRUTH["stale_topic_ids"]
    }
    assert plan.forecast is None and [s.broker for s in plan.steps] == sorted(s.broker for s in plan.steps)
    refused = {
        (b, int(p))
        for b in (1, 2, 3)
        for log in (MISMATCH / "brokers" / str(b) / "logs").glob("state-change.log*")
        for p in re.findall(r"does not match the topic Id for partition orders-(\d+)", log.read_text())
    }
    # assigned where the broker refused the controller's request for it; otherwise not known, never False
    assert {(r.broker, r.partition) for s in plan.steps for r in s.replicas if r.assigned} == refused
    assert all(r.assigned in (True, None) and r.in_isr is None for s in plan.steps for r in s.replicas)
    text = (out / "PLAN.md").read_text()
    assert "| orders | current id |" not in text and "| topic | current id |" in text
    assert re.search(
        r"The current id of orders is the one named by broker \d's refusal, broker-\d:logs/", text
    )
    assert "not forecast" in text and "whether they are in the ISR is not in the bundle" in text
    assert "the forecast below" not in text and "already out of the ISR" not in text


def test_without_a_forecast_a_step_waits_only_for_partitions_no_later_step_holds_stale(
    logs_plan: tuple[remediation.RepairPlan, Path],
) -> None:
    plan, out = logs_plan
    last = {(r.topic, r.partition): n for n, s in enumerate(plan.steps, 1) for r in s.replicas}
    for n, step in enumerate(plan.steps, 1):
        text = (out / plan.script_name(n, step)).read_text()
        block = re.search(r"^REJOINS=\(\n(.*?)^\)", text, re.S | re.M)
        assert block
        waited = {(t, int(q)) for t, q in re.findall(r'"(\S+) (\d+)"', block.group(1))}
        mine = {(r.topic, r.partition) for r in step.replicas}
        assert waited == {tp for tp in mine if last[tp] == n}
        for t, q in mine - waited:
            assert f"# {t}-{q}: a replica of it holds the stale id until step {last[(t, q)]}" in text
        subprocess.run(["bash", "-n", str(out / plan.script_name(n, step))], check=True)


def test_the_current_id_is_one_every_line_names_or_none() -> None:
    named = [
        Named("orders", "new", "broker 2's refusal, broker-2:logs/state-change.log:9"),
        Named("orders", "new", "broker 1's refusal, broker-1:logs/state-change.log:4"),
        Named("audit", "a1", "broker 1's refusal, broker-1:logs/state-change.log:7"),
        Named("audit", "a2", "kafka-topics --describe printed TopicId, pasted/describe.txt:3"),
    ]
    current, gaps = from_logs.current_ids(named)
    assert current == {"orders": named[1]}
    assert len(gaps) == 1 and "names 2 ids for audit" in gaps[0] and "a1 at broker 1's refusal" in gaps[0]
    on_disk = [
        OnDisk(1, "0", "orders", 0, "old", refused=True),
        OnDisk(2, "0", "orders", 0, "new", refused=False),  # already current
        OnDisk(2, "1", "orders", 1, "old", refused=False),
        OnDisk(1, "0", "audit", 0, "a0", refused=True),  # its topic's id is not known
    ]
    planned = from_logs.stale(on_disk, current)
    assert [(r.broker, r.partition, r.assigned, r.zk_topic_id) for r in planned] == [
        (1, 0, True, "new"),
        (2, 1, None, "new"),
    ]
    assert from_logs.current_ids([]) == ({}, [])


@pytest.mark.parametrize(
    ("pastes", "said"),
    [
        ({}, "which topic id is current is unknown"),
        # a pasted describe printing the id every replica holds: nothing stale
        ({"describe.txt": DESCRIBED}, "nothing to repair"),
    ],
)  # fmt: skip
def test_without_zookeeper_nothing_is_planned_where_no_line_names_another_id(
    spark: SparkSession, tmp_path: Path, pastes: dict[str, str], said: str
) -> None:
    disk = next(iter(Path(MISMATCH.parent / "healthy-3.6").glob("brokers/1/datadirs/0/*/partition.metadata")))
    topic_id = disk.read_text().split("topic_id:")[1].strip()
    topic = disk.parent.name.rpartition("-")[0]
    pasted = {k: v.replace("orders", topic).replace("{id}", topic_id) for k, v in pastes.items()}
    with open_bundle(with_pastes(tmp_path, "healthy-3.6", pasted, zk=False), spark) as bundle:
        plan = remediation.plan(bundle)
    assert not plan.steps and said in remediation.summary(plan)


@pytest.mark.slow
def test_a_plan_from_logs_checks_zookeeper_for_the_id_and_the_assignment_before_it_acts(
    logs_plan: tuple[remediation.RepairPlan, Path], tmp_path: Path, zookeeper: Any
) -> None:
    """Broker 3's step against a real ZooKeeper holding the sample's tree: `--check` passes; with orders-5
    no longer assigned to broker 3 it stops and changes nothing; put back, `--apply` repairs and waits."""
    from kazoo.client import KazooClient

    plan, out = logs_plan
    n, step = next((n, s) for n, s in enumerate(plan.steps, 1) if s.broker == 3)
    script = str(out / plan.script_name(n, step))
    env, logs = broker_3_host(tmp_path, zookeeper.hosts, start="start", wait=60)
    before = snapshot(logs)
    assert subprocess.run([script, "--check"], env=env, capture_output=True, text=True).returncode == 0
    zk = KazooClient(hosts=zookeeper.hosts)
    zk.start()
    try:
        assigned = zk.get("/brokers/topics/orders")[0]
        topic = json.loads(assigned)
        topic["partitions"]["5"] = [b for b in topic["partitions"]["5"] if b != 3]
        zk.set("/brokers/topics/orders", json.dumps(topic, separators=(",", ":")).encode())
        moved = subprocess.run([script, "--apply", "--yes"], env=env, capture_output=True, text=True)
        zk.set("/brokers/topics/orders", assigned)
    finally:
        zk.stop()
    assert moved.returncode == 1 and "does not assign orders-5 to broker 3" in moved.stderr
    assert snapshot(logs) == before
    applied = subprocess.run([script, "--apply", "--yes"], env=env, capture_output=True, text=True)
    assert applied.returncode == 0 and "done: broker 3 is repaired" in applied.stdout, applied.stderr
    for r in step.replicas:
        assert not (logs / r.dir_name / "partition.metadata").read_text().endswith(r.disk_topic_id)


@pytest.mark.slow
def test_the_plan_from_logs_replays_to_a_repaired_cluster(
    logs_plan: tuple[remediation.RepairPlan, Path], tmp_path: Path
) -> None:
    """Played in the simulator on the cluster the sample came from (`simulate.replay`): every wait is met
    within WAIT_SECONDS, and at the end every partition is led by a replica that accepts, none is
    under-replicated and no replica holds a stale id, though the order was not forecast."""
    plan, _ = logs_plan
    r = replay(cluster_of(MISMATCH, tmp_path / "retold"), plan)
    assert (r.stalled, r.unserved, r.short, r.stale) == ([], [], [], [])
    assert r.windows, "the replay saw no partition without an acting leader: it did not run the steps"
