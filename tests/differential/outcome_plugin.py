"""pytest plugin for the third-party differential runs (loaded with ``-p outcome_plugin``).

Used in a child pytest process that runs a package's own test suite:

- ``AUTOSTAGE_DIFF_CONVERT=<package>`` converts that package in place with
  ``package_conversion.convert_package`` before any test module is imported (so that the tests'
  ``from package import f`` bind the converted functions); ``AUTOSTAGE_DIFF_SKIP`` holds a JSON
  object {qualified name: reason} of functions to leave as written; ``AUTOSTAGE_DIFF_LAZY=1``
  converts each function on its first call;
- ``AUTOSTAGE_DIFF_OUT=<file>`` receives a JSON object: ``outcomes`` (test node id -> "passed",
  "failed", "skipped", "error"), ``messages`` (node id -> the failure's last lines) and
  ``report`` (what the conversion did).
"""

from __future__ import annotations

import dataclasses
import json
import os

_outcomes: dict[str, str] = {}
_messages: dict[str, str] = {}
_report: dict = {}


def pytest_configure(config):
    package = os.environ.get("AUTOSTAGE_DIFF_CONVERT")
    if package:
        import package_conversion

        skip = json.loads(os.environ.get("AUTOSTAGE_DIFF_SKIP", "{}"))
        lazy = os.environ.get("AUTOSTAGE_DIFF_LAZY") == "1"
        _report["live"] = package_conversion.convert_package(package, skip, lazy=lazy)


def _record(nodeid: str, outcome: str, longrepr) -> None:
    rank = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
    if rank.get(outcome, 0) >= rank.get(_outcomes.get(nodeid, "passed"), 0):
        _outcomes[nodeid] = outcome
    if longrepr is not None and outcome in ("failed", "error"):
        _messages[nodeid] = "\n".join(str(longrepr).splitlines()[-15:])


def pytest_runtest_logreport(report):
    if report.when == "call":
        _record(report.nodeid, report.outcome, report.longrepr)
    elif report.outcome == "failed":  # setup or teardown failed
        _record(report.nodeid, "error", report.longrepr)
    elif report.outcome == "skipped":
        _record(report.nodeid, "skipped", None)


def pytest_collectreport(report):
    if report.outcome == "failed":
        _record(report.nodeid, "error", report.longrepr)


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("AUTOSTAGE_DIFF_OUT")
    if path:
        with open(path, "w") as f:
            report = dataclasses.asdict(_report["live"]) if "live" in _report else {}
            json.dump({"outcomes": _outcomes, "messages": _messages, "report": report}, f)
