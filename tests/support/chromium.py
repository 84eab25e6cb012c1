"""Headless Chromium for the tests that render reports and sites (render/, render/site/): the real
browser as the reference for what a page shows and runs."""

from __future__ import annotations

import os
import subprocess

import pytest

CHROMIUM = "/usr/bin/chromium"
needs_chromium = pytest.mark.skipif(
    not os.path.exists(CHROMIUM), reason="/usr/bin/chromium is absent (Debian package chromium)"
)


def chromium(tmp_path, url: str, *extra: str) -> subprocess.CompletedProcess:
    profile = tmp_path / f"profile{len(list(tmp_path.glob('profile*')))}"
    profile.mkdir()
    return subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            f"--user-data-dir={profile}",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1200,1000",
            *extra,
            url,
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )


def console_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]
