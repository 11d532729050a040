"""`WorkbenchError`: the base of the errors the workbench raises about what it was given (a bundle, a file,
a server), so that a caller can tell them from its own bugs with one `except`. Standard library only: the
broker-side collector shares it."""

from __future__ import annotations


class WorkbenchError(Exception):
    """Evidence or a setting the workbench cannot use; the message names what and what was expected."""
