"""A one-turn ``add()`` with the write log on, off, and at an older commit.

Run::

    python bench/add_cost.py [--base e35b324] [--rounds 5] [--stores 4]
                             [--calls 2000] [--warm 100]

Issue 23 asks that ``add()`` without a model be no slower than before the trust work
(``e35b324``). Each round runs three processes one after another: this checkout with the
write log on (the default), this checkout with it off (``SQLiteStore(path,
write_log=False)``), and ``--base`` checked out into a temporary git worktree and put first
on ``PYTHONPATH``. Each process opens ``--stores`` fresh file stores in turn, warms each
with ``--warm`` calls, then times ``--calls`` calls of ``add([turn])`` over ``perf.py``'s
chat mix (the checked-out tree's own ``perf._chat_turn``), by wall clock and by the
process's user CPU time (``getrusage``). Separate processes in alternation, because the
machine's speed drifts over minutes and a store's pages stay warm within one.

The table gives, per variant, the median over every store of every round of the
microseconds a call, the lowest and highest store, and the median's ratio to the base's.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve()
ROOT = HERE.parents[1]
VARIANTS = ("on", "off", "base")


def child(variant: str, tree: str, stores: int, calls: int, warm: int) -> dict[str, list[float]]:
    """Time ``add([turn])`` in this process: ``stores`` fresh stores, one after another."""
    sys.path.insert(0, os.path.join(tree, "bench"))
    import perf  # the tree's own chat mix and clock

    from memvara import Memvara, SQLiteStore

    warnings.simplefilter("ignore")  # no model given: add() says so once a store
    wall: list[float] = []
    user: list[float] = []
    with tempfile.TemporaryDirectory(prefix="memvara-add-cost-") as folder:
        for n in range(stores):
            path = os.path.join(folder, f"{n}.db")  # the base may predate write_log=
            store = SQLiteStore(path) if variant == "base" else SQLiteStore(path, write_log=variant == "on")
            mem = Memvara(store=store, clock=perf.CounterClock())
            for i in range(warm):
                mem.add([perf._chat_turn(f"w{n}", i)])
            before, started = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
            for i in range(calls):
                mem.add([perf._chat_turn(f"t{n}", i)])
            after, ended = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
            mem.close()
            wall.append((ended - started) / calls * 1e6)
            user.append((after.ru_utime - before.ru_utime) / calls * 1e6)
    return {"wall": wall, "user": user}


def _run(variant: str, tree: str, args: argparse.Namespace) -> dict[str, list[float]]:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    if variant == "base":
        env["PYTHONPATH"] = os.pathsep.join(p for p in (tree, env.get("PYTHONPATH")) if p)
    done = subprocess.run(
        [sys.executable, str(HERE), "--child", variant, "--tree", tree, "--stores", str(args.stores),
         "--calls", str(args.calls), "--warm", str(args.warm)],
        cwd=tree, env=env, check=False, capture_output=True, text=True)
    if done.returncode != 0:  # the child's own traceback, not just its exit status
        raise SystemExit(f"the {variant!r} process exited with {done.returncode}:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def table(results: dict[str, dict[str, list[float]]], base: str) -> str:
    """Per variant: median, lowest and highest store, ratio to the base's median."""
    def median(variant: str, key: str) -> float:
        return statistics.median(results[variant][key])

    def ratio(variant: str, key: str) -> str:
        # user CPU time is counted in clock ticks: a short run can show none at all
        base_median = median("base", key)
        return f"{median(variant, key) / base_median:.3f}" if base_median else "n/a"

    lines = ["| variant | wall us a call, median | lowest-highest store | user CPU us, median"
             " | wall / base | user / base |", "|---|---:|---:|---:|---:|---:|"]
    names = {"on": "write log on (the default)", "off": "write log off", "base": f"`{base}`"}
    for variant in VARIANTS:
        wall = results[variant]["wall"]
        lines.append(
            f"| {names[variant]} | {median(variant, 'wall'):.1f} | {min(wall):.1f}-{max(wall):.1f}"
            f" | {median(variant, 'user'):.1f} | {ratio(variant, 'wall')} | {ratio(variant, 'user')} |")
    return "\n".join(lines)


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--base", default="e35b324", help="the commit to compare with")
    p.add_argument("--rounds", type=int, default=5, help="rounds of the three processes")
    p.add_argument("--stores", type=int, default=4, help="fresh stores a process times")
    p.add_argument("--calls", type=int, default=2000, help="timed add() calls a store")
    p.add_argument("--warm", type=int, default=100, help="untimed add() calls a store first")
    p.add_argument("--child", choices=VARIANTS, help=argparse.SUPPRESS)
    p.add_argument("--tree", default=str(ROOT), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if min(args.rounds, args.stores, args.calls) < 1 or args.warm < 0:
        p.error("--rounds, --stores and --calls must be at least 1, --warm at least 0")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    if args.child:
        print(json.dumps(child(args.child, args.tree, args.stores, args.calls, args.warm)))
        return 0
    sys.path.insert(0, str(HERE.parent))
    from _report import environment

    print("# memvara: a one-turn add(), write log on and off, against an older commit\n")
    for key, value in environment().items():
        print(f"- {key}: `{value}`" if key == "command" else f"- {key}: {value}")
    with tempfile.TemporaryDirectory(prefix="memvara-add-base-") as folder:
        tree = os.path.join(folder, "base")
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", tree,
                        args.base], check=True)
        try:
            results: dict[str, dict[str, list[float]]] = {v: {"wall": [], "user": []} for v in VARIANTS}
            for n in range(args.rounds):
                for variant in VARIANTS:
                    got = _run(variant, tree if variant == "base" else str(ROOT), args)
                    for key in ("wall", "user"):
                        results[variant][key] += got[key]
                print(f"... round {n + 1} of {args.rounds} done", file=sys.stderr, flush=True)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", tree],
                           check=False)
    print(f"- base: `{args.base}`; {args.rounds} rounds x {args.stores} stores x {args.calls}"
          f" calls (after {args.warm} untimed)\n")
    print(table(results, args.base))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
