"""Redaction rules, including znodes below a chroot as ZooKeeper's txn logs and snapshots name them."""

from __future__ import annotations

import pytest

from workbench.capture.redact import redact_znode

SCRAM = b'{"version":1,"config":{"SCRAM-SHA-256":"salt=c2FsdA==,stored_key=S0VZ,iterations=4096"}}'


@pytest.mark.parametrize("root", ["", "/kafka", "/a/b"])
def test_secrets_are_found_at_the_root_and_below_a_chroot(root: str) -> None:
    data, changed = redact_znode(f"{root}/config/users/alice", SCRAM)
    assert changed and data is not None and b"stored_key" not in data and b"[redacted:" in data
    broker = b'{"version":1,"config":{"ssl.keystore.password":"pw","log.cleaner.threads":"2"}}'
    data, changed = redact_znode(f"{root}/config/brokers/1", broker)
    assert changed and data is not None and b'"pw"' not in data and b'"log.cleaner.threads":"2"' in data


def test_other_znodes_are_left_alone() -> None:
    assert redact_znode("/config/topics/alice", SCRAM) == (SCRAM, False)
    assert redact_znode("/config/users/alice/child", SCRAM) == (SCRAM, False)
