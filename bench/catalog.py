"""The ski trips at size, over HTTP: `search_trips` under 32 clients and the start-up time, for
bench/harness.py (rows "catalog over HTTP" and "start-up").

The state a deployment holds after its syncs is written once by `cargo bench --bench at_size`
into target/bench-fixture/ (a 50,000-document mirror beside the synced sample, and the sample
export repeated to 111,000 trip × date × hotel rows) and reused by later runs.

- Start-up: from starting `concierge serve` on that state to every tool answering with data
  (`search_trips` with trips, `search_content` with hits); a fresh process each time.
- Catalog: `search_trips` over a mix of the catalog bench's queries, at 32 connections (the goal's)
  and at one (the time a call takes when it waits for no other), pinned like the other rows. p99
  at the client (wrk) and at the server: the `duration_ms` the audit log records for each call,
  from its request's arrival to its answer (so at 32 connections it includes the wait for the
  core behind the other calls).
"""

import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import harness

ROOT = Path(__file__).resolve().parent.parent
CONFIG = "concierge-trips-bench.toml"
GOAL_P99_MS = 2.0
GOAL_STARTUP_S = 1.0

# The catalog bench's mix (apps/trips/benches/catalog.rs): listing, names, codes, periods, date
# ranges, board and inclusions, room types, prices, a spelled-out hotel, a page-text word, no match.
TRIP_QUERIES = [
    {},
    {"query": "Val Thorens"},
    {"query": "Sportclub Lederer"},
    {"query": "SSLMP"},
    {"query": "Österreich", "persons": 4},
    {"period": "Weihnachten & Silvester"},
    {"dateFrom": "2027-02-01", "dateTo": "2027-02-28", "length": "long"},
    {"board": "Abendessen", "includes": ["Skipass"]},
    {"roomType": "9er+", "limit": 25},
    {"priceMax": 300, "length": "short"},
    {"country": "Frankreich", "concept": "Boarderweek"},
    {"query": "Hotel Chamois d'Or in Val Thorens"},
    {"query": "Radsportfans"},
    {"query": "Kreuzfahrt"},
]


def fixture(docs, copies, smoke):
    """The trips' state at size on disk (written once per size). The smoke's small state is written
    by a debug build of the writer, which the test command's own build already holds; the full
    size needs the optimized one."""
    out = ROOT / f"target/bench-fixture/trips-{docs}-{copies}"
    build = ["cargo", "test", "--quiet"] if smoke else ["cargo", "bench", "--quiet"]
    subprocess.run(build + ["-p", "concierge-trips", "--bench", "at_size", "--",
                            "--out", str(out), "--docs", str(docs), "--copies", str(copies)],
                   cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return out


def call(url, tool, arguments, timeout=5.0):
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    _, _, text = harness.post(url, body, {"MCP-Protocol-Version": "2025-11-25", "Authorization": f"Bearer {harness.TOKEN}"}, timeout)
    return json.loads(text)["result"]


def answers_with_data(url):
    """Whether both searches answer with something found."""
    try:
        trips = call(url, "search_trips", {"query": "Val Thorens"})["structuredContent"]
        content = call(url, "search_content", {"query": "Skipass"})["structuredContent"]
    except Exception:
        return False
    return trips.get("total", 0) > 0 and len(content.get("results") or []) > 0


class TripsServer(harness.Server):
    """concierge on the fixture; started counts as up once both searches find data."""

    def __init__(self, bin_dir, fixture_dir, state):
        port = harness.free_port()
        super().__init__("concierge trips", [str(bin_dir / "concierge"), "serve", "--config", CONFIG],
                         f"http://127.0.0.1:{port}/trips/mcp", {"Authorization": f"Bearer {harness.TOKEN}"},
                         cwd=ROOT / "bench", env={"CONCIERGE_LISTEN": f"127.0.0.1:{port}", "CONCIERGE_VAR": state,
                                                  "TRIPS_FIXTURE": str(fixture_dir), "RUST_LOG": "error"})
        self.audit = Path(state) / "log/trips-bench.audit.log"

    def start(self, pin=None, limit_s=120):
        env = {**os.environ, **self.env}
        started = time.monotonic()
        command = (["taskset", "-c", pin] if pin else []) + self.command
        self.process = subprocess.Popen(command, cwd=self.cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while time.monotonic() - started < limit_s:
            if self.process.poll() is not None:
                raise SystemExit(f"{self.name} exited during start-up")
            if answers_with_data(self.url):
                self.cold_start_ms = (time.monotonic() - started) * 1000
                return
            time.sleep(0.01)
        raise SystemExit(f"{self.name} found no data within {limit_s} s")


def server_side_p99(audit, skip_lines):
    """p50 and p99 of the audit's search_trips durations after the first `skip_lines` lines."""
    lines = audit.read_text().splitlines()[skip_lines:]
    durations = sorted(json.loads(line)["duration_ms"] for line in lines
                       if line.endswith("}") and '"search_trips"' in line)
    if not durations:
        return None, None, 0
    at = lambda p: durations[min(int(len(durations) * p), len(durations) - 1)]
    return at(0.5), at(0.99), len(durations)


def run(bin_dir, options):
    """Both rows, as report lines."""
    docs, copies = (500, 10) if options.smoke else (50_000, 150)
    fixture_dir = fixture(docs, copies, options.smoke)
    state = tempfile.mkdtemp(prefix="concierge-trips-bench-")
    mix = Path(state) / "search_trips.jsonl"
    mix.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in TRIP_QUERIES))

    # The first start builds the content index the later ones open (a restart's case).
    shutil.rmtree(fixture_dir / "content.sqlite.index", ignore_errors=True)
    startups = []
    for _ in range(2 if options.smoke else 4):
        server = TripsServer(bin_dir, fixture_dir, state)
        try:
            server.start(harness.SERVER_CORE if options.pin else None)
            startups.append(server.cold_start_ms / 1000)
        finally:
            server.stop()

    server = TripsServer(bin_dir, fixture_dir, state)
    samples = {32: [], 1: []}
    try:
        server.start(harness.SERVER_CORE if options.pin else None)
        for connections, runs in samples.items():
            harness.wrk(server, "search_trips", "", connections, 1, None, options.pin, mix)  # warm-up
            for _ in range(1 if options.smoke else options.repeat):
                skip = len(server.audit.read_text().splitlines())
                figures = harness.wrk(server, "search_trips", "", connections, options.duration, None, options.pin, mix)
                figures["server_p50_ms"], figures["server_p99_ms"], figures["calls"] = server_side_p99(server.audit, skip)
                runs.append(figures)
    finally:
        server.stop()
    return report(samples, startups, docs, copies, options)


def report(samples, startups, docs, copies, options):
    runs = len(samples[32])
    lines = [
        "",
        f"## The ski catalog at size: {docs:,} generated documents beside the synced sample, the sample export × {copies}",
        "",
        f"`search_trips` over HTTP (stateless, tokens, limiter, audit), {len(TRIP_QUERIES)} queries in turn, {runs} runs of "
        f"{options.duration} s per connection count; median [min – max]. At the server: the audit's `duration_ms`, from a "
        "request's arrival to its answer.",
        "",
        "| figure | conn | median | spread | goal | verdict |",
        "|---|---:|---:|---|---|---|",
    ]
    for connections, runs_of in samples.items():
        median = lambda key: statistics.median(s[key] for s in runs_of if s[key] is not None)
        spread = lambda key: f"{min(s[key] for s in runs_of):.2f} – {max(s[key] for s in runs_of):.2f}"
        goal, verdict = "", ""
        if connections == 32:
            p99s = [s["server_p99_ms"] for s in runs_of if s["server_p99_ms"] is not None]
            goal = f"≤ {GOAL_P99_MS:g} ms"
            verdict = harness.verdict(min(p99s), max(p99s), GOAL_P99_MS, "max") if p99s else "no figures"
        lines += [
            f"| req/s | {connections} | {median('rps'):.0f} | {spread('rps')} | | |",
            f"| p99 at the client, ms | {connections} | {median('p99_ms'):.2f} | {spread('p99_ms')} | | |",
            f"| p50 at the server, ms | {connections} | {median('server_p50_ms'):.2f} | {spread('server_p50_ms')} | | |",
            f"| p99 at the server, ms | {connections} | {median('server_p99_ms'):.2f} | {spread('server_p99_ms')} | {goal} | {verdict} |",
            f"| CPU per call, µs | {connections} | {median('cpu_us'):.0f} | {spread('cpu_us')} | | |",
        ]
    restarts = startups[1:]
    startup_verdict = harness.verdict(min(restarts), max(restarts), GOAL_STARTUP_S, "max")
    lines += [
        "",
        f"Start-up to data (`serve` started until `search_trips` and `search_content` both answer with something found): "
        f"the first start, which builds the content index, {startups[0]:.2f} s; {len(restarts)} restarts, which open it, "
        f"median {statistics.median(restarts):.2f} s [{min(restarts):.2f} – {max(restarts):.2f}]; goal ≤ {GOAL_STARTUP_S:g} s "
        f"(restarts): {startup_verdict}.",
    ]
    errors = sum(s["errors"] for runs_of in samples.values() for s in runs_of)
    lines += ["", f"errors (HTTP, socket or tool): {errors}"]
    return lines, errors
