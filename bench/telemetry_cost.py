"""What ``telemetry=None`` costs: this tree against a copy with the emission points deleted.

Run::

    python bench/telemetry_cost.py [--runs 7] [--turns 2000]

The control is built from this tree: the package is copied to a temporary folder and
every ``if <recorder> is not None: ...`` block whose test names a recorder is removed
from the copy's source (with ``ast``), so it cannot emit anything and pays for no guard.
Both trees then run the same workload in fresh subprocesses, alternating, ``--runs``
times each: ``add()`` one chat turn a call (the write path, where the emission points
are) on an in-memory store with no model. The table shows each tree's median turns/s,
its spread, and the difference of the medians.
"""

from __future__ import annotations

import argparse
import ast
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

WORKLOAD = r"""
import json, sys, time, warnings
sys.path.insert(0, sys.argv[1])
sys.path.insert(1, sys.argv[2])
warnings.simplefilter("ignore")
import memvara
from perf import _chat_turn
assert memvara.__file__.startswith(sys.argv[1]), memvara.__file__
mem = memvara.Memvara()
turns = [_chat_turn("t", i) for i in range(int(sys.argv[3]))]
for turn in turns[:200]:
    mem.add(turn, user="warm")
t0 = time.perf_counter()
for turn in turns:
    mem.add(turn)
print(json.dumps(len(turns) / (time.perf_counter() - t0)))
"""


def _is_recorder_guard(test: ast.expr) -> bool:
    """``<...recorder...> is not None``, alone or as the first term of an ``and``."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return _is_recorder_guard(test.values[0])
    return (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.IsNot)
        and "recorder" in ast.unparse(test.left)
    )


class _DropRecorderGuards(ast.NodeTransformer):
    """Removes ``if <...recorder...> is not None [and ...]:`` blocks (with no ``else``)."""

    removed = 0

    def visit_If(self, node: ast.If) -> ast.AST | None:
        self.generic_visit(node)
        if _is_recorder_guard(node.test) and not node.orelse:
            self.removed += 1
            return ast.Pass()
        return node


def build_control(into: Path) -> int:
    """Copy the package into ``into`` with the recorder guards deleted; how many."""
    shutil.copytree(ROOT / "memvara", into / "memvara")
    removed = 0
    for path in (into / "memvara").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        dropper = _DropRecorderGuards()
        tree = dropper.visit(tree)
        if dropper.removed:
            path.write_text(ast.unparse(ast.fix_missing_locations(tree)), encoding="utf-8")
            removed += dropper.removed
    return removed


def run(package_root: Path, turns: int) -> float:
    out = subprocess.run(
        [sys.executable, "-c", WORKLOAD, str(package_root), str(ROOT / "bench"), str(turns)],
        check=True, capture_output=True, text=True,
    )
    return float(json.loads(out.stdout))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="subprocess runs per tree")
    parser.add_argument("--turns", type=int, default=2000, help="add() calls per run")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        control = Path(folder)
        removed = build_control(control)
        rates: dict[str, list[float]] = {"this tree (telemetry=None)": [], "control (no emission points)": []}
        for _ in range(args.runs):
            rates["this tree (telemetry=None)"].append(run(ROOT, args.turns))
            rates["control (no emission points)"].append(run(control, args.turns))
    print(f"# {removed} guarded emission blocks removed in the control;"
          f" {args.runs} runs x {args.turns} add() calls each, alternating\n")
    print("| tree | median turns/s | spread (min-max) |")
    print("|---|---:|---|")
    for name, values in rates.items():
        print(f"| {name} | {statistics.median(values):,.0f} |"
              f" {min(values):,.0f} - {max(values):,.0f} |")
    ours, control_rate = (statistics.median(v) for v in rates.values())
    print(f"\nmedian difference: {100 * (ours - control_rate) / control_rate:+.1f}%"
          " (negative: telemetry=None is slower)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
