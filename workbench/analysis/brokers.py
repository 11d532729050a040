"""The controller analysis's findings about single brokers: the ZooKeeper sessions they lost, their
controlled shutdowns that were retried or gave up, and the brokers the controller could not reach; with the
words for how a broker's session ended (CAUSE_TEXT), which the failover findings use too. Plain Python."""

from __future__ import annotations

from typing import Any

from workbench.analysis.contract import CRITICAL, INFO, WARNING
from workbench.analysis.findings import Finding, hex_zxid, txn_ref
from workbench.model.channel import NoEndpoint, Unreachable
from workbench.model.history.sessions import Expired
from workbench.model.session_ends import SILENT_ENDINGS
from workbench.model.shutdowns import ControlledShutdown

CAUSE_TEXT = {
    "shutdown": "broker {b} shut down",
    "session_expiry": "broker {b}'s ZooKeeper session expired",
    "crash": "broker {b} stopped without a shutdown (a crash or hang) and ZooKeeper expired its session",
    "halted": "broker {b} halted for failed log dirs (at once, without a shutdown: its session was not "
    "closed) and ZooKeeper expired its session",
    "hang": "broker {b} stood still (its ZooKeeper client heard nothing for about the whole session timeout: "
    "a long GC pause, a stalled disk or a frozen VM), ZooKeeper expired its session, and it learned so when "
    "it ran again",
    "network_partition": "broker {b} kept running but lost ZooKeeper (its client timed out after the read "
    "timeout, 2/3 of the session's: a network partition or ZooKeeper unreachable) and ZooKeeper expired "
    "its session",
    "unknown": "broker {b}'s session closed (no log from broker {b} tells a shutdown from a crash)",
    "untold": "broker {b}'s lines in the evidence do not say why its tenure ended",
    "deleted": "/controller was deleted by {by}",
}


def unreachable_finding(u: Unreachable) -> Finding:
    """A registered broker the controller could not send to: its decisions did not reach that broker."""
    by = f"Controller {u.controller}" if u.controller is not None else "The controller"
    b = u.broker
    text = (
        f"{by} could not send its requests to broker {b} from {u.first.ts:%Y-%m-%d %H:%M:%S} to "
        f"{u.last.ts:%H:%M:%S} (its clock; {u.failures} failed attempt(s)), and no line says it handled "
        f"broker {b}'s failure after: broker {b} stayed registered, so the leaderships and ISRs the "
        "controller decided (LeaderAndIsr, UpdateMetadata, StopReplica) did not reach it then. Check the "
        f"network between them and broker {b}'s listener for the controller (control.plane.listener.name, "
        "else inter.broker.listener.name)."
    )
    subject: dict[str, Any] = {"broker": b, "failures": u.failures}
    if u.controller is not None:
        subject["controller"] = u.controller
    return Finding("controller.broker_unreachable", WARNING, subject, text, (u.first.ref, u.last.ref))


def no_endpoint_finding(n: NoEndpoint) -> Finding:
    """A broker registered without the controller's listener: the controller's event fails on it."""
    b, listener = n.broker, n.listener
    text = (
        f"Broker {b} registered without an endpoint for listener {listener}, the one the controller "
        f"reaches brokers by: the controller failed {n.event} on it {n.failures} time(s) from "
        f"{n.first.ts:%Y-%m-%d %H:%M:%S} to {n.last.ts:%H:%M:%S} (its clock), so broker {b} got none of "
        f"its requests and serves no replica. Add listener {listener} to broker {b}'s listeners and "
        "advertised.listeners and restart it."
    )
    subject = {"broker": b, "listener": listener}
    return Finding("broker.no_endpoint", CRITICAL, subject, text, (n.first.ref, n.last.ref))


def shutdown_finding(c: ControlledShutdown) -> Finding:
    """A controlled shutdown that was retried, or that gave up: the broker went down still leading what
    the controller had not moved (other leaders are elected then from the ISR, none where it was the last
    member: `last_isr_member_kept`)."""
    left = f"; the controller last said {c.remaining} remained to move" if c.remaining else ""
    text = f"Broker {c.broker}'s controlled shutdown, begun at {c.began:%Y-%m-%d %H:%M:%S} (its clock), "
    if c.gave_up:
        text += f'failed after {c.attempts} attempt(s){left}: it went down anyway ("Proceeding to do an '
        text += 'unclean shutdown"), still leading the partitions not moved; they had no leader until the '
        text += "controller elected others, and none where it was their only in-sync replica."
    else:
        text += f"took {c.attempts} attempts{left}, then succeeded."
    subject = {"broker": c.broker, "outcome": "failed" if c.gave_up else "retried", "attempts": c.attempts}
    return Finding(
        "broker.controlled_shutdown", WARNING if c.gave_up else INFO, subject, text, (c.began_ref, c.last_ref)
    )


def expiry_findings(expired: list[Expired]) -> list[Finding]:
    """Brokers that lost their ZooKeeper session: ZooKeeper closed it without the broker shutting down
    (history), or the broker's own client logged the expiry (logs only)."""
    out = []
    refs: tuple[str | None, ...]
    for e in expired:
        text = CAUSE_TEXT[e.how].format(b=e.broker)
        session = f"0x{e.session:x}" if e.session is not None else "?"
        if e.zxids is not None:
            if e.how not in SILENT_ENDINGS:
                continue
            made, ended = e.zxids
            subject = {"broker": e.broker, "session": session, "zxid": hex_zxid(ended), "cause": e.how}
            said = (
                f"{text[0].upper()}{text[1:]}: session {session} (registered at zxid {hex_zxid(made)}) "
                f"ended at zxid {hex_zxid(ended)}, {e.at:%Y-%m-%d %H:%M:%S} ZooKeeper time."
            )
            refs = (txn_ref(made), txn_ref(ended), e.ref)
        elif e.lines:
            subject = {"broker": e.broker, "cause": e.how}
            said = (
                f"Broker {e.broker}'s ZooKeeper session expired ({e.lines} line(s), first at "
                f"{e.at:%Y-%m-%d %H:%M:%S} broker time)."
            )
            refs = (e.first, None, None)
        elif e.session is None:  # a controller saw it fail; its own log holds no shutdown (model.failovers)
            subject = {"broker": e.broker, "cause": e.how}
            said = (
                f"{text[0].upper()}{text[1:]}: {e.seen}, and broker {e.broker}'s own log holds no shutdown "
                "or session expiry before then."
            )
            refs = (e.first, e.ref, None)
        else:
            subject = {"broker": e.broker, "session": session, "cause": e.how}
            said = (
                f"{text[0].upper()}{text[1:]}: its client logged session {session} expired at "
                f"{e.at:%Y-%m-%d %H:%M:%S} broker time."
            )
            refs = (e.first, e.ref, None)
        out.append(Finding("broker.session_expired", WARNING, subject, said, tuple(x for x in refs if x)))
    return out
