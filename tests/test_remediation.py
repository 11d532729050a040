"""The topic-id repair plan: exactly the stale replicas the simulator left, the controller last, and scripts
that change nothing unless told to. The --apply run goes against a real ZooKeeper holding the sample's
tree (ZooKeeper's own CLI stands in for Kafka's zookeeper-shell.sh, which wraps it); the broker itself
cannot run here, so its stop and start are two small programs that do what a broker does in ZooKeeper and
on disk: drop or make its registration, record ZooKeeper's topic id in a dir without one, rejoin the ISR."""

from __future__ import annotations

import json
import os
import pwd
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import SAMPLE_DATA
from pyspark.sql import SparkSession

from workbench import hazards, remediation
from workbench.analysis.findings import Finding
from workbench.cli import main
from workbench.frames import Bundle, open_bundle
from workbench.testing.zookeeper import SHORT_LIVED_JVM, classpath

MISMATCH = SAMPLE_DATA / "topicid-mismatch-2.8"


@pytest.fixture(scope="module")
def mismatch_plan(
    sample: Callable[[str], Bundle], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Any, Path]:
    plan = remediation.plan(sample(MISMATCH.name))
    out = tmp_path_factory.mktemp("plan") / "repair"
    plan.write(out)
    return plan, out


def test_the_plan_names_exactly_the_stale_replicas_in_the_order_its_forecast_chose(
    mismatch_plan: tuple[remediation.RepairPlan, Path],
) -> None:
    plan, out = mismatch_plan
    truth = json.loads((MISMATCH / "truth.json").read_text())
    expected = {
        (s["broker"], s["topic"], s["partition"], s["disk_topic_id"]) for s in truth["stale_topic_ids"]
    }
    planned = {(s.broker, r.topic, r.partition, r.disk_topic_id) for s in plan.steps for r in s.replicas}
    assert planned == expected and expected
    out_of_isr = {(s["broker"], s["partition"]) for s in truth["stale_topic_ids"] if not s["in_isr"]}
    assert {
        (r.broker, r.partition) for s in plan.steps for r in s.replicas if r.in_isr is False
    } == out_of_isr
    controller = truth["controllers"][-1]["broker"]
    assert [s.broker for s in plan.steps if s.controller] == [controller]
    assert plan.forecast is not None and [s.broker for s in plan.steps] == plan.forecast.order
    # broker 3 leads orders-2 and -5, whose every replica is stale: last, so that they are offline only
    # while it restarts, not from an earlier step on
    assert plan.steps[-1].broker == 3
    scripts = sorted(out.glob("step-*.sh"))
    assert [p.name for p in scripts] == [plan.script_name(n, s) for n, s in enumerate(plan.steps, 1)]
    for path, foretold in zip(scripts, plan.forecast.steps, strict=True):
        text = path.read_text()
        for name, tps in (("REJOINS", foretold.rejoins), ("WHOLE", foretold.whole)):
            block = re.search(rf"^{name}=\(\n(.*?)^\)", text, re.S | re.M)
            assert block, (path, name)
            listed = [(t, int(q)) for t, q in re.findall(r'"(\S+) (\d+)"', block.group(1))]
            assert listed == tps, (path, name)
        for t, q in foretold.later:  # not waited for: said why
            assert f"# {t}-{q}: this broker gets back into its ISR only" in text
        assert os.access(path, os.X_OK)
        subprocess.run(["bash", "-n", str(path)], check=True)
        assert "not lossless for availability" in text.replace("\n# ", " ")
    text = (out / "PLAN.md").read_text()
    assert remediation.WARNING in text and "Undo" in text
    for n, step in enumerate(plan.steps, 1):
        assert f"{n}. `{plan.script_name(n, step)}` on broker {step.broker}" in text
    assert "| orders-2 | none | while broker 3 restarts (step 3) |" in text
    assert "Run step(s) 3 in a maintenance window" in text


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("healthy-3.6", "nothing to repair"),
        ("deletion-stuck-2.8", "nothing to repair"),
        ("controller-failover-2.5", "has no topic ids"),
    ],
)
def test_no_plan_where_no_replica_is_stale(
    sample: Callable[[str], Bundle], tmp_path: Path, name: str, said: str
) -> None:
    plan = remediation.plan(sample(name))
    written = plan.write(tmp_path / "plan")
    assert not plan.steps and [p.name for p in written] == ["PLAN.md"]
    assert said in written[0].read_text()


def broker_3_step(
    plan: remediation.RepairPlan, out: Path, broker: int = 3
) -> tuple[remediation.BrokerStep, str]:
    """A broker's step and its script; broker 3's is the smallest: two stale replicas, both in the ISR at
    the capture."""
    n, step = next((n, s) for n, s in enumerate(plan.steps, 1) if s.broker == broker)
    return step, str(out / plan.script_name(n, step))


def host_log_dir(tmp_path: Path, broker: int) -> Path:
    """The broker's log dir as the bundle copied it: meta.properties and the partition dirs' metadata."""
    return Path(
        shutil.copytree(MISMATCH / "brokers" / str(broker) / "datadirs" / "0", tmp_path / "kafka-logs")
    )


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_dry_run_changes_nothing_and_prints_every_change(
    mismatch_plan: tuple[remediation.RepairPlan, Path], tmp_path: Path
) -> None:
    step, script = broker_3_step(*mismatch_plan)
    logs = host_log_dir(tmp_path, 3)
    before = snapshot(logs)
    env = {**os.environ, "LOG_DIR_0": str(logs), "BACKUP_DIR": str(tmp_path / "backup")}
    run = subprocess.run([script], env=env, capture_output=True, text=True, check=True)
    assert snapshot(logs) == before and not (tmp_path / "backup").exists()
    for r in step.replicas:
        assert f"would run: rm -f {logs}/{r.dir_name}/partition.metadata" in run.stdout
        # not rebuilt after a clean shutdown: removed only when asked for
        assert f"{r.dir_name}/leader-epoch-checkpoint" not in run.stdout
    assert "would run: systemctl stop kafka" in run.stdout
    # broker 3 alone holds orders 2 and 5 in sync: its step takes them offline, and says so first
    said = run.stdout.index("this step leaves 2 partition(s) without an acting leader")
    assert said < run.stdout.index("would run: systemctl stop kafka")
    assert "  orders-2: while broker 3 restarts (step 3)" in run.stdout and "would ask before" in run.stdout
    assert "leads 2 partition(s) with no other ISR member (orders-2 orders-5)" in run.stdout
    assert "'Proceeding to do an unclean" in run.stdout
    # the bundle's brokers have auto.leader.rebalance.enable=true: the controller may elect a stale replica
    assert "note: auto.leader.rebalance.enable is true" in run.stdout
    props = tmp_path / "server.properties"
    props.write_text("broker.id=3\nauto.leader.rebalance.enable = false\n")
    off = subprocess.run([script], env={**env, "SERVER_PROPERTIES": str(props)}, capture_output=True,
                         text=True, check=True)  # fmt: skip
    assert "auto.leader.rebalance.enable" not in off.stdout
    asked = subprocess.run(
        [script],
        env={**env, "REMOVE_LEADER_EPOCH_CHECKPOINT": "yes"},
        capture_output=True,
        text=True,
        check=True,
    )
    for r in step.replicas:
        assert f"would run: rm -f {logs}/{r.dir_name}/leader-epoch-checkpoint" in asked.stdout


BROKER = """import json, sys
from pathlib import Path
from typing import Any
from kazoo.client import KazooClient
zk = KazooClient(hosts=sys.argv[1]); zk.start()
broker, logs = int(sys.argv[2]), Path(sys.argv[3])
path = f"/brokers/ids/{broker}"
if sys.argv[4] == "stop":
    zk.delete(path)
else:
    for d in sorted(p for p in logs.iterdir() if p.is_dir()):
        topic, _, partition = d.name.rpartition("-")
        repaired = not (d / "partition.metadata").exists()
        if repaired:
            topic_id = json.loads(zk.get(f"/brokers/topics/{topic}")[0])["topic_id"]
            (d / "partition.metadata").write_text(f"version: 0\\ntopic_id: {topic_id}")
        state = f"/brokers/topics/{topic}/partitions/{partition}/state"
        if repaired and sys.argv[4] == "start-refusing":  # still refusing: it never rejoins these
            continue
        s = json.loads(zk.get(state)[0])
        s["isr"] = sorted(set(s["isr"]) | {broker})
        zk.set(state, json.dumps(s, separators=(",", ":")).encode())
    zk.create(path, json.dumps({"endpoints": [f"PLAINTEXT://kafka-{broker}:9092"]}).encode())
zk.stop()
"""


def kafka_bin(tmp_path: Path) -> Path:
    """zookeeper-shell.sh as ZooKeeper's own CLI (Kafka's is a wrapper of it, host first, that takes
    `-zk-tls-config-file FILE` next: ZooKeeperMainWithTlsSupportForKafka 2.5.1:29; noted in `zk-tls`)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shell = bin_dir / "zookeeper-shell.sh"
    main_class = f"java {' '.join(SHORT_LIVED_JVM)} -cp {classpath()} org.apache.zookeeper.ZooKeeperMain"
    tls = f'if [ "$1" = -zk-tls-config-file ]; then echo "$2" > {bin_dir}/zk-tls; shift 2; fi\n'
    shell.write_text(f'#!/bin/sh\nhost=$1; shift\n{tls}exec {main_class} -server "$host" "$@"\n')
    for p in bin_dir.iterdir():
        p.chmod(0o755)
    return bin_dir


def load_tree(hosts: str, out_of_isr: set[int], whole: bool = False) -> None:
    """The sample's ZooKeeper tree, with `out_of_isr` taken out of every ISR (their refused replicas left);
    `whole`: every other replica back in (the earlier steps done)."""
    from kazoo.client import KazooClient

    zk = KazooClient(hosts=hosts)
    zk.start()
    try:
        znodes = [json.loads(line) for line in (MISMATCH / "zk" / "znodes.jsonl").read_text().splitlines()]
        assigned = {
            z["path"].split("/")[3]: json.loads(z["data"])["partitions"]
            for z in znodes
            if z["path"].count("/") == 3 and z["path"].startswith("/brokers/topics/")
        }
        for z in znodes:
            if z["path"] != "/" and not z["path"].startswith("/zookeeper"):
                data = z["data"] or ""
                if z["path"].endswith("/state"):
                    state = json.loads(data)
                    if whole:
                        topic, _, partition, _ = z["path"].split("/")[3:]
                        state["isr"] = assigned[topic][partition]
                    state["isr"] = [b for b in state["isr"] if b not in out_of_isr]
                    data = json.dumps(state, separators=(",", ":"))
                zk.ensure_path(z["path"])
                zk.set(z["path"], data.encode())
    finally:
        zk.stop()


def broker_3_host(
    tmp_path: Path,
    hosts: str,
    start: str,
    wait: int,
    broker_id: int = 3,
    also_out: frozenset[int] = frozenset(),
) -> tuple[dict[str, str], Path]:
    """A broker's host (3's unless said: the last step): its log dir, ZooKeeper with the sample's tree as
    the earlier steps leave it (every replica in its ISR but the broker's, and `also_out`'s), the stand-in
    broker's stop and `start`, and the script's settings."""
    load_tree(hosts, out_of_isr={broker_id, *also_out}, whole=True)
    logs = host_log_dir(tmp_path, broker_id)
    (tmp_path / "broker.py").write_text(BROKER)
    broker = f"{sys.executable} {tmp_path / 'broker.py'} {hosts} {broker_id} {logs}"
    env = {
        **os.environ,
        "LOG_DIR_0": str(logs),
        "BACKUP_DIR": str(tmp_path / "backup"),
        "KAFKA_BIN": str(kafka_bin(tmp_path)),
        "ZOOKEEPER": hosts,
        "STOP_BROKER": f"{broker} stop",
        "START_BROKER": f"{broker} {start}",
        "WAIT_SECONDS": str(wait),
        "POLL_SECONDS": "1",  # the stand-in broker registers and rejoins within a second
    }
    return env, logs


@pytest.mark.slow
def test_apply_backs_up_removes_restarts_and_waits_for_the_broker_to_rejoin(
    mismatch_plan: tuple[remediation.RepairPlan, Path], tmp_path: Path, zookeeper: Any
) -> None:
    step, script = broker_3_step(*mismatch_plan)
    env, logs = broker_3_host(tmp_path, zookeeper.hosts, start="start", wait=60)
    env["ZK_TLS_CONFIG"] = "/etc/kafka/zk-tls.properties"
    before = snapshot(logs)

    checked = subprocess.run([script, "--check"], env=env, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    assert snapshot(logs) == before

    applied = subprocess.run([script, "--apply", "--yes"], env=env, capture_output=True, text=True)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert "done: broker 3 is repaired" in applied.stdout
    zk_id = step.replicas[0].zk_topic_id
    for r in step.replicas:
        meta = logs / r.dir_name / "partition.metadata"
        assert meta.read_text().endswith(f"topic_id: {zk_id}")
        kept = f"{r.dir_name}/leader-epoch-checkpoint"
        assert (logs / kept).read_bytes() == before[kept]
        saved = tmp_path / "backup" / "LOG_DIR_0" / r.dir_name / "partition.metadata"
        assert saved.read_bytes() == before[f"{r.dir_name}/partition.metadata"]
    repaired = {f"{r.dir_name}/partition.metadata" for r in step.replicas}
    others = {k: v for k, v in before.items() if k not in repaired}
    assert {k: v for k, v in snapshot(logs).items() if k not in repaired} == others

    # a secured ZooKeeper's TLS settings reach zookeeper-shell.sh
    assert (tmp_path / "bin" / "zk-tls").read_text().strip() == "/etc/kafka/zk-tls.properties"

    again = subprocess.run([script, "--check"], env=env, capture_output=True, text=True)
    assert again.returncode == 1 and "no longer holds" in again.stderr


@pytest.mark.slow
def test_apply_asks_before_taking_partitions_offline(
    mismatch_plan: tuple[remediation.RepairPlan, Path], tmp_path: Path, zookeeper: Any
) -> None:
    """Step 3 takes orders 2 and 5 offline: without --yes it names them and goes on only on "yes"."""
    from kazoo.client import KazooClient

    _, script = broker_3_step(*mismatch_plan)
    env, logs = broker_3_host(tmp_path, zookeeper.hosts, start="start", wait=60)
    before = snapshot(logs)
    zk = KazooClient(hosts=zookeeper.hosts)
    zk.start()
    state = "/brokers/topics/orders/partitions/1/state"
    as_planned = zk.get(state)[0]
    try:  # since the capture, orders-1's ISR shrank to broker 3 alone: its stop takes it offline too
        zk.set(state, json.dumps({**json.loads(as_planned), "isr": [3]}, separators=(",", ":")).encode())
        refused = subprocess.run([script, "--apply"], env=env, input="no\n", capture_output=True, text=True)
        assert zk.exists("/brokers/ids/3") is not None  # the stand-in broker was not stopped
        zk.set(state, as_planned)
    finally:
        zk.stop()
    assert refused.returncode == 1 and "not confirmed: nothing was changed" in refused.stderr
    assert "only broker 3 in the ISR of 1 partition(s) now (orders-1)" in refused.stdout
    assert "orders-5: while broker 3 restarts (step 3)" in refused.stdout and "+ " not in refused.stdout
    assert snapshot(logs) == before and not (tmp_path / "backup").exists()
    agreed = subprocess.run([script, "--apply"], env=env, input="yes\n", capture_output=True, text=True)
    assert agreed.returncode == 0, agreed.stdout + agreed.stderr
    assert "done: broker 3 is repaired" in agreed.stdout


@pytest.mark.slow
def test_wait_only_resumes_the_waits_without_restarting_the_broker(
    mismatch_plan: tuple[remediation.RepairPlan, Path], tmp_path: Path, zookeeper: Any
) -> None:
    """A wait ran out (broker 3 refused its repaired partitions); once they are back in its ISR, --wait-only
    waits again and changes nothing."""
    from kazoo.client import KazooClient

    step, script = broker_3_step(*mismatch_plan)
    env, logs = broker_3_host(tmp_path, zookeeper.hosts, start="start-refusing", wait=0)
    before = snapshot(logs)
    # a broker that does not stop: nothing removed yet, so the way on is --apply again, not --wait-only
    stuck = subprocess.run([script, "--apply", "--yes"], env={**env, "STOP_BROKER": "true"},
                           capture_output=True, text=True)  # fmt: skip
    assert stuck.returncode == 1 and "not yet: broker 3 has left /brokers/ids" in stuck.stderr
    assert "Nothing was removed yet" in stuck.stderr and "--wait-only" not in stuck.stderr
    assert snapshot(logs) == before
    run = subprocess.run([script, "--apply", "--yes"], env=env, capture_output=True, text=True)
    assert run.returncode == 1 and f"{script} --wait-only" in run.stderr
    repaired = snapshot(logs)
    zk = KazooClient(hosts=zookeeper.hosts)
    zk.start()
    try:  # what put it right: broker 3 back in the ISR of the partitions it refused
        for r in step.replicas:
            state = f"/brokers/topics/{r.topic}/partitions/{r.partition}/state"
            s = json.loads(zk.get(state)[0])
            zk.set(state, json.dumps({**s, "isr": sorted({*s["isr"], 3})}, separators=(",", ":")).encode())
    finally:
        zk.stop()
    again = subprocess.run([script, "--wait-only"], env={**env, "WAIT_SECONDS": "30"}, capture_output=True,
                           text=True)  # fmt: skip
    assert again.returncode == 0, again.stdout + again.stderr
    assert "done: broker 3 is repaired" in again.stdout
    assert "+ " not in again.stdout and "would run" not in again.stdout  # nothing stopped, removed, started
    assert snapshot(logs) == repaired


@pytest.mark.slow
def test_apply_stops_and_says_what_is_missing_when_the_broker_does_not_rejoin(
    mismatch_plan: tuple[remediation.RepairPlan, Path], tmp_path: Path, zookeeper: Any
) -> None:
    step, script = broker_3_step(*mismatch_plan)
    env, _ = broker_3_host(tmp_path, zookeeper.hosts, start="start-refusing", wait=0)
    run = subprocess.run([script, "--apply", "--yes"], env=env, capture_output=True, text=True)
    assert run.returncode == 1
    assert "not yet: broker 3 is in the ISR of all" in run.stderr
    for r in step.replicas:  # which: the repaired ones, that it refuses still
        assert f"not yet in the ISR of {r.topic}-{r.partition}" in run.stdout
    assert "not yet in the ISR of topic-0" not in run.stdout and "done:" not in run.stdout


@pytest.mark.slow
@pytest.mark.parametrize("others_back", [True, False])
def test_the_step_that_completes_a_partition_waits_until_its_isr_is_whole(
    mismatch_plan: tuple[remediation.RepairPlan, Path], tmp_path: Path, zookeeper: Any, others_back: bool
) -> None:
    """The last step (broker 3) makes orders 0-5 whole: it says done only once every replica of each is in
    its ISR, and stops, saying which are not, while a replica of an earlier step is still out."""
    plan = mismatch_plan[0]
    step, script = broker_3_step(*mismatch_plan)
    assert plan.forecast is not None
    whole = plan.forecast.steps[plan.steps.index(step)].whole
    assert whole == [("orders", q) for q in range(6)]
    also_out = frozenset() if others_back else frozenset({1})
    wait = 60 if others_back else 3
    env, _ = broker_3_host(tmp_path, zookeeper.hosts, "start", wait, 3, also_out)
    run = subprocess.run([script, "--apply", "--yes"], env=env, capture_output=True, text=True)
    if others_back:
        assert run.returncode == 0, run.stdout + run.stderr
        for t, q in whole:
            assert f"ok: every replica of {t}-{q} is in its ISR" in run.stdout
    else:
        assert run.returncode == 1 and "done:" not in run.stdout, run.stdout + run.stderr
        assert f"not yet: every replica of the {len(whole)} partition(s) this step makes whole" in run.stderr
        for t, q in whole:  # broker 1 is out of each
            assert f"not yet whole: {t}-{q}" in run.stdout
        assert "ok: broker 3 is in the ISR of all" in run.stdout


def test_check_refuses_the_wrong_host(
    mismatch_plan: tuple[remediation.RepairPlan, Path], tmp_path: Path
) -> None:
    _, script = broker_3_step(*mismatch_plan)
    logs = host_log_dir(tmp_path, 1)  # broker 1's log dir on "broker 3's host"
    env = {**os.environ, "LOG_DIR_0": str(logs), "ZOOKEEPER": "127.0.0.1:1"}
    run = subprocess.run([script, "--check"], env=env, capture_output=True, text=True)
    assert run.returncode == 1 and "is not broker 3's" in run.stderr


@pytest.mark.slow
def test_a_step_whose_broker_would_fail_as_it_starts_refuses_to_go_on_until_it_is_put_right(
    mismatch_plan: tuple[remediation.RepairPlan, Path], tmp_path: Path, zookeeper: Any
) -> None:
    """Broker 3 holds a '-delete' dir its removal failed on (deletion.lingering_dir, as triage finds it):
    started, it would queue it again and halt. Its step's --check and --apply stop before the broker is
    stopped while its user does not own the dir or may not write in it, and go on once it does."""
    lingering = Finding(
        "deletion.lingering_dir",
        "critical",
        {"topic": "audit-old", "broker": 3, "partitions": [1]},
        "Broker 3 still holds 1 '-delete' dir(s) of audit-old ...: removing them failed on an I/O error",
        ("broker-3:logs/server.log:9",),
    )
    plan = replace(mismatch_plan[0], hazards=hazards.hazards([lingering]))
    out = tmp_path / "plan"
    plan.write(out)
    _, script = broker_3_step(plan, out)
    assert "BEFORE THIS STEP: before broker 3 starts again" in Path(script).read_text()
    assert "**Put right first (step" in (out / "PLAN.md").read_text()
    env, logs = broker_3_host(tmp_path, zookeeper.hosts, start="start", wait=60)
    left = logs / "audit-old-1.0123456789abcdef0123456789abcdef-delete"
    left.mkdir()
    (left / "00000000000000000000.log").write_bytes(b"")
    other = next(u.pw_name for u in pwd.getpwall() if u.pw_uid != logs.stat().st_uid)
    for mode in (["--check"], ["--apply", "--yes"]):
        run = subprocess.run(
            [script, *mode], env={**env, "KAFKA_USER": other}, capture_output=True, text=True
        )
        assert run.returncode == 1 and f"{left} (deletion.lingering_dir)" in run.stderr, run.stderr
        assert "+ " not in run.stdout  # nothing was stopped, removed or started
    left.chmod(0o555)  # its owner's, who may not write in it
    run = subprocess.run([script, "--check"], env=env, capture_output=True, text=True)
    assert run.returncode == 1 and f"{left} (deletion.lingering_dir)" in run.stderr
    left.chmod(0o755)
    run = subprocess.run([script, "--check"], env=env, capture_output=True, text=True)
    assert run.returncode == 0 and "ok: broker 3's user" in run.stdout, run.stderr


@pytest.mark.slow
def test_cli_writes_the_plan_and_refuses_a_folder_of_other_files(
    mismatch_plan: tuple[remediation.RepairPlan, Path], tmp_path: Path
) -> None:
    out = tmp_path / "plan"
    assert main(["remediate", str(MISMATCH), "--out", str(out)]) == 0
    assert (out / "PLAN.md").is_file() and list(out.glob("step-*-broker-*.sh"))
    assert (out / "PLAN.md").read_text() == (mismatch_plan[1] / "PLAN.md").read_text()
    assert mismatch_plan[0].write(out) and (out / "PLAN.md").is_file()  # an earlier plan is replaced
    (out / "notes.txt").write_text("mine")
    assert main(["remediate", str(MISMATCH), "--out", str(out)]) == 2
    assert (out / "notes.txt").read_text() == "mine"
    assert main(["remediate", str(tmp_path / "nothing-here"), "--out", str(tmp_path / "p2")]) == 2


@pytest.mark.slow
def test_where_the_log_dirs_and_zookeeper_are_comes_from_the_bundle(
    spark: SparkSession, tmp_path: Path
) -> None:
    """server.properties gives log.dirs and zookeeper.connect; the collector's record in the manifest
    (where it found each log dir) wins over log.dirs."""
    bundle = Path(shutil.copytree(MISMATCH, tmp_path / "bundle"))
    (bundle / "brokers" / "2" / "server.properties").unlink()  # a broker whose config was not collected
    (bundle / "brokers" / "3" / "server.properties").write_text(
        "broker.id=3\nlog.dirs=/data/kafka-a,/data/kafka-b\nzookeeper.connect=zk-a:2181,zk-b:2181/kafka\n"
    )
    manifest = json.loads((bundle / "manifest.json").read_text())
    manifest["parts"] = [{"part": "broker", "broker": 1, "dirs": [{"dir": "0", "path": "/srv/k1"}]}]
    (bundle / "manifest.json").write_text(json.dumps(manifest))
    plan = remediation.plan(open_bundle(bundle, spark))
    plan.write(tmp_path / "plan")
    by_broker = {
        s.broker: (tmp_path / "plan" / plan.script_name(n, s)).read_text()
        for n, s in enumerate(plan.steps, 1)
    }
    assert ': "${LOG_DIR_0:=/data/kafka-a}"' in by_broker[3]
    assert ': "${ZOOKEEPER:=zk-a:2181,zk-b:2181/kafka}"' in by_broker[3]
    assert ': "${LOG_DIR_0:=/srv/k1}"' in by_broker[1]
    assert "# LOG_DIR_0: datadirs/0 in the bundle; its path on the host is not in the bundle" in by_broker[2]


def test_an_affected_internal_topic_is_named() -> None:
    stale = [
        remediation.StaleReplica(2, "0", "__consumer_offsets", p, "old-id", "new-id", True, False)
        for p in (7, 8)
    ]
    plan = remediation.RepairPlan("b", {}, steps=[remediation.BrokerStep(2, stale, {"0": "/data"})])
    script = remediation.broker_script(plan, 1, plan.steps[0])
    assert "INTERNAL TOPIC __consumer_offsets is affected" in script and "group coordinators" in script
    assert "INTERNAL TOPIC __consumer_offsets" in plan.markdown()
    plain = remediation.RepairPlan(
        "b",
        {},
        steps=[
            remediation.BrokerStep(
                2,
                [remediation.StaleReplica(2, "0", "orders", 1, "old-id", "new-id", True, True)],
                {"0": "/data"},
            )
        ],
    )
    assert "INTERNAL" not in remediation.broker_script(plain, 1, plain.steps[0]) + plain.markdown()
