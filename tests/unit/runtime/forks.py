"""Waiting for a forked child in a test: a child that hangs (the failure these tests look for)
is killed and reported, not left to hang the suite."""

import os
import signal
import time


def assert_child_exits_cleanly(pid: int, limit_s: float = 120.0) -> None:
    deadline = time.monotonic() + limit_s
    while (done := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    if done[0] == 0:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    assert done[0] == pid and os.waitstatus_to_exitcode(done[1]) == 0, "the child hung or failed"
