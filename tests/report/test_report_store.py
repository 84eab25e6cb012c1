"""abstat report over the store written by abstat run (labels, runs, machine records)."""

from __future__ import annotations

import json
import random

import pytest

from abstat.cli import main as cli_main

store_api = pytest.importorskip("abstat.store")


def make_store(path) -> None:
    rng = random.Random(5)
    with store_api.open_store(str(path)) as store:
        for host, scale in (("milan", 1.0), ("skx", 1.6)):
            for boot in range(2):
                machine = {
                    "hostname": host,
                    "boot_id": f"{host}-{boot}",
                    "cpu_model": f"<i>{host} cpu</i>",
                    "kernel": "6.1.0",
                }
                inv = store.start_invocation(
                    "hcall", machine, argv=["abstat", "run"], labels={"mode": "pv64"}, variants=["before", "after"]
                )
                for position, (variant, centre) in enumerate((("before", 440), ("after", 372))):
                    for iteration in range(10):
                        value = rng.gauss(centre * scale, 6) * 1e-6
                        store.add_run(
                            inv,
                            variant=variant,
                            command=f"./hcall --{variant}",
                            iteration=iteration,
                            position=position,
                            status="ok",
                            exit_code=0,
                            started_at=0.0,
                            wall=value,
                            values={"wall": [value]},
                            units={"wall": "s"},
                        )
                store.finish_invocation(inv, "ok")


def test_store_report_rows_runs_and_machines(tmp_path, capsys):
    db = tmp_path / "abstat.db"
    make_store(db)
    assert cli_main(["report", "--store", str(db), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["row_keys"] == ["host"]
    assert doc["common_labels"] == {"mode": "pv64", "experiment": "hcall", "metric": "wall"}
    assert [r["labels"]["host"] for r in doc["rows"]] == ["milan", "skx"]
    after = doc["rows"][0]["cells"]["after"]["comparison"]
    assert after["detail"]["unit"] == "runs" and after["detail"]["runs"] == [2, 2]
    assert set(doc["machines"]) == {"milan", "skx"}

    out = tmp_path / "r.html"
    assert cli_main(["report", "--store", str(db), "--format", "html", "-o", str(out)]) == 0
    html = out.read_text()
    assert '<h2 id="machines">Machines</h2>' in html
    assert "&lt;i&gt;skx cpu&lt;/i&gt;" in html and "<i>" not in html

    assert cli_main(["report", "--store", str(db), "--where", "host=skx", "--format", "text"]) == 0
    text = capsys.readouterr().out
    assert "host=skx" in text.splitlines()[0]


def test_store_where_filters_before_building(tmp_path, capsys):
    db = tmp_path / "abstat.db"
    make_store(db)
    assert cli_main(["report", "--store", str(db), "--where", "host=nope"]) == 2
    assert "no matching samples" in capsys.readouterr().err
