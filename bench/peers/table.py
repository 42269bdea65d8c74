#!/usr/bin/env python3
"""Print the benchmark table from JSON lines (one per peer run, as printed by *_gmm.py / bench_gmm).

Usage: table.py RESULTS.jsonl   (or JSON lines on stdin)
Columns: case, peer, ms/iter (mean and median wall time), cpu ms/iter (process CPU time, when
given), iterations, bound, components, and
peer_time / occam_time (mean ms/iter ratio; '-' when Occam has no result for the case).
"""

import json
import sys


def main():
    src = open(sys.argv[1]) if len(sys.argv) > 1 else sys.stdin
    rows = [json.loads(line) for line in src if line.strip().startswith("{")]
    cases = list(dict.fromkeys(r["case"] for r in rows))
    occam = {r["case"]: r for r in rows if r["peer"] == "occam"}
    order = {"occam": 0, "bayespy": 1, "sklearn": 2}

    head = f"{'case':<14} {'peer':<8} {'ms/iter':>10} {'median':>10} {'cpu ms':>10} {'iters':>5} " \
           f"{'bound':>16} {'comp':>4} {'peer/occam':>10}"
    print(head)
    print("-" * len(head))
    for case in cases:
        for r in sorted((r for r in rows if r["case"] == case),
                        key=lambda r: order.get(r["peer"], 9)):
            o = occam.get(case)
            ratio = f"{r['ms_per_iter'] / o['ms_per_iter']:.2f}" if o and o["ms_per_iter"] > 0 else "-"
            med, cpu = (r.get(key) for key in ("ms_per_iter_median", "cpu_ms_per_iter"))
            med = f"{med:10.3f}" if med is not None else f"{'-':>10}"
            cpu = f"{cpu:10.3f}" if cpu is not None else f"{'-':>10}"
            print(f"{case:<14} {r['peer']:<8} {r['ms_per_iter']:10.3f} {med} {cpu} {r['iterations']:5d} "
                  f"{r['bound']:16.4f} {r['components']:4d} {ratio:>10}")
    if any(r["peer"] == "sklearn" for r in rows):
        print("\nsklearn's bound omits constants and uses a Normal-Wishart prior: not comparable in "
              "value with the BayesPy/Occam L.")


if __name__ == "__main__":
    main()
