"""``python wait_for_server.py PID PORT``: exit 0 once something answers HTTP on PORT, 1 when
process PID is gone first or nothing answers within 60 s (used by harness.py for servers a page
starts in the background)."""

from __future__ import annotations

import os
import sys
import time
import urllib.error
import urllib.request


def _running(pid: int) -> bool:
    """Whether ``pid`` runs (an exited child its shell has not reaped yet is a zombie: gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def main() -> int:
    pid, port = int(sys.argv[1]), int(sys.argv[2])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if not _running(pid):
            return 1
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1)
            return 0
        except urllib.error.HTTPError:
            return 0  # an answer, if not a 200
        except OSError:
            time.sleep(0.1)
    return 1


if __name__ == "__main__":
    sys.exit(main())
