"""Issue 36, item 9: a store's password is never printed: not by ``run --print-spec``, and not from a
keyword/value connection string (``host=... password=...``) named as a store."""

from __future__ import annotations


import pytest

from abstat.store.backend import display_name, scrub
from support import paths
from support.cli import run_abstat as _abstat

SRC = paths.SRC
SECRET = "s3cret-Pw"


@pytest.mark.parametrize(
    "store",
    [
        f"postgresql://bench:{SECRET}@127.0.0.1:1/abstat",
        f"postgresql://127.0.0.1:1/abstat?password={SECRET}&sslmode=disable",
        f"host=127.0.0.1 port=1 password={SECRET} dbname=abstat",
    ],
)
def test_print_spec_shows_no_password(tmp_path, store):
    done = _abstat("run", "--print-spec", "-v", "a=true", "--store", store, cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert SECRET not in done.stdout + done.stderr and "***" in done.stdout


@pytest.mark.parametrize("command", [("list",), ("show", "x"), ("export",), ("report",)])
def test_a_keyword_connection_string_is_never_echoed_with_its_password(tmp_path, command):
    store = f"host=127.0.0.1 password={SECRET} dbname=abstat"
    done = _abstat(*command, "--store", store, cwd=str(tmp_path))
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert SECRET not in done.stdout + done.stderr and "password=***" in done.stderr, done.stderr


def test_display_name_and_scrub_mask_every_form():
    assert display_name(f"host=h password = '{SECRET} x' user=u") == "host=h password = *** user=u"
    assert display_name(f"PASSWORD={SECRET}") == "PASSWORD=***"
    assert display_name("plain.db") == "plain.db"
    assert SECRET not in scrub(f"FATAL: password {SECRET} refused", f"host=h password={SECRET}")
