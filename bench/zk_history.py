"""Our ZooKeeper txn log parser against ZooKeeper's own TxnLogToolkit on the same files, side by side.

    .venv/bin/python bench/zk_history.py                  # drives a fresh server with Kafka-like writes
    .venv/bin/python bench/zk_history.py --data-dir DIR   # or times an existing dataDir's version-2/

Prints records/s for TxnLogToolkit (one JVM per file, as an SRE runs it), our pure-Python parser, and
`znode_history` in Spark (one task per file), and each one's ratio to TxnLogToolkit. Best of --repeat runs.
Then, with --state-txns N (default 1M), a server given N more ISR changes (pipelined, no fsync) and the
time `znodes_at` takes to rebuild the tree as of the middle and the newest zxid (snapshot + replay).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import deque
from pathlib import Path

from timing import best

from workbench.bundle import zk_data_files
from workbench.testing.zookeeper import ZooKeeperServer, kafka_like_writes, txn_log_toolkit
from workbench.zookeeper.files import read_txn_log
from workbench.zookeeper.txns import Txn


def generate(base: Path, topics: int, partitions: int, isr_changes: int) -> Path:
    server = ZooKeeperServer(base, jvm_properties={"zookeeper.snapCount": "5000"})
    server.start()
    try:
        kafka_like_writes(server.hosts, topics=topics, partitions=partitions, isr_changes=isr_changes)
    finally:
        server.stop()
    return server.txn_dir


def isr_changes(hosts: str, paths: list[str], n: int, window: int = 2000) -> None:
    """n setData of partition states, `window` in flight at a time (a controller's ISR updates)."""
    from kazoo.client import KazooClient

    zk = KazooClient(hosts=hosts)
    zk.start(timeout=15)
    pending: deque = deque()
    for i in range(n):
        state = {
            "controller_epoch": 1,
            "leader": 1,
            "version": 1,
            "leader_epoch": i,
            "isr": [1, 2][: 1 + i % 2],
        }
        pending.append(zk.set_async(paths[i % len(paths)], json.dumps(state).encode()))
        if len(pending) >= window:
            pending.popleft().get()
    for result in pending:
        result.get()
    zk.stop()


def state_at(base: Path, txns: int) -> None:
    """Time rebuilding ZooKeeper's tree as of a zxid from a dataDir holding `txns` and more."""
    server = ZooKeeperServer(
        base, jvm_properties={"zookeeper.snapCount": "100000", "zookeeper.forceSync": "no"}
    )
    server.start()
    start = time.perf_counter()
    try:
        kafka_like_writes(server.hosts, topics=10, partitions=10, isr_changes=10)
        paths = [f"/brokers/topics/topic-{t}/partitions/{p}/state" for t in range(10) for p in range(10)]
        isr_changes(server.hosts, paths, txns)
    finally:
        server.stop()
    print(f"{txns:,} ISR changes written in {time.perf_counter() - start:.0f} s", flush=True)
    files = zk_data_files([server.txn_dir])
    snaps = [f for f in files if f.kind == "snapshot"]
    logs = [f for f in files if f.kind == "log"]

    from pyspark.sql import functions as F

    from workbench.sources.zk_files import read_zk_state, read_znode_history
    from workbench.spark import spark_session

    spark = spark_session()
    history = read_znode_history(spark, logs)[0]
    first, last, n = history.agg(F.min("zxid"), F.max("zxid"), F.count_distinct("zxid")).first()
    print(f"{len(snaps)} snapshots, {len(logs)} txn logs, {n:,} txns (zxid {first:#x}..{last:#x})")
    for name, zxid in [("middle", (first + last) // 2), ("newest", None)]:
        secs, znodes = best(lambda z=zxid: read_zk_state(spark, snaps, logs, z)[0].count(), 2)
        print(f"znodes_at({name}): {secs:.1f} s, {znodes:,} znodes")


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--topics", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--isr-changes", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--state-txns", type=int, default=1_000_000, help="0: skip")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-zk-") as tmp:
        data_dir = args.data_dir or generate(Path(tmp), args.topics, args.partitions, args.isr_changes)
        logs = [f for f in zk_data_files([data_dir]) if f.kind == "log"]

        def toolkit() -> int:
            return sum(txn_log_toolkit(f.path).count(" zxid 0x") for f in logs)

        def ours() -> int:
            return sum(isinstance(t, Txn) for f in logs for t in read_txn_log(f.path))

        from workbench.sources.zk_files import read_znode_history
        from workbench.spark import spark_session

        spark = spark_session()

        def spark_history() -> int:
            return read_znode_history(spark, logs)[0].select("zxid").distinct().count()

        spark_history()  # JIT and Python workers warm
        runs = [("TxnLogToolkit", toolkit), ("workbench parser", ours)]
        runs.append(("znode_history (Spark)", spark_history))
        results = {name: best(fn, args.repeat) for name, fn in runs}
        base_rate = results["TxnLogToolkit"][1] / results["TxnLogToolkit"][0]
        print(f"{len(logs)} txn logs, {results['TxnLogToolkit'][1]} txns")
        print(f"{'':<24}{'seconds':>10}{'txns':>10}{'txns/s':>12}{'ratio':>8}")
        for name, (secs, n) in results.items():
            print(f"{name:<24}{secs:>10.3f}{n:>10}{n / secs:>12,.0f}{n / secs / base_rate:>8.2f}")
    if args.state_txns:
        with tempfile.TemporaryDirectory(prefix="bench-zk-state-") as tmp:
            state_at(Path(tmp), args.state_txns)


if __name__ == "__main__":
    main()
