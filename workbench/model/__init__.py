"""The model: what every analysis reads of a bundle, built once per bundle and kept in one place
(`views(bundle)`), between the sources (files as DataFrames) and the analyses (findings).

- `evidence`: what the bundle holds, from its file list alone; `summary`: a bundle at a glance;
- `views`: the bundle seen as a cluster (topics, partitions, registrations, sessions and their owners,
  replicas on disk, ZooKeeper's history and its span), plus `memo` for what an analysis derives once
  and others reuse, and `release` to let a bundle's views go;
- `history_gaps`: the zxids no readable txn log holds (nothing is inferred inside or across one);
- `skew`: each broker's clock against ZooKeeper's;
- `partition_history`: every partition txn by txn, and how each counts in the health series;
- `acting`: whether a partition's ZooKeeper leader serves it (refusals, silent leaders);
- `session_ends`: how each broker's ZooKeeper session ended, from its own log;
- `refs`: how a finding cites the evidence a person can open.
"""
