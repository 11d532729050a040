"""Catalog entries for ZooKeeper sessions, seen from Kafka's client and from a ZooKeeper server logging to the same file.

Text is Kafka's (or ZooKeeper's) own, one template per line so that a wording can be found with grep;
the source names the file and the tags with line numbers where the text exists.
"""

from __future__ import annotations

from workbench.kafka.messages.loggers import CNXN, ZK_CLIENT, ZK_SERVER, ZK_WRAPPER, ZKCLIENT
from workbench.kafka.templates import Template as T

# fmt: off
ZOOKEEPER = [
    T("zk.ephemeral_creating", "Creating {path} (is it secure? {secure})",
      ZK_CLIENT, "KafkaZkClient.scala checkedEphemeralCreate 2.5.1, 2.8.2, 3.6.2"),
    T("zk.ephemeral_created", "Stat of the created znode at {path} is: {czxid},{mzxid},{ctime},{mtime},{version},{cversion},{aversion},{ephemeral_owner},{data_length},{num_children},{pzxid}",
      ZK_CLIENT, "KafkaZkClient.scala checkedEphemeralCreate 2.5.1, 2.8.2, 3.6.2"),
    T("zk.ephemeral_created", "Result of znode creation at {path} is: {result}",
      ZK_CLIENT, "KafkaZkClient.scala 2.0"),
    T("zk.ephemeral_owned_by_other_session", "Was not possible to create the ephemeral at {path}, node already exists and owner '{owner}' does not match current session '{session_id}'{_}",
      ZK_CLIENT, "KafkaZkClient.scala getAfterNodeExists 2.8.2:1897 3.6.2:2182"),
    T("zk.ephemeral_owned_by_other_session", "Error while creating ephemeral at {path}, node already exists and owner '{owner}' does not match current session '{session_id}'",
      ZK_CLIENT, "KafkaZkClient.scala getAfterNodeExists 2.8.2:1902 3.6.2:2187"),
    T("zk.ephemeral_failed", "Error while creating ephemeral at {path} with return code: {code}",
      ZK_CLIENT, "KafkaZkClient.scala create 2.5.1:1759 2.8.2:1844 3.6.2:2129"),
    T("zk.client_session_expired", "Session expired.",
      ZK_WRAPPER, "ZooKeeperClient.scala 2.5.1:424; scheduleReinitialize 2.8.2:463 3.6.2:450"),
    # the message scheduleReinitialize logs is its caller's (info(message)): listed from the calls in its file
    T("zk.client_auth_failed", "Reinitializing due to auth failure.",
      ZK_WRAPPER, "ZooKeeperClient.scala scheduleReinitialize 2.8.2:434,461 3.6.2:421,448"),
    T("zk.client_reinitializing", "Initializing a new session to {zk_connect}.",
      ZK_WRAPPER, "ZooKeeperClient.scala 2.5.1, 2.8.2, 3.6.2"),
    T("zk.client_connected", "Connected.",
      ZK_WRAPPER, "ZooKeeperClient.scala 2.5.1, 2.8.2, 3.6.2"),
    T("zk.client_environment", "Client environment:{setting}={_}",
      CNXN, "ZooKeeper.java <init> release-3.4.9:95 release-3.8.4:169 (Environment.logEnv, a line a setting)"),
    # 0.10-1.x: ZkUtils' sessions through 101tec's zkclient (0.10, bundled until 2.0; 0.11 in 2.1-2.3)
    T("zk.client_session_expired", "zookeeper state changed (Expired)",
      ZKCLIENT, "ZkClient.java processStateChanged zkclient-0.10:713 zkclient-0.11:713"),
    T("zk.client_connected", "zookeeper state changed (SyncConnected)",
      ZKCLIENT, "ZkClient.java processStateChanged zkclient-0.10:713 zkclient-0.11:713"),
    T("zk.client_state_changed", "zookeeper state changed ({state})",
      ZKCLIENT, "ZkClient.java processStateChanged zkclient-0.10:713 zkclient-0.11:713"),
    T("zk.client_auth_failed", "Auth failed{_}",
      ZK_WRAPPER, "ZooKeeperClient.scala 2.5.1, 2.8.2, 3.6.2"),
    T("zk.session_timed_out", "Client session timed out, have not heard from server in {idle_ms}ms for sessionid {session}{_}",
      CNXN, "ClientCnxn.java release-3.5.9:1185"),
    T("zk.session_timed_out", "Client session timed out, have not heard from server in {idle_ms}ms for session id {session}{_}",
      CNXN, "ClientCnxn.java release-3.8.4:1252"),
    T("zk.session_expired", "Unable to reconnect to ZooKeeper service, session {session} has expired{_}",
      CNXN, "ClientCnxn.java release-3.5.9:1378 release-3.8.4:1435"),
    T("zk.session_established", "Session establishment complete on server {server}, sessionid = {session}, negotiated timeout = {timeout_ms}{_}",
      CNXN, "ClientCnxn.java release-3.5.9:1394"),
    T("zk.session_established", "Session establishment complete on server {server}, session id = {session}, negotiated timeout = {timeout_ms}{_}",
      CNXN, "ClientCnxn.java release-3.8.4:1453"),
    T("zk.session_closed", "Session: {session} closed",
      CNXN, "ZooKeeper.java close 3.5.9:1422"),
    T("zk.connecting", "Opening socket connection to server {server}. Will {sasl}",
      CNXN, "ClientCnxn.java release-3.5.9 (with the SASL status)"),
    T("zk.connecting", "Opening socket connection to server {server}.",
      CNXN, "ClientCnxn.java release-3.8.4:1177"),
    T("zk.connection_lost", "Session {session} for server {server}, Closing socket connection{_}",
      CNXN, "ClientCnxn.java release-3.8.4:1300"),
    T("zk.connection_lost", "Unable to read additional data from server sessionid {session}, likely server has closed socket{_}",
      CNXN, "ClientCnxnSocketNIO.java 3.5.9:79"),
    T("zk.server.session_expiring", "Expiring session {session}, timeout of {timeout_ms}ms exceeded",
      ZK_SERVER, "ZooKeeperServer.java release-3.5.9:413 release-3.8.4:644"),
    T("zk.server.invalid_session", "Invalid session {session} for client {client}, probably expired",
      ZK_SERVER, "ZooKeeperServer.java release-3.5.9:781 release-3.8.4:1102"),
    T("zk.server.session_established", "Established session {session} with negotiated timeout {timeout_ms} for client {client}",
      ZK_SERVER, "ZooKeeperServer.java release-3.8.4:1094"),
    T("zk.server.slow_fsync", "fsync-ing the write ahead log in {thread} took {ms}ms which will adversely effect operation latency. File size is {bytes} bytes. {_}",
      ZK_SERVER, "FileTxnLog.java release-3.8.4:395"),
    T("zk.server.keeper_exception", "Got user-level KeeperException when processing {request} Error Path:{path} Error:{error}",
      ZK_SERVER, "PrepRequestProcessor.java release-3.8.4:942"),
]
# fmt: on
