"""What counts as a secret in Kafka's evidence, and how it is replaced.

A secret becomes `[redacted:<fingerprint>]`: the fingerprint is the first 12 hex digits of SHA-256 of the
value, so equal secrets still compare equal across a bundle without being readable. Standard library only.

Which values are secrets (Kafka's own rules, cited):
- `/config/users/<user>`: the SCRAM credentials `{"SCRAM-SHA-256": "salt=...,stored_key=...,..."}` that
  `kafka-configs --alter --add-config SCRAM-SHA-256=[...]` stores (ScramCredentialUtils.credentialToString,
  clients/src/main/java/org/apache/kafka/common/security/scram/internals/ScramCredentialUtils.java @2.8.2).
- `/config/brokers/<id|<default>>` and `server.properties`: configs of type PASSWORD in ConfigDef
  (ssl.*.password, ssl.keystore.key, ssl.keystore.certificate.chain, ssl.truststore.certificates,
  sasl.jaas.config, password.encoder.secret, delegation.token.secret.key, ..., also behind a
  `listener.name.<l>.` prefix; KafkaConfig.scala and SslConfigs.java @2.8.2). Dynamic broker configs keep
  them encrypted in ZooKeeper (DynamicBrokerConfig), which still must not leave the cluster.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

REDACTED = "[redacted:{}]"
# Names of PASSWORD-type configs, matched on the last dotted words so listener/mechanism prefixes pass.
SECRET_NAMES = (
    r"(?:password|secret|jaas\.config|keystore\.key|keystore\.certificate\.chain"
    r"|truststore\.certificates|secret\.key|master\.key|client\.secret|credentials?)"
)
SECRET_CONFIG = re.compile(rf"(?:^|\.){SECRET_NAMES}$", re.IGNORECASE)
SCRAM_MECHANISM = re.compile(r"^SCRAM-", re.IGNORECASE)
REDACTED_VALUE = r"\[redacted:[0-9a-f]{12}\]"
# A secret's value in clear inside a config znode's JSON, for Python's re and Java's regex alike (Spark's
# rlike): under /config/users a SCRAM mechanism's, under /config/brokers a PASSWORD-type config's.
SCRAM_IN_CLEAR = rf'(?i)"SCRAM-[^"]*"\s*:\s*"(?!{REDACTED_VALUE}")'
CONFIG_IN_CLEAR = rf'(?i)"(?:[^"]*\.)?{SECRET_NAMES}"\s*:\s*"(?!{REDACTED_VALUE}")'

# Also below a chroot (zookeeper.connect=zk:2181/kafka): ZooKeeper's own files hold the full path.
USERS = re.compile(r"^(?:/[^/]+)*/config/users/[^/]+$")
BROKERS = re.compile(r"^(?:/[^/]+)*/config/brokers/[^/]+$")


def fingerprint(value: str | bytes) -> str:
    raw = value.encode("utf-8", "surrogatepass") if isinstance(value, str) else value
    return hashlib.sha256(raw).hexdigest()[:12]


def redacted(value: str | bytes) -> str:
    return REDACTED.format(fingerprint(value))


def is_secret_config(key: str) -> bool:
    return bool(SECRET_CONFIG.search(key.strip()))


def holds_secrets(path: str) -> bool:
    """Znodes whose data may carry secrets: their data is always looked at by redact_znode."""
    return bool(USERS.match(path) or BROKERS.match(path))


def redact_znode(path: str, data: bytes | None) -> tuple[bytes | None, bool]:
    """Data of a znode with its secrets replaced, and whether anything was replaced.

    Config znodes are `{"version":1,"config":{...}}` (ConfigEntityZNode.encode, ZkData.scala @2.8.2); only
    the secret values change, the JSON keeps its key order. Data under these paths that is not that JSON
    is replaced whole, since we cannot tell what in it is secret.
    """
    if data is None or not holds_secrets(path):
        return data, False
    is_user = bool(USERS.match(path))
    try:
        doc = json.loads(data.decode("utf-8"))
        config = doc["config"]
        if not isinstance(config, dict):
            raise TypeError("config is not an object")
    except (UnicodeDecodeError, ValueError, KeyError, TypeError):
        return redacted(data).encode(), True
    changed = False
    for key, value in config.items():
        secret = SCRAM_MECHANISM.match(key) if is_user else is_secret_config(key)
        if secret and value is not None and not is_redacted(value):
            config[key] = redacted(str(value))
            changed = True
    if not changed:
        return data, False
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode("utf-8"), True


def redact_properties(text: str) -> tuple[str, int]:
    """server.properties with PASSWORD-type values replaced; returns the text and how many were.

    Lines are kept as they are (comments, order, separators `=`, `:` or blank as java.util.Properties
    reads them); continuation lines of a secret value are dropped with it.
    """
    out: list[str] = []
    count = 0
    skipping = False
    for line in text.splitlines(keepends=True):
        if skipping:
            skipping = line.rstrip("\r\n").endswith("\\")
            continue
        m = re.match(r"^(\s*)([^#!\s][^=:\s]*)(\s*[=:\s]\s*)(.*?)(\r?\n)?$", line)
        if m and is_secret_config(m.group(2)) and not is_redacted(m.group(4)):
            value = m.group(4)
            skipping = value.endswith("\\")
            out.append(f"{m.group(1)}{m.group(2)}{m.group(3)}{redacted(value)}{m.group(5) or ''}")
            count += 1
        else:
            out.append(line)
    return "".join(out), count


def is_redacted(value: Any) -> bool:
    """A value capture already replaced (`[redacted:<fingerprint>]`)."""
    return isinstance(value, str) and bool(re.fullmatch(REDACTED_VALUE, value))
