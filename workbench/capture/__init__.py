"""Collectors that run where the evidence is: read-only, standard library first, secrets redacted.

`zk` walks a live ZooKeeper with kazoo; `broker` runs on a broker host with only the standard library;
`zk_files` copies a ZooKeeper dataDir's txn logs and snapshots. Each adds its part to a bundle.
"""
