"""The image's packages as ``apt-get`` resolved them, kept between ``abstat testbox up``\\ s.

``apt-get -s install`` of the image's packages (:func:`abstat.lab.testbox.image.resolve`) costs seconds of
CPU at every ``testbox up`` (about 13 s of wall time at a load of 17 on two cores).  Its answer depends only
on the packages asked for and on apt's state: the files under ``/etc/apt`` (sources, preferences,
configuration, ``$APT_CONFIG``) and ``/var/lib/apt/lists``.  Their paths, sizes and modification times are
the key of the answer kept in ``resolved.json`` of the images' private directory; any change (an
``apt-get update``, a new source) resolves again.  A kept answer that is not what :func:`store` writes is
ignored, never trusted: its every name and version must match the patterns a fresh answer must.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile

APT_STATE = ("/etc/apt", "/var/lib/apt/lists")
FILE = "resolved.json"
MAX_BYTES = 1 << 20


def fingerprint(packages: tuple[str, ...], roots: tuple[str, ...] = APT_STATE) -> str:
    """The key of a resolution: the packages asked for, ``$APT_CONFIG`` and every file of apt's state."""
    digest = hashlib.sha256(json.dumps([list(packages), os.environ.get("APT_CONFIG")]).encode())
    for top in (*roots, *filter(None, [os.environ.get("APT_CONFIG")])):
        for directory, subdirectories, files in os.walk(top):
            subdirectories.sort()
            for name in sorted(files):
                path = os.path.join(directory, name)
                with contextlib.suppress(OSError):
                    info = os.stat(path)
                    digest.update(f"{path}\0{info.st_size}\0{info.st_mtime_ns}\n".encode(errors="replace"))
        with contextlib.suppress(OSError):  # a single file ($APT_CONFIG) or a missing directory
            info = os.stat(top)
            digest.update(f"{top}\0{info.st_size}\0{info.st_mtime_ns}\n".encode(errors="replace"))
    return digest.hexdigest()


def load(directory: str, key: str, name: re.Pattern[str], version: re.Pattern[str]) -> list[tuple[str, str]] | None:
    """The packages kept under ``key``; None when there are none (or what is kept is not a valid answer)."""
    try:
        with open(os.path.join(directory, FILE), "rb") as source:
            kept = json.loads(source.read(MAX_BYTES + 1)[:MAX_BYTES])
    except (OSError, ValueError):
        return None
    if not isinstance(kept, dict) or kept.get("key") != key or not isinstance(kept.get("packages"), list):
        return None
    found = []
    for item in kept["packages"]:
        if not (isinstance(item, list) and len(item) == 2 and all(isinstance(part, str) for part in item)):
            return None
        if not (name.fullmatch(item[0]) and version.fullmatch(item[1])):
            return None
        found.append((item[0], item[1]))
    return found or None


def store(directory: str, key: str, packages: list[tuple[str, str]]) -> None:
    """Keep ``packages`` under ``key`` (written whole, then renamed into place; a failure only loses the cache)."""
    try:
        fd, path = tempfile.mkstemp(prefix=".resolved-", dir=directory)
    except OSError:
        return
    try:
        with os.fdopen(fd, "w") as out:
            json.dump({"key": key, "packages": [list(item) for item in packages]}, out)
        os.replace(path, os.path.join(directory, FILE))
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(path)
