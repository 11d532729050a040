"""environment.yml names pyproject.toml's runtime packages and its notebooks and test extras, with the same
bounds; the runtime needs neither Jupyter nor pytest; the package ships the files it opens."""

from __future__ import annotations

import re

import tomllib
from conftest import REPO


def _name_and_spec(req: str) -> tuple[str, str]:
    m = re.match(r"^\s*([A-Za-z0-9_.-]+)\s*(.*?)\s*$", req.split("#")[0])
    assert m, req
    return m.group(1).lower(), m.group(2).replace(" ", "")


def test_environment_yml_matches_pyproject() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    # conda users get the notebooks and the tests too: the runtime packages and those two extras
    wanted = dict(
        _name_and_spec(r) for r in [*project["dependencies"], *extras["notebooks"], *extras["test"]]
    )
    assert {"pytest", "nbval", "jupyterlab", "papermill"}.isdisjoint(
        _name_and_spec(r)[0] for r in project["dependencies"]
    )
    conda = {}
    text = (REPO / "environment.yml").read_text()
    for line in text.split("dependencies:", 1)[1].splitlines():
        m = re.match(r"^  - ([A-Za-z0-9_.-]+)(.*)$", line)
        if m and m.group(1) not in ("python", "openjdk", "pip"):
            conda[m.group(1).lower()] = m.group(2).strip().replace(" ", "")
    assert conda == wanted


def test_the_package_ships_the_files_it_opens() -> None:
    """Every package-data pattern names a file, and the report template is package data (an installed
    wheel runs `workbench report`): the notebook in notebooks/ is a link to it."""
    from workbench import report

    shipped = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    for pattern in shipped["workbench"]:
        assert list((REPO / "workbench").glob(pattern)), pattern
    assert report.TEMPLATE.parent.resolve() == (REPO / "workbench").resolve()
    assert report.TEMPLATE.name in shipped["workbench"]
    assert (REPO / "notebooks" / "00-postmortem-template.ipynb").resolve() == report.TEMPLATE.resolve()
