"""`workbench simulate`: one scenario into an evidence bundle (DESIGN.md layout) with truth.json."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from workbench.bundle import ZNODES_JSONL
from workbench.capture.zk import ZkCaptureError, capture_zk
from workbench.manifest import FORMAT, MANIFEST, read_manifest
from workbench.simulate import deletion, story
from workbench.simulate.cluster import DATA_DIR, Cluster
from workbench.simulate.findings import findings, logs_findings
from workbench.simulate.health import BUCKET_MS
from workbench.simulate.real_zk import RealZooKeeper, RealZooKeeperError
from workbench.simulate.scenarios import SCENARIOS, Scale, lookup

START_MS = 1_710_230_400_000  # 2024-03-12T08:00:00Z
NOISE_RATE = 0.05  # background lines a broker writes a second: a quiet cluster's server.log


def simulate(
    scenario: str,
    out: Path,
    seed: int = 1,
    kafka_version: str = "2.8.2",
    scale: Scale | None = None,
    clock_skew_ms: int = 0,
    gzip_rolled: bool = False,
    noise_rate: float = NOISE_RATE,
    zk: str | None = None,
    zk_data_dir: Path | None = None,
    progress: Callable[[float], None] | None = None,
) -> dict[str, Any]:
    """Run `scenario` and write its bundle to `out` (replaced if it exists); returns the truth.
    `clock_skew_ms`: each broker's clock is off by up to that much (seeded); `gzip_rolled`: rolled log
    files are gzipped, as a log-rotation job leaves them; `noise_rate`: background lines a broker writes
    a second (noise.py); `zk`, `zk_data_dir`: a fresh real ZooKeeper that gets the same requests, and
    its dataDir, whose version-2/ files become the bundle's txn logs (real_zk.py); `progress`: told
    each simulated hour that has passed (a long run's sign of life)."""
    lookup(scenario)  # known, or a ValueError naming what is
    scale = scale or Scale()
    if noise_rate < 0:
        raise ValueError(
            f"noise rate {noise_rate} is negative; expected background lines a second, 0 or more"
        )
    if out.exists() and any(out.iterdir()):
        if not (out / "truth.json").is_file():  # never wipe a directory we did not write
            problem = "is not empty and holds no truth.json"
            raise ValueError(f"{out} {problem}; expected a new directory or an earlier simulated bundle")
        shutil.rmtree(out)
    if zk is not None and zk_data_dir is None:
        raise ValueError(f"--zk {zk} needs --zk-data-dir: the server's dataDir, to copy its txn logs from")
    mirror = RealZooKeeper(zk, zk_data_dir) if zk is not None and zk_data_dir is not None else None
    out.mkdir(parents=True, exist_ok=True)
    c = tell(
        scenario, out, seed, kafka_version, scale, clock_skew_ms, gzip_rolled, noise_rate, mirror, progress
    )
    captured = c.now
    c.logs.close(captured)
    c.zk.close()
    parts = None
    if mirror is None:
        c.zk.znodes_jsonl(out / ZNODES_JSONL)
    else:  # the server's own tree, read as `workbench capture zk` reads it, and its own txn files
        zk_capture = capture_zk(mirror.hosts, out)
        parts = read_manifest(out).get("parts")
        copied = mirror.copy_txn_files(out / "zk" / "txnlog")
        mirror.close()
        c.truth["zk_server"] = {"hosts": mirror.hosts, "capture": zk_capture, "txn_files": copied}
    for b in c.brokers.values():
        b.log_dir.write(out / "brokers" / str(b.id) / "datadirs" / "0", captured)
        (out / "brokers" / str(b.id) / "server.properties").write_text(server_properties(c, b.id))
    at = datetime.fromtimestamp(captured / 1000, tz=timezone.utc).isoformat(timespec="milliseconds")
    manifest = {
        "format": FORMAT,
        "cluster": c.cluster_id,
        "captured_at": at.replace("+00:00", "Z"),
        "kafka_version": kafka_version,
        "brokers": sorted(c.brokers),
        "redacted": True,
        "simulated": {
            "scenario": scenario,
            "seed": seed,
            "scale": {k: v for k, v in scale.__dict__.items() if v or k != "prefix"},  # prefix: if set
            "noise_rate": noise_rate,
            "clock_skew_ms": clock_skew_ms,
            "gzip_rolled": gzip_rolled,
        },
        **({"parts": parts} if parts else {}),
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    health = {
        "bucket_ms": BUCKET_MS,
        "minutes": c.health.series(START_MS, captured),
        **c.health.episodes(captured),
    }
    truth = {
        "scenario": scenario,
        **c.truth,
        "captured_ms": captured,
        "last_zxid": c.zk.zxid,
        "health": health,
    }
    truth["findings"] = findings(truth)  # each under the finding kind it proves (simulate/findings.py)
    truth["logs_findings"] = logs_findings(truth["findings"])  # what its logs-only twin must give
    (out / "truth.json").write_text(json.dumps(truth, indent=2) + "\n", encoding="utf-8")
    return truth


def tell(
    scenario: str,
    out: Path,
    seed: int,
    kafka_version: str,
    scale: Scale,
    clock_skew_ms: int = 0,
    gzip_rolled: bool = False,
    noise_rate: float = NOISE_RATE,
    mirror: RealZooKeeper | None = None,
    progress: Callable[[float], None] | None = None,
) -> Cluster:
    """The story up to the moment of the capture: the cluster as the bundle will show it. The same
    arguments tell the same story (one seeded random source), which is how `replay` gets a bundle's
    cluster back."""
    c = Cluster(
        out, kafka_version, seed, START_MS, scale.brokers, scale.racks, gzip_rolled, noise_rate, mirror
    )
    skew = {b: c.jitter(-clock_skew_ms, clock_skew_ms) for b in c.brokers} if clock_skew_ms else {}
    c.on_hour = progress
    c.logs.skew_ms.update(skew)
    c.truth["clock_skew_ms"] = {str(b): ms for b, ms in skew.items()}
    story.start_cluster(c)
    lookup(scenario)(c, scale)
    for t, d in c.deleting.items():  # deletions still queued at the capture: what holds them up
        left = [
            [p.partition, r]
            for p in c.topics[t].partitions.values()
            for r in p.replicas
            if d.replicas.get((p.partition, r)) != deletion.SUCCESSFUL
        ]
        down = sorted({r for _, r in left if not c.brokers[r].alive})
        c.truth["deletions"][t]["pending"] = {
            "ineligible": d.ineligible,
            "replicas_left": sorted(left),
            "brokers_down": down,
            "partitions_reassigning": [
                p.partition for p in c.topics[t].partitions.values() if p.adding or p.removing
            ],
        }
    c.tick(c.jitter(1_000, 5_000))
    c.truth["brokers_down"] = sorted(b for b, x in c.brokers.items() if not x.alive)
    c.truth["delete_dirs_left"] = [  # on disk at the capture, how long after their rename
        dict(
            broker=b,
            topic=r.topic,
            partition=r.partition,
            age_ms=c.now - r.modified_ms,
            failed=r.topic in x.log_dir.denied,
        )
        for b, x in sorted(c.brokers.items())
        for r in x.log_dir.replicas.values()
        if r.delete_dir is not None
    ]
    c.truth["leader_imbalance"] = leader_imbalance(c)
    c.truth["only_in_sync"] = only_in_sync(c)
    c.truth.update(topic_ids_on_disk(c))
    return c


def server_properties(c: Cluster, broker: int) -> str:
    """What the collector copies of a broker's config: the settings the stories depend on, the rest
    left at Kafka's defaults as a typical file leaves them."""
    rack = c.brokers[broker].rack
    lines = [
        f"broker.id={broker}",
        "listeners=PLAINTEXT://:9092",
        f"log.dirs={DATA_DIR}",
        "zookeeper.connect=zookeeper:2181",
        f"auto.leader.rebalance.enable={str(c.auto_leader_rebalance).lower()}",
        f"delete.topic.enable={str(c.delete_topic_enable).lower()}",
        *(["unclean.leader.election.enable=true"] if c.unclean_leader_election else []),
        *([f"broker.rack={rack}"] if rack else []),
    ]
    return "\n".join(lines) + "\n"


def leader_imbalance(c: Cluster) -> dict[str, dict[str, object]]:
    """Per broker, as checkAndTriggerAutoLeaderRebalance counts it: the partitions whose preferred
    (first) replica it is, those it does not lead, and their ratio; topics queued for deletion left out."""
    out = {}
    kept = [p for p in c.partitions() if p.topic not in c.deleting]
    for b in sorted(c.brokers):
        preferred = [p for p in kept if p.replicas and p.replicas[0] == b]
        not_led = sorted(p.tp for p in preferred if p.leader != b)
        ratio = len(not_led) / len(preferred) if preferred else 0.0
        out[str(b)] = {"preferred": len(preferred), "not_leading": not_led, "ratio": ratio}
    return out


def only_in_sync(c: Cluster) -> dict[str, list[str]]:
    """Per registered broker at the capture: the partitions (with other replicas, topics not queued for
    deletion) it leads alone in their ISR."""
    out: dict[str, list[str]] = {}
    for p in c.partitions():
        registered = p.leader >= 0 and c.zk.exists(f"/brokers/ids/{p.leader}")
        if registered and len(p.replicas) > 1 and p.isr == [p.leader] and p.topic not in c.deleting:
            out.setdefault(str(p.leader), []).append(p.tp)
    return {b: sorted(tps) for b, tps in sorted(out.items())}


def topic_ids_on_disk(c: Cluster) -> dict[str, Any]:
    """At the capture: live replicas whose partition.metadata holds another id than their topic's znode
    (stale_topic_ids, with whether each is in its partition's ISR), and the topics whose replicas hold
    more than one id (disagreeing_topics)."""
    stale: list[dict[str, Any]] = []
    ids: dict[str, set[str]] = {}
    for b in sorted(c.brokers):
        for r in c.brokers[b].log_dir.replicas.values():
            if r.delete_dir is not None or r.topic_id is None or r.topic not in c.topics:
                continue
            ids.setdefault(r.topic, set()).add(r.topic_id)
            data, _ = c.zk.get(f"/brokers/topics/{r.topic}")
            zk_id = json.loads(data or b"{}").get("topic_id")
            if zk_id is not None and zk_id != r.topic_id:
                in_isr = b in c.topics[r.topic].partitions[r.partition].isr
                stale.append(
                    {"topic": r.topic, "partition": r.partition, "broker": b, "disk_topic_id": r.topic_id,
                     "zk_topic_id": zk_id, "in_isr": in_isr}
                )  # fmt: skip
    order = sorted(stale, key=lambda x: (x["topic"], x["broker"], x["partition"]))
    return {"stale_topic_ids": order, "disagreeing_topics": sorted(t for t, s in ids.items() if len(s) > 1)}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "scenario",
        help=f"one of {', '.join(sorted(SCENARIOS))}; or several joined by + (a+b), told one after another "
        "in one cluster",
    )
    parser.add_argument("--out", type=Path, required=True, help="the bundle directory to write")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kafka-version", default="2.8.2", help="1.1.0 to 3.6.x (wording and formats)")
    d = Scale()
    parser.add_argument("--brokers", type=int, default=d.brokers)
    parser.add_argument("--topics", type=int, default=d.topics)
    parser.add_argument("--partitions", type=int, default=d.partitions)
    parser.add_argument("--hours", type=float, default=d.hours)
    parser.add_argument("--racks", type=int, default=d.racks, help="broker.rack values (0: none)")
    parser.add_argument("--clock-skew-ms", type=int, default=0, help="each broker's clock off by up to this")
    parser.add_argument("--gzip-rolled", action="store_true", help="gzip the rolled log files")
    parser.add_argument(
        "--noise-rate",
        type=float,
        default=NOISE_RATE,
        help="background lines (group rebalances, fetch sessions) a broker writes a second",
    )
    parser.add_argument("--zk", metavar="HOST:PORT", help="a fresh ZooKeeper to send the same writes to")
    parser.add_argument("--zk-data-dir", type=Path, help="that server's dataDir (its version-2/ is copied)")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")


def _progress(scenario: str, hours: float) -> Callable[[float], None]:
    """A line on stderr per simulated hour: how far, the time spent and an estimate of the time left."""
    start = time.monotonic()

    def show(done: float) -> None:
        spent = time.monotonic() - start
        left = spent / done * max(0.0, hours - done) if done > 0 else 0.0
        print(
            f"{scenario}: {done:g} of ~{hours:g} h simulated · {spent:.0f} s · ~{left:.0f} s left",
            file=sys.stderr,
        )

    return show


def run(args: argparse.Namespace) -> int:
    scale = Scale(
        brokers=args.brokers,
        topics=args.topics,
        partitions=args.partitions,
        hours=args.hours,
        racks=args.racks,
    )
    try:
        truth = simulate(
            args.scenario,
            args.out,
            args.seed,
            args.kafka_version,
            scale,
            args.clock_skew_ms,
            args.gzip_rolled,
            args.noise_rate,
            args.zk,
            args.zk_data_dir,
            None if args.quiet or not sys.stderr.isatty() else _progress(args.scenario, scale.hours),
        )
    except (ValueError, RealZooKeeperError, ZkCaptureError) as e:
        print(f"workbench simulate: {e}", file=sys.stderr)
        return 2
    print(f"{args.scenario}: {args.out} (last zxid 0x{truth['last_zxid']:x})")
    return 0
