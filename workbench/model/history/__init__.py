"""The one history of the cluster, gathered from whatever evidence the bundle holds: each row names its
source (a ZooKeeper txn, a controller's line, ...), and where both speak, zxids and epochs order and the
lines add what they alone tell. Readers take the history as it is and never ask which evidence the bundle
holds (coverage says what is missing).

- `controllers`: the controller chain, each election from ZooKeeper's txns, the elected broker's own
  line, or both.

The partitions' states (`partition_history`, `partition_log`) and the brokers' lives are still read per
source elsewhere in `model/`, to be gathered here (issue 74).
"""
