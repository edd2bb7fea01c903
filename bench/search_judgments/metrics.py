#!/usr/bin/env python3
"""Relevance metrics for search_content against the graded judgments of judge.py (issue 43).

    evaluate(results, qrels, categories) -> {category: {"n", "ndcg@8", "p@3", "mrr"}, ..., "overall": {...}}

- results:    {query_id: [doc_id, ...]}   the ranked answer of one engine (only the first 8 count)
- qrels:      {query_id: {doc_id: grade}} grades 1 and 2 (absent = 0); every judged query is a key,
              with an empty dict when no document is relevant
- categories: {query_id: category}

Per query (GUIDELINE.md, "Scoring"):
- nDCG@8: DCG = sum over ranks i = 1..8 of (2^grade - 1) / log2(i + 1); divided by the DCG of the
  ideal ranking, i.e. all judged documents of the query sorted by grade, first 8.
- P@3:    share of the first 3 ranks holding a document of grade >= 1 (always divided by 3).
- MRR:    1 / rank of the first document of grade >= 1 within the first 8, else 0.
- A query with no relevant document scores 1.0 on all three when the answer is empty, else 0.0.
Means are macro means over queries: per category, and overall over all judged queries.

CLI: print a table from a JSON file of results ({"qid": [doc ids]}, or {"results": {...}}):

    python3 bench/search_judgments/metrics.py --results target/search-bench/ours_results.json \
        --qrels bench/search_judgments/qrels_5000_42.tsv

Stdlib only. Doc and query ids are compared as strings.
"""

import argparse
import json
import math
from pathlib import Path

HERE = Path(__file__).resolve().parent
K_NDCG, K_P, K_MRR = 8, 3, 8


def dcg(grades):
    """Discounted cumulative gain of grades in rank order: gain 2^g - 1, discount log2(rank + 1)."""
    return sum((2 ** g - 1) / math.log2(rank + 1) for rank, g in enumerate(grades, start=1))


def score_query(ranked, judged):
    """(nDCG@8, P@3, MRR) of one ranked list of doc ids against {doc_id: grade}."""
    ranked = [str(x) for x in ranked][:K_NDCG]
    if not judged:                     # nothing is relevant: the right answer is to answer nothing
        s = 1.0 if not ranked else 0.0
        return s, s, s
    grades = [judged.get(doc, 0) for doc in ranked]
    ideal = dcg(sorted(judged.values(), reverse=True)[:K_NDCG])
    ndcg = dcg(grades) / ideal
    p3 = sum(1 for g in grades[:K_P] if g >= 1) / K_P
    mrr = next((1.0 / rank for rank, g in enumerate(grades[:K_MRR], start=1) if g >= 1), 0.0)
    return ndcg, p3, mrr


def evaluate(results, qrels, categories):
    """Per-category and overall means of nDCG@8, P@3 and MRR over the judged queries (the keys of
    qrels). A judged query missing from results counts as an empty answer."""
    per_cat = {}
    for qid, judged in qrels.items():
        judged = {str(d): g for d, g in judged.items()}
        s = score_query(results.get(str(qid), []), judged)
        for cat in (categories.get(str(qid), "?"), "overall"):
            per_cat.setdefault(cat, []).append(s)
    table = {}
    for cat, scores in per_cat.items():
        n = len(scores)
        table[cat] = {"n": n, "ndcg@8": sum(s[0] for s in scores) / n,
                      "p@3": sum(s[1] for s in scores) / n, "mrr": sum(s[2] for s in scores) / n}
    return table


# --- reading the files judge.py writes ---

def read_judged(path=HERE / "judged_queries.tsv"):
    """{query_id: category} of every judged query (also those with no relevant document)."""
    out = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            qid, cat, _ = line.split("\t", 2)
            out[qid] = cat
    return out


def read_qrels(path, judged):
    """{query_id: {doc_id: grade}} with an (possibly empty) entry for every judged query."""
    qrels = {qid: {} for qid in judged}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            qid, doc, grade = line.split("\t")
            qrels.setdefault(qid, {})[doc] = int(grade)
    return qrels


def format_table(table):
    order = sorted((c for c in table if c != "overall"), key=lambda c: (-table[c]["n"], c)) + ["overall"]
    lines = [f"{'category':<10} {'n':>4} {'nDCG@8':>7} {'P@3':>6} {'MRR':>6}"]
    for c in order:
        t = table[c]
        lines.append(f"{c:<10} {t['n']:>4} {t['ndcg@8']:>7.3f} {t['p@3']:>6.3f} {t['mrr']:>6.3f}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", required=True, help='JSON {"qid": [doc ids, ranked]} or {"results": {...}}')
    ap.add_argument("--qrels", default=str(HERE / "qrels_5000_42.tsv"))
    ap.add_argument("--judged", default=str(HERE / "judged_queries.tsv"))
    ap.add_argument("--json", action="store_true", help="print the table as JSON")
    a = ap.parse_args()

    data = json.loads(Path(a.results).read_text(encoding="utf-8"))
    results = {str(q): docs for q, docs in data.get("results", data).items()}
    categories = read_judged(a.judged)
    qrels = read_qrels(a.qrels, categories)
    missing = [q for q in qrels if q not in results]
    if missing:
        print(f"note: {len(missing)} judged queries have no result list, scored as empty answers: {' '.join(missing)}")
    table = evaluate(results, qrels, categories)
    print(json.dumps(table, indent=2) if a.json else format_table(table))


if __name__ == "__main__":
    main()
