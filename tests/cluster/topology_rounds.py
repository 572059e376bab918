#!/usr/bin/python3
"""How many tournament rounds name a slow uplink: a measurement on the test cluster, not a test.

For 8 hosts (leaves of 3, 3, 2) and 16 hosts (leaves of 6, 5, 5) under one spine, every host
capped at 100 Mbit/s and leaf2's uplink shaped to 10 Mbit/s, it runs one `collbench --split
pairs` tournament and one `--split sample:K` run (one `collbench-sweep hunt --topology slurm`
with both modes), then asks `collbench-report --suspects --topology` of each run's first r rounds
alone: the first r from which on leaf2's uplink is named, and no host or link is. Then, by
simulation of random rounds (as collbench's sample mode draws them), how often K sample rounds
hold what the report needs to name an uplink at all: a pair of two hosts below it and two pairs
across it.

    sudo python3 tests/cluster/topology_rounds.py [--hosts 8,16] [--sample 12]

Environment: COLLBENCH, COLLBENCH_SWEEP, COLLBENCH_REPORT, COLLBENCH_SOURCE_DIR as for the
cluster tests (build/ of the checkout by default).
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cbcluster  # noqa: E402
from test_cluster_hunt import (HEALTHY_CAP, REPORT, SWEEP, COLLBENCH, TEMPLATE,  # noqa: E402
                               cap_every_host)
from test_cluster_topology import SLOW_UPLINK, UPLINK_SIZE  # noqa: E402

LEAVES = {8: (3, 3, 2), 16: (6, 5, 5)}


def rounds_of(jsonl):
    rounds = set()
    with open(jsonl) as f:
        for line in f:
            row = json.loads(line)
            if row.get("record") == "result" and row.get("group"):
                rounds.add(row["group"]["round"])
    return sorted(rounds)


def first_rounds(jsonl, count, out):
    """The context lines and the rows of the first `count` rounds of `jsonl`, written to `out`."""
    with open(jsonl) as f, open(out, "w") as o:
        for line in f:
            row = json.loads(line)
            if row.get("record") != "result" or (row.get("group") or {}).get("round", 0) < count:
                o.write(line)


def named_from(jsonl, topology, scratch):
    """For each prefix of rounds, what the report names: (switches, hosts, links)."""
    answers = []
    for r in range(1, len(rounds_of(jsonl)) + 1):
        part = os.path.join(scratch, f"first-{r}.jsonl")
        first_rounds(jsonl, r, part)
        p = subprocess.run([REPORT, part, "--topology", topology, "--suspects", "--json", "-q"],
                           capture_output=True, text=True, timeout=120)
        doc = json.loads(p.stdout)
        answers.append(([s["node"] for s in doc.get("switches", [])],
                        [h["host"] for h in doc["hosts"]],
                        [(l["a"], l["b"]) for l in doc["links"]]))
    return answers


def first_named(answers):
    """The first round count from which on leaf2 alone is named, or None."""
    for r in range(len(answers)):
        if all(a == (["leaf2"], [], []) for a in answers[r:]):
            return r + 1
    return None


def measure(hosts, sample_rounds):
    leaves = LEAVES[hosts]
    work = tempfile.mkdtemp(prefix="collbench-rounds-")
    os.chmod(work, 0o755)
    out = os.path.join(work, "hunt")
    with cbcluster.Cluster(hosts=hosts, leaves=leaves) as cluster:
        cap_every_host(cluster, rate=HEALTHY_CAP)
        cluster.shape_uplink(2, SLOW_UPLINK)
        argv = [SWEEP, "hunt", "--nodes", str(hosts), "--launcher", "mpirun", "--site-env",
                "tcp-only", "--tests", "all_reduce", "-b", UPLINK_SIZE, "-e", UPLINK_SIZE,
                "-n", "4", "-w", "1", "--split", f"pairs,sample:{sample_rounds}",
                "--threshold", "50%", "--interval", "0.5", "--topology", "slurm",
                "--collbench", COLLBENCH, "--collbench-report", REPORT, "--template", TEMPLATE,
                "-o", out]
        r = cluster.on(1, argv, check=False, timeout=1800, cwd=work)
        if r.returncode != 0:
            sys.exit(f"the hunt failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
        topology = os.path.join(out, "topology.txt")
        result = {}
        for mode in ("pairs", f"sample-{sample_rounds}"):
            jsonl = os.path.join(out, "tournament", f"{mode}-r0.jsonl")
            answers = named_from(jsonl, topology, work)
            result[mode] = (first_named(answers), len(answers), answers)
    shutil.rmtree(work, ignore_errors=True)
    return result


def simulated_chance(hosts, leaf, rounds, trials=200000, seed=1):
    """How often `rounds` random rounds of disjoint pairs among `hosts` measure at least one pair
    of two hosts of a leaf of `leaf` hosts and at least two pairs across its uplink."""
    rng = random.Random(seed)
    below = set(range(leaf))
    hits = 0
    for _ in range(trials):
        inside = across = 0
        for _ in range(rounds):
            order = list(range(hosts))
            rng.shuffle(order)
            for i in range(0, hosts - 1, 2):
                a, b = order[i] in below, order[i + 1] in below
                inside += a and b
                across += a != b
        hits += inside >= 1 and across >= 2
    return hits / trials


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", default="8,16")
    parser.add_argument("--sample", type=int, default=12)
    args = parser.parse_args()
    why = cbcluster.skip_reason()
    if why:
        sys.exit(f"cannot build the cluster: {why}")
    for hosts in (int(h) for h in args.hosts.split(",")):
        result = measure(hosts, args.sample)
        for mode, (first, total, answers) in result.items():
            print(f"{hosts} hosts, leaves {LEAVES[hosts]}, {mode}: leaf2's uplink named from "
                  f"round {first} of {total} on")
            for r, a in enumerate(answers, start=1):
                print(f"  first {r} rounds: switches {a[0]} hosts {a[1]} links {a[2]}")
    print("chance that K random rounds hold a pair below a leaf and two across its uplink:")
    for hosts, leaf in ((8, 2), (8, 3), (16, 5), (64, 8), (1024, 32)):
        chances = [simulated_chance(hosts, leaf, k, trials=20000) for k in (1, 2, 4, 8, 16)]
        print(f"  {hosts} hosts, a leaf of {leaf}: K = 1/2/4/8/16: " +
              " / ".join(f"{100 * c:.1f}%" for c in chances))


if __name__ == "__main__":
    main()
