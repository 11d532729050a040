"""The tests' ZooKeeper harness (kazoo's testing/harness.py): one real server per test session, a chroot
of it per test (`zookeeper`), removed after it, whatever ACLs the test wrote there."""

from __future__ import annotations

import re
from typing import Any

import pytest
from conftest import ADMIN_DIGEST
from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError
from kazoo.security import make_digest_acl

from workbench.testing.zookeeper import Chroot


def test_a_chroot_is_the_whole_tree_to_its_clients_and_goes_with_its_test(zookeeper: Any) -> None:
    server = zookeeper.server
    other = Chroot(server, zookeeper.path + "-other")
    other.make()
    mine, theirs = KazooClient(hosts=zookeeper.hosts), KazooClient(hosts=other.hosts)
    whole = KazooClient(hosts=server.hosts, auth_data=ADMIN_DIGEST)
    for c in (mine, theirs, whole):
        c.start(timeout=30)
    try:
        mine.create("/brokers/ids/1", b"{}", makepath=True)
        locked = make_digest_acl("admin", "s3cret", all=True)
        whole.create(f"{other.path}/secure", b"x", acl=[locked])
        whole.create(f"{other.path}/secure/child", b"y", acl=[locked])
        assert mine.get_children("/") == ["brokers"] and theirs.get_children("/") == ["secure"]
        assert whole.exists(f"{zookeeper.path}/brokers/ids/1") is not None
        with pytest.raises(NoAuthError, match=f"chroot {re.escape(other.path)} of .* could not be removed"):
            other.remove()  # without the auth its ACLs ask for: said, naming the chroot
        other.remove(ADMIN_DIGEST)  # as the fixture removes a test's chroot, ACLs and all
        assert whole.exists(other.path) is None and whole.exists(zookeeper.path) is not None
    finally:
        for c in (mine, theirs, whole):
            c.stop()
            c.close()
