"""Test harnesses that run the real thing: a standalone ZooKeeper and ZooKeeper's own file tools, and a
Spark standalone cluster."""
