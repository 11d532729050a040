"""Redaction rules, including znodes below a chroot as ZooKeeper's txn logs and snapshots name them."""

from __future__ import annotations

import re

import pytest

from workbench.analysis.findings import Coverage
from workbench.analysis.triage import Triage
from workbench.capture.redact import CONFIG_IN_CLEAR, SCRAM_IN_CLEAR, redact_znode
from workbench.cli.render import triage_markdown, triage_text
from workbench.model.secrets import InClear

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


def test_what_redaction_replaces_is_what_triage_calls_in_clear() -> None:
    """The patterns Spark runs over a bundle's znodes (Java's regex) agree with the redaction itself:
    every value redact_znode replaces matches before and none after."""
    broker = b'{"version":1,"config":{"listener.name.x.ssl.keystore.password":"pw","log.retention.ms":"1"}}'
    for path, data, pattern in (
        ("/config/users/alice", SCRAM, SCRAM_IN_CLEAR),
        ("/kafka/config/brokers/1", broker, CONFIG_IN_CLEAR),
    ):
        redacted, changed = redact_znode(path, data)
        assert changed and redacted is not None
        assert re.search(pattern, data.decode()) and not re.search(pattern, redacted.decode())
    assert not re.search(CONFIG_IN_CLEAR, '{"version":1,"config":{"log.retention.ms":"1"}}')


def test_triage_says_first_which_files_hold_credentials() -> None:
    t = Triage([], Coverage(), 0, "b", [InClear("zk/txnlog/log.1", ("/config/users/alice",))])
    for text in (triage_text(t), triage_markdown(t)):
        first = text.splitlines()[:4]
        assert any("credentials in clear" in line for line in first)
        assert any("zk/txnlog/log.1 (/config/users/alice)" in line for line in first)
    assert "credentials" not in triage_text(Triage([], Coverage(), 0, "b"))
    assert t.as_dict()["secrets_in_clear"] == [{"file": "zk/txnlog/log.1", "holds": ["/config/users/alice"]}]
