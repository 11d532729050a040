"""The topic-id repair plan: `plan` reads it from a bundle, `forecast` foretells each step, `scripts` and
`markdown` write it for the people who run it (`workbench remediate`)."""

from workbench.remediation.markdown import WARNING, in_report, summary
from workbench.remediation.planner import PLAN, BrokerStep, RepairPlan, StaleReplica, plan
from workbench.remediation.scripts import broker_script

__all__ = [
    "PLAN",
    "WARNING",
    "BrokerStep",
    "RepairPlan",
    "StaleReplica",
    "broker_script",
    "in_report",
    "plan",
    "summary",
]
