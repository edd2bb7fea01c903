"""search_content side by side with the seed's own engine, MariaDB FULLTEXT, on one corpus.

Called by bench/search.sh, which installs MariaDB and PyMySQL. The corpus and the 200 chatbot
queries come from the shared search benchmark (its gen_corpus.py, queries.tsv and the seed's
stopword list), generated here and never copied into the project.

MariaDB runs as the seed runs it: an InnoDB table with a FULLTEXT index over title, breadcrumb
and body_md (Debian's MariaDB 10.11, innodb_ft_min_token_size 3, the default), queried the way
the seed's PHP does — the query lower-cased, split on \\w+, stopwords dropped, every term a
required prefix (`+t1* +t2*`), and if that finds nothing any term (`t1* t2*`), ordered by the
match score times the type weight, LIMIT 8 — through PyMySQL over a unix socket. Its buffer
pool holds the whole index, so it is measured warm, as ours is.

Ours is `ContentIndex::search` in-process (the `search_side_by_side` bench of concierge-trips):
what `search_content` runs, without the HTTP hop (tenths of a millisecond, bench/run.sh).
Both run every query once to warm up, then each client runs all queries from its own offset.
"""

import argparse
import datetime
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pymysql

sys.path.insert(0, str(Path(__file__).resolve().parent / "search_judgments"))
import metrics  # noqa: E402  (bench/search_judgments/metrics.py: nDCG@8, P@3, MRR)

ROOT = Path(__file__).resolve().parent.parent
WEIGHTS = {"product": 2.0, "hotel": 2.0, "city": 1.5, "region": 1.5, "country": 1.5, "concept": 1.5, "page": 1.0, "blog": 0.75}
SQL = (
    "SELECT id FROM docs WHERE MATCH(title, breadcrumb, body_md) AGAINST(%s IN BOOLEAN MODE) "
    "ORDER BY MATCH(title, breadcrumb, body_md) AGAINST(%s IN BOOLEAN MODE) * "
    "CASE type WHEN 'product' THEN 2.0 WHEN 'hotel' THEN 2.0 WHEN 'blog' THEN 0.75 WHEN 'page' THEN 1.0 ELSE 1.5 END DESC "
    "LIMIT 8"
)


def options():
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=50000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--tools", default=os.environ.get("SEARCH_BENCH", str(ROOT.parent / "shared/search-bench")),
                        help="the shared search benchmark's folder (gen_corpus.py, queries.tsv, stopwords_de.txt)")
    parser.add_argument("--clients", default="1,8")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of all queries per client, ours")
    parser.add_argument("--mariadb-rounds", type=int, default=1, help="rounds of all queries per client, MariaDB")
    return parser.parse_args()


def corpus(tools, docs, seed):
    cache = ROOT / "target/search-bench"
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"corpus_{docs}_{seed}.jsonl"
    if not path.exists():
        print(f"search-bench: generating {docs} documents (seed {seed})", file=sys.stderr)
        subprocess.run([sys.executable, str(tools / "gen_corpus.py"), "--n", str(docs), "--seed", str(seed), "--out", str(path) + ".tmp"], check=True)
        os.replace(str(path) + ".tmp", path)
    return path


def queries(tools):
    out = []
    for line in (tools / "queries.tsv").read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        qid, category, text = line.split("\t", 2)
        out.append((qid, category, text))
    return out


def seed_terms(text, stopwords):
    return [t for t in re.findall(r"\w+", text.lower()) if t not in stopwords]


def boolean_queries(text, stopwords):
    """The seed's two tries: every term required, then any term."""
    terms = seed_terms(text, stopwords)
    if not terms:
        return []
    return [" ".join(f"+{t}*" for t in terms), " ".join(f"{t}*" for t in terms)]


class MariaDB:
    """A throwaway server in a temporary directory, on a unix socket only."""

    def __init__(self):
        self.dir = Path(tempfile.mkdtemp(prefix="concierge-mariadb-"))
        self.socket = self.dir / "mysqld.sock"
        data = self.dir / "data"
        subprocess.run(["mariadb-install-db", "--no-defaults", f"--datadir={data}", "--user=root", "--auth-root-authentication-method=normal",
                        "--skip-test-db"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.process = subprocess.Popen([
            "mariadbd", "--no-defaults", f"--datadir={data}", f"--socket={self.socket}", "--skip-networking", "--user=root",
            "--innodb-buffer-pool-size=2G", "--innodb-ft-min-token-size=3", "--innodb-log-file-size=512M",
            "--innodb-ft-cache-size=80000000", "--innodb-ft-total-cache-size=640000000",
            f"--log-error={self.dir / 'error.log'}", f"--pid-file={self.dir / 'mysqld.pid'}",
        ])
        deadline = time.monotonic() + 60
        while not self.socket.exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("MariaDB did not start:\n" + (self.dir / "error.log").read_text(errors="replace")[-2000:])
            time.sleep(0.1)

    def connect(self, database="bench"):
        return pymysql.connect(unix_socket=str(self.socket), user="root", database=database, charset="utf8mb4", autocommit=True)

    def version(self):
        with self.connect(None) as db, db.cursor() as cursor:
            cursor.execute("SELECT VERSION()")
            return cursor.fetchone()[0]

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def load(mariadb, path):
    with mariadb.connect(None) as db, db.cursor() as cursor:
        cursor.execute("CREATE DATABASE bench CHARACTER SET utf8mb4")
    started = time.monotonic()
    with mariadb.connect() as db, db.cursor() as cursor:
        cursor.execute("CREATE TABLE docs (id INT PRIMARY KEY, type VARCHAR(16) NOT NULL, title VARCHAR(255) NOT NULL, "
                       "breadcrumb VARCHAR(255) NOT NULL, body_md MEDIUMTEXT NOT NULL) ENGINE=InnoDB")
        batch = []
        with open(path, encoding="utf-8") as lines:
            for line in lines:
                d = json.loads(line)
                batch.append((d["id"], d["type"], d["title"], d["breadcrumb"], d["body_md"]))
                if len(batch) == 500:
                    cursor.executemany("INSERT INTO docs VALUES (%s, %s, %s, %s, %s)", batch)
                    batch = []
        if batch:
            cursor.executemany("INSERT INTO docs VALUES (%s, %s, %s, %s, %s)", batch)
        # Built after the rows, as a migration adding it to a full table would.
        cursor.execute("ALTER TABLE docs ADD FULLTEXT INDEX ft (title, breadcrumb, body_md)")
    return time.monotonic() - started


def search(cursor, text, stopwords):
    for boolean in boolean_queries(text, stopwords):
        cursor.execute(SQL, (boolean, boolean))
        ids = [row[0] for row in cursor.fetchall()]
        if ids:
            return ids
    return []


def matching(cursor, text, stopwords):
    """How many documents the seed's search ranks to pick its eight (of the try that answered)."""
    for boolean in boolean_queries(text, stopwords):
        cursor.execute("SELECT COUNT(*) FROM docs WHERE MATCH(title, breadcrumb, body_md) AGAINST(%s IN BOOLEAN MODE)", (boolean,))
        count = cursor.fetchone()[0]
        if count:
            return count
    return 0


def mariadb_runs(mariadb, items, stopwords, client_counts, rounds):
    with mariadb.connect() as db, db.cursor() as cursor:
        top = {qid: search(cursor, text, stopwords) for qid, _, text in items}  # warm-up, and the top eights
        breadth = {qid: matching(cursor, text, stopwords) for qid, _, text in items}
    runs = []
    for clients in client_counts:
        results = [None] * clients

        def client(n):
            offset = n * len(items) // clients
            latencies = []
            with mariadb.connect() as db, db.cursor() as cursor:
                for _ in range(rounds):
                    for i in range(len(items)):
                        _, _, text = items[(offset + i) % len(items)]
                        started = time.perf_counter()
                        search(cursor, text, stopwords)
                        latencies.append((time.perf_counter() - started) * 1000)
            results[n] = latencies

        started = time.monotonic()
        threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.monotonic() - started
        runs.append({"clients": clients, "latencies_ms": [x for r in results for x in r], "wall_s": wall})
        print(f"search-bench: MariaDB, {clients} clients, {sum(len(r) for r in results)} searches in {wall:.1f} s", file=sys.stderr)
    return top, breadth, runs


def ours(path, tools, client_counts, rounds):
    out = ROOT / "target/search-bench/ours.json"
    subprocess.run(["cargo", "bench", "--quiet", "-p", "concierge-trips", "--bench", "search_side_by_side", "--",
                    "--corpus", str(path), "--queries", str(tools / "queries.tsv"), "--clients", ",".join(map(str, client_counts)),
                    "--rounds", str(rounds), "--out", str(out)], check=True, cwd=ROOT)
    return json.loads(out.read_text())


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


def stats(run):
    latencies = run["latencies_ms"]
    return {"p50": percentile(latencies, 0.50), "p95": percentile(latencies, 0.95), "p99": percentile(latencies, 0.99),
            "qps": len(latencies) / run["wall_s"], "n": len(latencies)}


# Where ours differs from the seed's query handling on purpose: the queries file's own
# categories say which queries try it, and any other query holding a negation or a short term.
ON_PURPOSE = {
    "umlaut": "spelling", "translit": "spelling", "accent": "spelling",
    "short": "short term", "stopword": "stopwords",
}
NEGATIONS = {"ohne", "nicht", "nichts", "kein", "keine", "keinen", "keiner", "keinem", "keines"}


def differences(category, text, stopwords):
    terms = re.findall(r"\w+", text.lower())
    kinds = {ON_PURPOSE[category]} if category in ON_PURPOSE else set()
    if NEGATIONS & set(terms):
        kinds.add("stopwords")
    if any(len(t) < 3 and t not in stopwords for t in terms):
        kinds.add("short term")
    return sorted(kinds)


def found(qids, breadth, ours_top):
    """Which queries show a difference, and how many MariaDB answers with nothing where ours does not."""
    if not qids:
        return "No query shows it."
    empty = [q for q in qids if breadth[q] == 0 and ours_top.get(q)]
    return f"Queries {', '.join(qids)}; MariaDB finds nothing for {len(empty)} of them ({', '.join(empty) or 'none'}), ours finds something."


def relevance(options, maria_top, ours_top):
    """Both engines' top eights graded against bench/search_judgments (its GUIDELINE.md): nDCG@8,
    P@3 and MRR per category, with the issue's goals."""
    qrels_path = ROOT / f"bench/search_judgments/qrels_{options.docs}_{options.seed}.tsv"
    if not qrels_path.exists():
        return ["", f"## Relevance", "", f"No judgments for {options.docs} documents, seed {options.seed} "
                f"(bench/search_judgments/judge.py writes them)."]
    categories = metrics.read_judged()
    qrels = metrics.read_qrels(qrels_path, categories)
    as_text = lambda top: {str(q): [str(d) for d in ids] for q, ids in top.items()}
    ours = metrics.evaluate(as_text(ours_top), qrels, categories)
    theirs = metrics.evaluate(as_text(maria_top), qrels, categories)
    order = sorted((c for c in ours if c != "overall"), key=lambda c: (-ours[c]["n"], c)) + ["overall"]
    lines = [
        "",
        "## Relevance: graded judgments",
        "",
        f"{len(qrels)} of the queries judged 0/1/2 by the written criteria of `bench/search_judgments/` "
        f"(GUIDELINE.md; `{qrels_path.name}`); each engine's top eight scored. Goals (issue 43): nDCG@8 ≥ 0.85 on "
        "questions, ≥ 1.25× MariaDB's overall, no category below MariaDB's.",
        "",
        "| category | queries | nDCG@8 ours | nDCG@8 MariaDB | × | P@3 ours | P@3 MariaDB | MRR ours | MRR MariaDB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for c in order:
        o, t = ours[c], theirs[c]
        ratio = o["ndcg@8"] / t["ndcg@8"] if t["ndcg@8"] else float("inf")
        lines.append(f"| {c} | {o['n']} | {o['ndcg@8']:.3f} | {t['ndcg@8']:.3f} | {ratio:.2f} | {o['p@3']:.3f} | "
                     f"{t['p@3']:.3f} | {o['mrr']:.3f} | {t['mrr']:.3f} |")
    below = [c for c in order if ours[c]["ndcg@8"] < theirs[c]["ndcg@8"]]
    overall = ours["overall"]["ndcg@8"] / theirs["overall"]["ndcg@8"]
    lines += ["", f"Questions {ours.get('question', {}).get('ndcg@8', 0):.3f} (goal 0.85); overall {overall:.2f}× "
              f"MariaDB (goal 1.25×); categories below MariaDB: {', '.join(below) or 'none'}."]
    return lines


def report(options, items, stopwords, version, load_s, maria_top, breadth, maria_runs, ours_report):
    lines = [
        f"# search_content beside MariaDB FULLTEXT, {datetime.datetime.now():%Y-%m-%d %H:%M}",
        "",
        f"`bench/search.sh`: {ours_report['documents']:,} documents from the shared search benchmark's generator "
        f"(seed {options.seed}), its {len(items)} chatbot queries; {os.cpu_count()} cores. MariaDB {version} "
        f"(InnoDB FULLTEXT, boolean mode, the seed's query handling, PyMySQL over a unix socket; loaded and indexed in "
        f"{load_s:.0f} s) against concierge's `search_content` path in-process (index built in {ours_report['build_s']:.1f} s). "
        f"Every query once to warm up; then each client runs all queries from its own offset, "
        f"MariaDB {options.mariadb_rounds}×, ours {options.rounds}×. Ratio = MariaDB ÷ ours (higher is better for us; QPS: ours ÷ MariaDB).",
        "",
        "| clients | engine | searches | p50 ms | p95 ms | p99 ms | QPS | p50 × | p95 × | p99 × | QPS × | goal p99 ≥ 20× |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for maria, mine in zip(maria_runs, ours_report["runs"]):
        m, o = stats(maria), stats(mine)
        p99 = m["p99"] / o["p99"]
        lines.append(f"| {maria['clients']} | MariaDB | {m['n']} | {m['p50']:.2f} | {m['p95']:.2f} | {m['p99']:.2f} | {m['qps']:.0f} | | | | | |")
        lines.append(f"| {mine['clients']} | concierge | {o['n']} | {o['p50']:.2f} | {o['p95']:.2f} | {o['p99']:.2f} | {o['qps']:.0f} | "
                     f"{m['p50'] / o['p50']:.1f} | {m['p95'] / o['p95']:.1f} | {p99:.1f} | {o['qps'] / m['qps']:.1f} | {'met' if p99 >= 20 else 'missed'} |")
    lines += relevance(options, maria_top, ours_report["top"])
    overlaps, narrow, rows = [], [], []
    by_kind = {}
    for qid, category, text in items:
        theirs, mine = maria_top.get(qid, []), ours_report["top"].get(qid, [])
        shared = len(set(theirs) & set(mine))
        overlap = shared / len(theirs) if theirs else (1.0 if not mine else None)
        overlaps.append(overlap)
        kinds = differences(category, text, stopwords)
        if breadth[qid] <= 8 and not kinds and overlap is not None:
            narrow.append(overlap)
        for kind in kinds:
            by_kind.setdefault(kind, []).append(qid)
        rows.append(f"| {qid} | {category} | {text} | {breadth[qid]} | {len(theirs)} | {len(mine)} | {shared} | {', '.join(kinds)} |")
    known = [o for o in overlaps if o is not None]
    lines += [
        "",
        f"## Top eight, query by query",
        "",
        f"Of MariaDB's top eight, ours holds {statistics.mean(known) * 100:.0f} % on average "
        f"({sum(1 for o in known if o == 1.0)} queries all of them, {sum(1 for o in known if o == 0)} none). "
        f"Most queries match hundreds of documents (the `matching` column: MariaDB's count), and which eight of "
        f"those come first is each engine's relevance formula (BM25 here, InnoDB's TF-IDF there, each times the "
        f"type weight). Where MariaDB matches at most eight and no difference below applies, ours holds "
        f"{(statistics.mean(narrow) * 100 if narrow else float('nan')):.0f} % of them ({len(narrow)} queries). "
        "Where we differ on purpose (the last column names the reason the query shows):",
        "",
        "- **spelling**: ours folds ä/ö/ü both ways (`Österreich` is `oesterreich` and `osterreich`), ß to ss and "
        "drops accents, for the text and the query alike; MariaDB's collation folds ö to o and drops accents, but "
        "never reads oe as ö or ss as ß. " + found(by_kind.get("spelling", []), breadth, ours_report["top"]),
        "- **stopwords**: the seed's PHP drops `ohne`, `nicht`, `kein…` with the other stopwords, so `ohne Skipass` "
        "searches for `Skipass`, and a query of stopwords only searches for nothing; ours keeps negations as terms "
        "and a stopwords-only query's words. " + found(by_kind.get("stopwords", []), breadth, ours_report["top"]),
        "- **short term**: below MariaDB's 3-letter token size: `HP`, `DZ`, `TV` are in its index only as the start "
        "of longer words, and the `d` of `Val d'Isère` becomes `+d*`, every word starting with d; ours indexes short "
        "tokens as terms and matches a one-letter one whole. " + found(by_kind.get("short term", []), breadth, ours_report["top"]),
        "",
        "| id | category | query | matching (MariaDB) | MariaDB top | our top | shared | differs on purpose |",
        "|---:|---|---|---:|---:|---:|---:|---|",
    ] + rows
    return lines


def main():
    opts = options()
    tools = Path(opts.tools).resolve()
    for name in ("gen_corpus.py", "queries.tsv", "stopwords_de.txt"):
        if not (tools / name).exists():
            raise SystemExit(f"search-bench: {tools / name} is missing (--tools or SEARCH_BENCH names the shared search benchmark)")
    stopwords = set((tools / "stopwords_de.txt").read_text(encoding="utf-8").split())
    items = queries(tools)
    client_counts = [int(c) for c in opts.clients.split(",")]
    path = corpus(tools, opts.docs, opts.seed)
    ours_report = ours(path, tools, client_counts, opts.rounds)
    mariadb = MariaDB()
    try:
        version = mariadb.version()
        load_s = load(mariadb, path)
        print(f"search-bench: MariaDB {version} loaded and indexed in {load_s:.0f} s", file=sys.stderr)
        maria_top, breadth, maria_runs = mariadb_runs(mariadb, items, stopwords, client_counts, opts.mariadb_rounds)
    finally:
        mariadb.stop()
    # Kept for scoring a change of ours against the same MariaDB answers without running it again.
    (ROOT / f"target/search-bench/mariadb_top_{opts.docs}_{opts.seed}.json").write_text(json.dumps(maria_top))
    lines = report(opts, items, stopwords, version, load_s, maria_top, breadth, maria_runs, ours_report)
    print("\n".join(lines[:12]))
    results = ROOT / "bench/results"
    path = results / f"{datetime.datetime.now():%Y-%m-%d-%H%M}-search.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"\nwritten to {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
