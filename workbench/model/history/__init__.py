"""The one history of the cluster, gathered from whatever evidence the bundle holds: each row names its
source (a ZooKeeper txn, a controller's line, ...), and where both speak, zxids and epochs order and the
lines add what they alone tell. Readers take the history as it is and never ask which evidence the bundle
holds (coverage says what is missing).

- `controllers`: the controller chain, each election from ZooKeeper's txns, the elected broker's own
  line, or both;
- `sessions`: the ZooKeeper sessions brokers lost and how (a crash, a halt for failed log dirs, a hang,
  a cut-off network), from ZooKeeper's ended registrations and the brokers' and controllers' lines
  (asked in the chain's job: `controllers.sessions_lost`);
- `brokers`: each stretch a broker was not registered, from ZooKeeper's registrations and the
  controllers' lines (a failure or startup callback, a new controller's live brokers), and each it was
  registered and did no work (silent before its session expired, from its halt line where it halted,
  or stood still and ran on), from ZooKeeper's expiries and the brokers' own lines;
- `topics`: topics deleted and created again, from ZooKeeper's deletes and creates of their znodes and
  the controller's lines; the deletions under way, from ZooKeeper's markers where its tree was captured,
  else the controller's lines and the pastes; and the topic ids the cluster holds, from ZooKeeper's
  topic znodes where its tree was captured, else what pastes printed;
- `partitions`: who led a partition at a moment and each replica leaving or joining an ISR, from
  ZooKeeper's partition states and the states the lines print;
- `unclean`: the leaders elected from outside the ISR, from the same two sources;
- `counts`: Kafka's own counts, each stretch a partition was under-replicated and each broker's leader
  imbalance, from the health series, else ZooKeeper's tree at the capture.

The partitions' changes as the health series and the service timeline read them (`partition_history`,
`partition_log.logged_changes`: one shape, either source) and the topics' creations are still read
elsewhere in `model/`, to be gathered here (issue 74).
"""
