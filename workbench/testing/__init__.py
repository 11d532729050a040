"""Test harnesses that run the real thing: a standalone ZooKeeper and ZooKeeper's own file tools, and a
Spark standalone cluster."""

import socket


def free_port() -> int:
    """A TCP port on loopback that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
