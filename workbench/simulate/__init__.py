"""Synthetic ZooKeeper-mode Kafka clusters: incidents replayed into evidence bundles with their truth.

Never imports `workbench.analysis`: the truth must come from the model, not from the code it checks.
"""
