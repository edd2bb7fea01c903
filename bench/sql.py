"""SQL tools side by side: concierge's kind `sql` against MCP Toolbox (PyPI toolbox-server 1.15.0,
its Go binary) on the same PostgreSQL, the same two statements (a point lookup and a 50-row list
with a filter), at 1 and 32 connections.

concierge runs its whole platform (token auth, a rate limit, validation, an audit line per call to
a file); Toolbox runs as its docs start it. Each server is pinned to core 0 and wrk to core 1, as
bench/harness.py does; each figure is the median of paired repeats, [min – max]. CPU per call is
the server process's user + system time over the calls wrk counted. Then the safety cases, asked of
both (not timed): a statement past its timeout, a read whose statement writes, a result without a
bound. Called by `bench/run.sh --sql` (which starts PostgreSQL); writes bench/results/<date>-sql.md.
"""

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from harness import LOAD_CORE, SERVER_CORE, Server, cpu_seconds, free_port, post, rss_kb, wrk  # noqa: E402

ORDERS = 10_000
TOOLS = [("order_get", '{"id":4242}'), ("order_list", '{"status":"open"}')]
GOALS = {"cpu": 0.5, "rps32": 1.5, "rss": 0.5}


def psql(url, sql):
    subprocess.run(["psql", "-q", "-v", "ON_ERROR_STOP=1", url, "-c", sql], check=True, capture_output=True)


def database():
    """A database of the benchmark's own with the orders and a sequence; its URL."""
    admin = os.environ["CONCIERGE_TEST_POSTGRES"]
    name = f"bench_shop_{uuid.uuid4().hex[:8]}"
    psql(admin, f"CREATE DATABASE {name}")
    url = admin.rsplit("/", 1)[0] + "/" + name
    psql(url, f"""CREATE TABLE orders (id BIGINT PRIMARY KEY, customer TEXT NOT NULL, status TEXT NOT NULL,
                  total NUMERIC(10,2) NOT NULL, placed_at TIMESTAMP NOT NULL);
                  CREATE INDEX orders_by_status ON orders (status, id);
                  INSERT INTO orders SELECT g, 'c' || (g % 100), (ARRAY['open','paid','shipped'])[1 + g % 3],
                  (g % 1000) / 10.0, TIMESTAMP '2026-01-01' + g * INTERVAL '1 minute' FROM generate_series(1, {ORDERS}) g;
                  CREATE SEQUENCE bench_numbers; ANALYZE orders;""")
    return url


def call(server, tool, arguments, timeout=30.0):
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    started = time.monotonic()
    try:
        _, _, text = post(server.url, body, {"MCP-Protocol-Version": "2025-11-25", **server.headers}, timeout=timeout)
    except Exception as error:  # a timeout at the client
        return time.monotonic() - started, {"error": repr(error)}
    return time.monotonic() - started, json.loads(text)


def start(server):
    env = {**os.environ, **(server.env or {})}
    server.process = subprocess.Popen(["taskset", "-c", SERVER_CORE] + server.command, cwd=server.cwd, env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise SystemExit(f"{server.name} exited during start-up")
        try:
            _, answer = call(server, "order_get", {"id": 1}, timeout=1)
            if "result" in answer:
                return
        except Exception:
            pass
        time.sleep(0.05)
    raise SystemExit(f"{server.name} did not answer within 60 s")


def median_range(values):
    return statistics.median(values), min(values), max(values)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default="target/release")
    # The Go binary the wheel ships, not the Python wrapper that starts it: the wrapper's own
    # process would count in Toolbox's memory.
    parser.add_argument("--toolbox", default=next(
        (str(p.relative_to(ROOT)) for p in (ROOT / "bench/.venv-toolbox/lib").glob("python3*/site-packages/toolbox_server/bin/toolbox")),
        "bench/.venv-toolbox/bin/toolbox-server"))
    parser.add_argument("--duration", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=7)
    options = parser.parse_args()
    url = database()
    pg_port = url.rsplit(":", 1)[1].split("/")[0]
    state = tempfile.mkdtemp(prefix="concierge-sql-bench-")
    ours_port, theirs_port = free_port(), free_port()
    ours = Server("concierge (sql)", [str((ROOT / options.bin / "concierge").resolve()), "serve", "--config", "concierge-sql-bench.toml"],
                  f"http://127.0.0.1:{ours_port}/sql/mcp", {"Authorization": "Bearer bench-token"}, cwd=ROOT / "bench",
                  env={"CONCIERGE_LISTEN": f"127.0.0.1:{ours_port}", "CONCIERGE_VAR": state, "BENCH_DATABASE_URL": url, "RUST_LOG": "error"})
    theirs = Server("MCP Toolbox 1.15.0", [str((ROOT / options.toolbox).resolve()), "--config", "toolbox/tools.yaml", "--port", str(theirs_port),
                                            "--disable-version-check", "--disable-reload", "--log-level", "ERROR"],
                    f"http://127.0.0.1:{theirs_port}/mcp", {}, cwd=ROOT / "bench",
                    env={"BENCH_PG_PORT": pg_port, "BENCH_PG_DATABASE": url.rsplit("/", 1)[1]})
    servers = [ours, theirs]
    rows = {}
    idle = {}
    peak = {}
    try:
        for server in servers:
            start(server)
            idle[server.name] = rss_kb(server.process.pid)
        for connections in (1, 32):
            for tool, args in TOOLS:
                for _ in range(options.repeat):
                    for server in servers:
                        figures = wrk(server, tool, args, connections, options.duration, pin=True)
                        rows.setdefault((server.name, tool, connections), []).append(figures)
                        peak[server.name] = max(peak.get(server.name, 0), rss_kb(server.process.pid))
        safety = {server.name: safety_cases(server) for server in servers}
    finally:
        for server in servers:
            server.stop()
    report(rows, idle, peak, safety, options)


def safety_cases(server):
    """What each server does with a statement past a 5 s timeout, a read that writes, and a
    result without a bound (10,000 rows)."""
    cases = {}
    took, answer = call(server, "slow_report", {}, timeout=15)
    result = answer.get("result", {})
    cases["a statement past 5 s"] = (
        f"answered after {took:.1f} s, " + ("an error" if result.get("isError") or "error" in answer else "a result"))
    _, answer = call(server, "number_next", {})
    result = answer.get("result", {})
    cases["a read that writes (nextval)"] = "refused" if result.get("isError") or "error" in answer else "ran: the sequence moved"
    took, answer = call(server, "order_all", {})
    text = json.dumps(answer)
    result = answer.get("result", {})
    structured = result.get("structuredContent") or {}
    returned = structured.get("returned")
    if returned is None:
        returned = text.count('\\"customer\\"') or text.count('"customer"')
    cases["a result without a bound"] = f"{returned} rows, {len(text) // 1024} KiB in {took * 1000:.0f} ms"
    return cases


def report(rows, idle, peak, safety, options):
    names = list(idle)
    ours, theirs = names
    lines = [f"# SQL tools: concierge against MCP Toolbox, {datetime.date.today()}", "",
             f"PostgreSQL (scripts/postgres.sh), {ORDERS} orders; `order_get` a point lookup, `order_list` 50 rows with a filter. "
             f"{options.repeat} paired repeats of {options.duration} s per row; server on core {SERVER_CORE}, wrk on core {LOAD_CORE}; "
             "median [min – max].", "",
             "| server | tool | conn | req/s | CPU µs/call | p50 ms | p99 ms | errors |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    for (name, tool, connections), samples in rows.items():
        def cell(key):
            m, lo, hi = median_range([s[key] for s in samples])
            return f"{m:.1f} [{lo:.1f} – {hi:.1f}]" if key in ("rps", "cpu_us") else f"{m:.2f}"
        errors = sum(s["errors"] for s in samples)
        lines.append(f"| {name} | {tool} | {connections} | {cell('rps')} | {cell('cpu_us')} | {cell('p50_ms')} | {cell('p99_ms')} | {errors} |")
    lines += ["", "| ratio concierge ÷ Toolbox | tool | conn | CPU per call (goal ≤ 0.5) | req/s (goal ≥ 1.5 at 32) |", "|---|---|---:|---:|---:|"]
    for tool, _ in TOOLS:
        for connections in (1, 32):
            a, b = rows[(ours, tool, connections)], rows[(theirs, tool, connections)]
            cpu = [x["cpu_us"] / y["cpu_us"] for x, y in zip(a, b)]
            rps = [x["rps"] / y["rps"] for x, y in zip(a, b)]
            c, r = median_range(cpu), median_range(rps)
            lines.append(f"| | {tool} | {connections} | {c[0]:.2f} [{c[1]:.2f} – {c[2]:.2f}] | {r[0]:.2f} [{r[1]:.2f} – {r[2]:.2f}] |")
    lines += ["", "| server | idle RSS MiB | peak RSS MiB |", "|---|---:|---:|"]
    for name in names:
        lines.append(f"| {name} | {idle[name] / 1024:.1f} | {peak[name] / 1024:.1f} |")
    lines += ["", f"RSS ratio (peak, goal ≤ 0.5): {peak[ours] / peak[theirs]:.2f}", "", "## Safety cases on the same database", "",
              "| case | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for case in safety[ours]:
        lines.append(f"| {case} | " + " | ".join(safety[n][case] for n in names) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    out = ROOT / "bench" / "results" / f"{datetime.datetime.now():%Y-%m-%d-%H%M}-sql.md"
    out.write_text(text)
    print(f"written to {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
