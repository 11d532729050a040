"""ZooKeeper's own on-disk formats, read and written in pure Python (standard library only).

`jute` is ZooKeeper's binary serialization; `txns` its transaction records; `files` the txn log and
snapshot files of a dataDir's version-2/; `datatree` replays txns onto a snapshot. Sources: apache/zookeeper
release-3.8.4 (3.5.9 and 3.6.4 differences noted where they matter), see ../shared/reference/FORMATS.md C.
"""
