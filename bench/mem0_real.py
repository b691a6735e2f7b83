"""memvara against the real mem0 package, on one transcript, fully offline.

Run::

    pip install -e '.[bench]'
    python bench/mem0_real.py [--runs 5] [--json PATH]

Both systems read the same 105-turn transcript (written for this benchmark: a user,
sam, chatting with an assistant; 22 of the turns state a fact about one of ten
single-valued slots, and twelve of those replace an earlier value). One extraction
oracle serves both: for every fact turn it returns the fact, and nothing for the
others. mem0 gets it as its LLM (``{"memory": [{"text": ...}]}``, the JSON mem0 2.x's
additive add path parses, answered only for the prompt's "New Messages" section);
memvara gets it as its ``LLM.extract`` (the same facts as triples). Both use memvara's
``HashingEmbedder``; mem0's vector store is Qdrant in ``:memory:``, telemetry off.

Per system, ``--runs`` fresh runs (default 5), each ingesting the transcript and then
reading every live memory of sam's:

* model calls on the write path (the oracle's count);
* current values correct: of the ten slots, how many hold their latest value live;
* stale values left live: replaced values still live;
* live rows: memories (mem0) or claims (memvara) live at the end;
* identical result every run: the set of live texts is the same in every run;
* median wall clock of one run's ingestion (min-max spread);
* packages installed: the distribution and everything it requires, by pip metadata.

mem0 is called once per turn (its ``add`` takes the conversation as it arrives);
memvara is measured both once per turn and with the whole transcript in one ``add()``.
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import json
import re
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from _mem0_offline import NewMessagesOracle, open_mem0
from _report import environment

from memvara import Claim, Episode, Memvara, PredicateSpec

USER = "sam"

# (turn, predicate, object, the fact as mem0's extractor would write it)
FACTS: list[tuple[str, str, str, str]] = [
    ("I live in Leeds, in a flat near the canal.", "lives_in", "Leeds", "Lives in Leeds"),
    ("I work at Halden Foods as a packer.", "works_at", "Halden Foods", "Works at Halden Foods"),
    ("My job title there is warehouse packer.", "job_title", "warehouse packer", "Job title is warehouse packer"),
    ("You can reach me at sam@halden.example.", "email", "sam@halden.example", "Email is sam@halden.example"),
    ("My phone number is 0113 496 0000.", "phone", "0113 496 0000", "Phone number is 0113 496 0000"),
    ("I keep my clocks on Europe/London time.", "timezone", "Europe/London", "Timezone is Europe/London"),
    ("I'm 29, for the record.", "age", "29", "Is 29 years old"),
    ("My manager is Priya Shah.", "reports_to", "Priya Shah", "Reports to Priya Shah"),
    ("My partner is Robin Vale.", "married_to", "Robin Vale", "Partner is Robin Vale"),
    ("Everyone calls me Sam Okafor.", "name", "Sam Okafor", "Name is Sam Okafor"),
    # the replacements, later in the conversation
    ("Big news: I got promoted to shift lead.", "job_title", "shift lead", "Job title is shift lead"),
    ("I'm now reporting to Tomasz Wren.", "reports_to", "Tomasz Wren", "Reports to Tomasz Wren"),
    ("I moved to York last weekend.", "lives_in", "York", "Lives in York"),
    ("My new phone number is 01904 555 0101.", "phone", "01904 555 0101", "Phone number is 01904 555 0101"),
    ("I just turned 30 yesterday.", "age", "30", "Is 30 years old"),
    ("I left Halden; I work at Brightwater Mills now.", "works_at", "Brightwater Mills", "Works at Brightwater Mills"),
    ("Use sam@brightwater.example from now on.", "email", "sam@brightwater.example", "Email is sam@brightwater.example"),
    ("My title at Brightwater is operations planner.", "job_title", "operations planner", "Job title is operations planner"),
    ("My manager at Brightwater is Ines Duarte.", "reports_to", "Ines Duarte", "Reports to Ines Duarte"),
    ("Robin and I got married, so Robin Vale-Okafor now.", "married_to", "Robin Vale-Okafor", "Partner is Robin Vale-Okafor"),
    ("I'm spending the winter in Lisbon, so I'm on Europe/Lisbon time.", "timezone", "Europe/Lisbon", "Timezone is Europe/Lisbon"),
    ("We moved again, to Harrogate this time.", "lives_in", "Harrogate", "Lives in Harrogate"),
]

SMALL_TALK = [
    "Can you suggest a podcast about birds?",
    "What's a good way to store fresh basil?",
    "Remind me how to convert Celsius to Fahrenheit.",
    "Any tips for a first half marathon?",
    "What rhymes with orange, if anything?",
    "How long should I steep green tea?",
    "Tell me a fun fact about octopuses.",
    "Is it worth learning to touch type?",
    "What's the difference between a crocodile and an alligator?",
    "Give me a quick stretch for a stiff neck.",
    "Why is the sky blue?",
    "How do I keep a sourdough starter alive?",
    "What board game works for four adults?",
    "Explain compound interest in one sentence.",
    "Which houseplants survive low light?",
    "What's a polite way to decline a meeting?",
]
REPLIES = [
    "Good question; here is a short answer.",
    "Here are three ideas to start with.",
    "Happy to help with that.",
    "That depends a little, but usually yes.",
    "Sure, here's a simple way to think about it.",
]
CONVERSATION_TURNS = 105


def transcript() -> list[tuple[str, str]]:
    """The 105 turns, deterministic: user and assistant alternate; every fact turn is a
    user turn, the first ten in the first half, the replacements in the second."""
    turns: list[tuple[str, str]] = []
    facts = iter(f[0] for f in FACTS)
    talk = 0
    user_turns = (CONVERSATION_TURNS + 1) // 2  # 53
    fact_slots = {round(i * (user_turns - 1) / (len(FACTS) - 1)) for i in range(len(FACTS))}
    for u in range(user_turns):
        if u in fact_slots:
            turns.append(("user", next(facts)))
        else:
            turns.append(("user", SMALL_TALK[talk % len(SMALL_TALK)] + f" (#{talk})"))
            talk += 1
        if len(turns) < CONVERSATION_TURNS:
            turns.append(("assistant", REPLIES[u % len(REPLIES)]))
    return turns


def expected() -> tuple[dict[str, str], set[tuple[str, str]]]:
    """Each slot's latest value, and every value a later one replaced."""
    current: dict[str, str] = {}
    stale: set[tuple[str, str]] = set()
    for _, predicate, obj, _ in FACTS:
        if predicate in current:
            stale.add((predicate, current[predicate]))
        current[predicate] = obj
    return current, stale


class TripleOracle:
    """memvara's ``LLM``: the same facts as triples, for the turns it is asked about."""

    is_null = False

    def __init__(self) -> None:
        self.calls = 0
        self._facts = {turn: (p, o) for turn, p, o, _ in FACTS}

    def extract(self, turns: Sequence[Episode]) -> list[Claim]:
        self.calls += 1
        out = []
        for t in turns:
            fact = self._facts.get(t.content)
            if fact is not None:
                out.append(Claim(USER, fact[0], fact[1], sources=(t.id,)))
        return out

    def classify_predicate(self, name: str) -> PredicateSpec | None:
        return None  # every predicate of the transcript is in memvara's seed schema


@dataclass
class Run:
    calls: int
    correct: int
    stale: int
    live: int
    signature: tuple[str, ...]
    seconds: float


def run_mem0(folder: Path, index: int) -> Run:
    oracle = NewMessagesOracle({turn: [text] for turn, _, _, text in FACTS})
    memory = open_mem0(str(folder / f"history-{index}.db"), oracle, collection=f"run{index}")
    turns = transcript()
    start = time.perf_counter()
    for role, text in turns:
        memory.add([{"role": role, "content": text}], user_id=USER)
    seconds = time.perf_counter() - start
    live = [r["memory"] for r in memory.get_all(filters={"user_id": USER}, top_k=10_000)["results"]]
    memory.close()
    text_of = {(p, o): text for _, p, o, text in FACTS}
    current, stale = expected()
    correct = sum(1 for p, o in current.items() if text_of[(p, o)] in live)
    left = sum(1 for key in stale if text_of[key] in live)
    return Run(oracle.calls, correct, left, len(live), tuple(sorted(live)), seconds)


def run_memvara(per_turn: bool) -> Run:
    oracle = TripleOracle()
    mem = Memvara(llm=oracle, user=USER)
    turns = transcript()
    start = time.perf_counter()
    if per_turn:
        for role, text in turns:
            mem.add([{"role": role, "content": text}])
    else:
        mem.add([{"role": role, "content": text} for role, text in turns])
    seconds = time.perf_counter() - start
    live = mem.get_all()
    mem.close()
    current, stale = expected()
    held = {(c.predicate, c.object) for c in live}
    correct = sum(1 for key in current.items() if key in held)
    left = sum(1 for key in stale if key in held)
    return Run(oracle.calls, correct, left, len(live),
               tuple(sorted(f"{c.predicate}={c.object}" for c in live)), seconds)


def installed(dist: str) -> int:
    """How many distributions installing ``dist`` brings: itself and its requirements
    (not their extras), as recorded by pip in this environment."""
    seen: set[str] = set()
    todo = [dist]
    while todo:
        name = re.split(r"[\[<>=!~; ]", todo.pop(), maxsplit=1)[0].lower().replace("_", "-")
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = md.requires(name) or []
        except md.PackageNotFoundError:
            continue
        todo.extend(r for r in requires if "extra ==" not in r)
    return len(seen)


@dataclass
class Row:
    metric: str
    values: list[str]


def spread(values: Sequence[int]) -> str:
    low, high = min(values), max(values)
    return str(low) if low == high else f"{low}-{high}"


def summarize(runs: Sequence[Run], packages: int) -> list[str]:
    times = [r.seconds * 1000 for r in runs]
    return [
        spread([r.calls for r in runs]),
        f"{spread([r.correct for r in runs])} / 10",
        spread([r.stale for r in runs]),
        spread([r.live for r in runs]),
        "yes" if len({r.signature for r in runs}) == 1 else "no",
        f"{statistics.median(times):.0f} ms ({min(times):.0f}-{max(times):.0f})",
        str(packages),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", help="also write the table here")
    args = parser.parse_args(argv)
    assert len(transcript()) == CONVERSATION_TURNS
    warnings.filterwarnings("ignore")  # mem0's and Qdrant's notices, not results
    import logging
    logging.disable(logging.WARNING)
    folder = Path(tempfile.mkdtemp(prefix="mem0-real-"))
    mem0_runs = [run_mem0(folder, i) for i in range(args.runs)]
    per_turn = [run_memvara(True) for _ in range(args.runs)]
    one_add = [run_memvara(False) for _ in range(args.runs)]
    metrics = ["model calls on the write path", "current values correct",
               "stale values left live", "live rows", "identical result every run",
               "ingestion wall clock, median (spread)", "packages installed"]
    columns = [summarize(mem0_runs, installed("mem0ai")),
               summarize(per_turn, installed("memvara")),
               summarize(one_add, installed("memvara"))]
    rows = [Row(m, [c[i] for c in columns]) for i, m in enumerate(metrics)]
    version = md.version("mem0ai")
    env = environment()
    print(f"# memvara vs mem0 {version}: {CONVERSATION_TURNS} turns, {args.runs} runs each\n")
    print(f"| metric | mem0 {version} (a call per turn) | memvara (a call per turn) | memvara (one add) |")
    print("|---|---:|---:|---:|")
    for row in rows:
        print(f"| {row.metric} | " + " | ".join(row.values) + " |")
    print()
    for key, value in env.items():
        print(f"- {key}: {value}")
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"environment": env, "mem0ai": version, "rows": [asdict(r) for r in rows]}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
