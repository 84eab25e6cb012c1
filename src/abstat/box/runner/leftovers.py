"""What earlier runs left behind: their cgroups (killed and removed) and processes found by their token (reported).

Standard library only (the runner's package)."""

from __future__ import annotations

from abstat.box.runner import cgroup, reaper


def leftover_notes() -> list[str]:
    """Notes on processes an earlier run left behind (its abstat and supervisor were killed):
    they may load the machine this run measures.  Those in a run's cgroup are killed
    with it and the cgroup removed; those found by their token only are reported."""
    notes = cleaned_cgroup_notes()
    for run, pids in sorted(reaper.leftovers().items()):
        shown = ", ".join(reaper.describe(pid) for pid in sorted(pids)[:5])
        more = f" and {len(pids) - 5} more" if len(pids) > 5 else ""
        notes.append(
            f"{len(pids)} process(es) left by an earlier abstat run (token {run}) still run: "
            f"PID {shown}{more}; they may disturb these measurements"
        )
    return notes


def cleaned_cgroup_notes() -> list[str]:
    """Kill and remove the cgroups of runs whose abstat and supervisor are gone; a note for each."""
    home = cgroup.own_directory()
    if home is None:
        return []
    notes = []
    for directory in cgroup.leftover_directories(home, reaper.live_runs):
        shown = [reaper.describe(pid) for pid in sorted(cgroup.members(directory))]
        killed = cgroup.kill(directory)
        gone = cgroup.remove(directory)
        what = (
            f"killed {len(killed)} process(es) (PID {', '.join(shown[:5])}{' …' if len(shown) > 5 else ''})"
            if killed
            else "no process was left in it"
        )
        notes.append(
            f"an earlier abstat run left cgroup {directory}: {what}; "
            + ("removed it" if gone else "could not remove it")
        )
    return notes
