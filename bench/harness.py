"""Starts each server, drives the same load at each in turn with wrk, and prints one table.

Every figure is also given as a ratio to concierge (stateless), measured in the same run: absolute
numbers on a shared 2-core machine drift, ratios hold better. On two cores wrk and the server fight
for the same CPU unless kept apart, so every server runs pinned to core 0 and wrk to core 1
(`taskset`; `--no-pin` turns it off), and the runs are short and many, taken A B A B so drift hits
every server alike. The goals are ratios to bare rmcp: each repeat gives one (concierge's run over
the bare run next to it), and a goal is met only if every repeat's ratio meets it, missed if none
does, and otherwise undecided. Called by bench/run.sh.
"""

import argparse
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MENU = ROOT / "examples/coffee/menu.xlsx"
WRK_SCRIPT = ROOT / "bench/wrk/tools-call.lua"
TOKEN = "bench-token"
TOOLS = [("get_menu", "{}"), ("search_menu", '{"query":"кокос"}')]


def post(url, body, headers=None, timeout=2.0):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST")
    request.add_header("Content-Type", "application/json")
    request.add_header("Accept", "application/json, text/event-stream")
    for key, value in (headers or {}).items():
        request.add_header(key, value)
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.status, dict(response.headers), response.read().decode()


def call_ok(url, headers):
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "get_menu", "arguments": {}}}
    try:
        status, _, text = post(url, body, {"MCP-Protocol-Version": "2025-11-25", **headers})
        return status == 200 and '"result"' in text
    except Exception:
        return False


def rss_kb(pid, field="VmRSS"):
    """Resident memory of a process and its children (uvicorn workers), in KiB."""
    total = 0
    pids = [pid] + [int(p) for p in subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()]
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith(field + ":"):
                    total += int(line.split()[1])
        except FileNotFoundError:
            pass
    return total


def cpu_seconds(pid):
    pids = [pid] + [int(p) for p in subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()]
    ticks = 0
    for p in pids:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])
        except FileNotFoundError:
            pass
    return ticks / os.sysconf("SC_CLK_TCK")


class Server:
    def __init__(self, name, command, url, headers=None, cwd=None, env=None, era=""):
        self.name, self.command, self.url = name, command, url
        self.headers = headers or {}
        # The protocol revision its requests are written in ("" for 2025-11-25).
        self.era = era
        self.cwd, self.env = cwd, env
        self.process = None
        self.cold_start_ms = None

    def start(self, pin=None):
        env = {**os.environ, **(self.env or {})}
        started = time.monotonic()
        command = (["taskset", "-c", pin] if pin else []) + self.command
        self.process = subprocess.Popen(command, cwd=self.cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while time.monotonic() - started < 30:
            if self.process.poll() is not None:
                raise SystemExit(f"{self.name} exited during start-up")
            if call_ok(self.url, self.headers):
                self.cold_start_ms = (time.monotonic() - started) * 1000
                return
            time.sleep(0.01)
        raise SystemExit(f"{self.name} did not answer a tools/call within 30 s")

    def stop(self):
        if self.process:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()


# Where the servers and the load generator run when pinned.
SERVER_CORE, LOAD_CORE = "0", "1"


def wrk(server, tool, args, connections, seconds, session=None, pin=False, args_file=None):
    env = {**os.environ, "BENCH_TOOL": tool, "BENCH_ARGS": args, "BENCH_ARGS_FILE": str(args_file or ""), "BENCH_ERA": server.era,
           "BENCH_TOKEN": server.headers.get("Authorization", "").removeprefix("Bearer "), "BENCH_SESSION": session or ""}
    command = (["taskset", "-c", LOAD_CORE] if pin else []) + ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "5s", "-s", str(WRK_SCRIPT), server.url]
    before = cpu_seconds(server.process.pid)
    out = subprocess.run(command, env=env, capture_output=True, text=True).stdout
    cpu = cpu_seconds(server.process.pid) - before
    # tool_errors: answers that are no successful tool result (scripts other than tools-call.lua
    # may not count them).
    match = re.search(r"BENCH requests=(\d+) duration_us=(\d+) p50_us=(\d+) p99_us=(\d+) socket_errors=(\d+) non2xx=(\d+)(?: tool_errors=(\d+))?", out)
    if not match:
        raise SystemExit(f"wrk gave no figures for {server.name}:\n{out}")
    requests, duration, p50, p99, socket_errors, non2xx = map(int, match.groups()[:6])
    tool_errors = int(match.group(7) or 0)
    longest = re.search(r"max_us=(\d+)", out)
    p999 = re.search(r"p999_us=(\d+)", out)
    return {
        "max_ms": int(longest.group(1)) / 1000 if longest else None,
        "p999_ms": int(p999.group(1)) / 1000 if p999 else None,
        "rps": requests / (duration / 1e6),
        "p50_ms": p50 / 1000,
        "p99_ms": p99 / 1000,
        "errors": socket_errors + non2xx + tool_errors,
        "cpu_us": cpu * 1e6 / max(requests, 1),
    }


def oauth_token(bin_dir, port, state):
    """A client_credentials access token from the built-in authorization server, for /oauth/mcp."""
    env = {**os.environ, "CONCIERGE_VAR": state, "CONCIERGE_LISTEN": f"127.0.0.1:{port}", "RUST_LOG": "error"}
    out = subprocess.run([str(bin_dir / "concierge"), "token", "add-client", "--name", "bench", "--scope", "coffee:read",
                          "--config", "concierge-bench.toml"], cwd=ROOT / "bench", env=env, capture_output=True, text=True, check=True).stdout
    client_id = re.search(r"^client_id=(\S+)$", out, re.M).group(1)
    secret = re.search(r"^client_secret=(\S+)$", out, re.M).group(1)
    form = urllib.parse.urlencode({"grant_type": "client_credentials", "client_id": client_id, "client_secret": secret,
                                   "scope": "coffee:read", "resource": f"http://127.0.0.1:{port}/oauth/mcp"}).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/token", data=form, method="POST")
    request.add_header("Content-Type", "application/x-www-form-urlencoded")
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.loads(response.read())["access_token"]


def open_session(url, headers):
    body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}
    _, response_headers, _ = post(url, body, headers)
    session = {k.lower(): v for k, v in response_headers.items()}["mcp-session-id"]
    post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, {**headers, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"})
    return session


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default="target/release")
    parser.add_argument("--smoke", action="store_true")
    # wrk takes whole seconds.
    parser.add_argument("--duration", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--no-pin", action="store_true", help="let servers and wrk share every core")
    options = parser.parse_args()
    if options.smoke:
        options.duration, options.repeat, options.sessions = 1, 1, 50
    options.pin = not options.no_pin and os.cpu_count() >= 2
    concurrencies = [1] if options.smoke else [1, 32]
    bin_dir = (ROOT / options.bin).resolve()
    state = tempfile.mkdtemp(prefix="concierge-bench-")
    auth = {"Authorization": f"Bearer {TOKEN}"}

    # Free ports from the kernel, so a run never collides with a demo or another run.
    ports = [free_port() for _ in range(4)]
    servers = [
        Server("concierge stateless", [str(bin_dir / "concierge"), "serve", "--config", "concierge-bench.toml"], f"http://127.0.0.1:{ports[0]}/stateless/mcp", auth, cwd=ROOT / "bench", env={"CONCIERGE_LISTEN": f"127.0.0.1:{ports[0]}", "CONCIERGE_VAR": state, "RUST_LOG": "error"}),
        Server("bare rmcp", [str(bin_dir / "rmcp-bare"), f"127.0.0.1:{ports[1]}", str(MENU)], f"http://127.0.0.1:{ports[1]}/mcp"),
    ]
    if not options.smoke:
        venv = ROOT / "bench/.venv/bin"
        servers += [
            Server("FastMCP (2 workers, uvloop, httptools)", [str(venv / "uvicorn"), "fastmcp_server:app", "--host", "127.0.0.1", "--port", str(ports[2]), "--workers", "2", "--loop", "uvloop", "--http", "httptools", "--no-access-log", "--log-level", "warning"], f"http://127.0.0.1:{ports[2]}/mcp", cwd=ROOT / "bench/peers", env={"BENCH_MENU": str(MENU)}),
            Server("TypeScript SDK (Express)", ["node", "server.mjs", str(ports[3]), str(MENU)], f"http://127.0.0.1:{ports[3]}/mcp", cwd=ROOT / "bench/peers/typescript"),
        ]
    concierge = servers[0]
    stateful = Server("concierge stateful", None, f"http://127.0.0.1:{ports[0]}/stateful/mcp", auth)
    # The same stateless endpoint, asked in the 2026-07-28 era.
    modern = Server("concierge stateless, 2026-07-28", None, f"http://127.0.0.1:{ports[0]}/stateless/mcp", auth, era="2026-07-28")
    oauth = Server("concierge OAuth (JWT)", None, f"http://127.0.0.1:{ports[0]}/oauth/mcp")

    try:
        for server in servers:
            server.start(SERVER_CORE if options.pin else None)
        stateful.process = concierge.process
        modern.process = concierge.process
        oauth.process = concierge.process
        oauth.headers = {"Authorization": f"Bearer {oauth_token(bin_dir, ports[0], state)}"}
        idle = {s.name: rss_kb(s.process.pid) for s in servers}
        # Split, because most of concierge's idle RSS is its executable's pages (shared, clean,
        # given back under pressure) and only the rest is heap and stacks.
        idle_anon = rss_kb(concierge.process.pid, "RssAnon")
        session = open_session(stateful.url, auth)
        rows, samples_of = {}, {}
        runs = [(s, None) for s in servers] + [(modern, None), (stateful, session), (oauth, None)]
        for connections in concurrencies:
            for tool, args in TOOLS:
                for server, sess in runs:
                    wrk(server, tool, args, connections, 1, sess, options.pin)  # warm-up, not counted
                results = {s.name: [] for s, _ in runs}
                for _ in range(options.repeat):
                    for server, sess in runs:  # A B A B …: drift hits every server alike
                        results[server.name].append(wrk(server, tool, args, connections, options.duration, sess, options.pin))
                for name, samples in results.items():
                    rows[(name, tool, connections)] = {k: statistics.median(s[k] for s in samples) for k in samples[0]}
                    samples_of[(name, tool, connections)] = samples
        peak = {s.name: rss_kb(s.process.pid, "VmHWM") for s in servers}
        sessions_rss = None
        if not options.smoke:
            before = rss_kb(concierge.process.pid)
            for _ in range(options.sessions):
                open_session(stateful.url, auth)
            sessions_rss = (before, rss_kb(concierge.process.pid))
    finally:
        for server in servers:
            server.stop()

    lines = report(rows, servers, [modern, stateful, oauth], idle, peak, sessions_rss, options, concurrencies)
    lines += goals(samples_of, idle, idle_anon, sessions_rss, options, concurrencies)
    import catalog  # the ski catalog's rows; it uses this module's helpers

    at_size, at_size_errors = catalog.run(bin_dir, options)
    lines += at_size
    print("\n".join(lines))
    if options.smoke:
        failed = sum(1 for r in rows.values() if r["errors"] > 0 or r["rps"] <= 0) + (1 if at_size_errors else 0)
        print(f"bench-smoke: {len(rows) + 1 - failed} passed, {failed} failed")
        sys.exit(1 if failed else 0)
    results = ROOT / "bench/results"
    results.mkdir(exist_ok=True)
    path = results / f"{datetime.datetime.now():%Y-%m-%d-%H%M}.md"
    path.write_text("\n".join(lines) + "\n")
    print(f"\nwritten to {path.relative_to(ROOT)}")


def free_port():
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def report(rows, servers, endpoints, idle, peak, sessions_rss, options, concurrencies):
    base_name = servers[0].name
    names = [s.name for s in servers] + [e.name for e in endpoints]
    cpu = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    lines = [
        f"# concierge side-by-side benchmark, {datetime.datetime.now():%Y-%m-%d %H:%M}",
        "",
        f"{cpu} cores, loopback, wrk -t1, {options.duration:g} s per run, median of {options.repeat} runs taken A B A B; "
        + ("servers pinned to core 0, wrk to core 1; " if options.pin else "servers and wrk unpinned; ")
        + 
        f"ratio = figure ÷ {base_name} (higher is better for req/s, lower for latency, CPU and memory).",
        "",
        "| server | tool | conn | req/s | ×req/s | p50 ms | ×p50 | p99 ms | ×p99 | CPU µs/call | ×CPU | errors |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for connections in concurrencies:
        for tool, _ in TOOLS:
            base = rows[(base_name, tool, connections)]
            for name in names:
                r = rows[(name, tool, connections)]
                ratio = lambda key: r[key] / base[key] if base[key] else float("nan")
                lines.append(
                    f"| {name} | {tool} | {connections} | {r['rps']:.0f} | {ratio('rps'):.2f} | {r['p50_ms']:.2f} | {ratio('p50_ms'):.2f} | "
                    f"{r['p99_ms']:.2f} | {ratio('p99_ms'):.2f} | {r['cpu_us']:.0f} | {ratio('cpu_us'):.2f} | {r['errors']} |"
                )
    lines += ["", "| server | cold start to first call, ms | ×cold | RSS idle, MiB | ×idle | peak RSS, MiB | ×peak |", "|---|---:|---:|---:|---:|---:|---:|"]
    for server in servers:
        base = servers[0]
        lines.append(
            f"| {server.name} | {server.cold_start_ms:.0f} | {server.cold_start_ms / base.cold_start_ms:.2f} | {idle[server.name] / 1024:.1f} | "
            f"{idle[server.name] / idle[base.name]:.2f} | {peak[server.name] / 1024:.1f} | {peak[server.name] / peak[base.name]:.2f} |"
        )
    if sessions_rss:
        before, after = sessions_rss
        lines += ["", f"concierge stateful with {options.sessions} more open sessions: RSS {before / 1024:.1f} → {after / 1024:.1f} MiB "
                  f"({(after - before) / options.sessions:.1f} KiB per session)."]
    return lines


# The goals for concierge stateless ÷ bare rmcp, as (figure, key, bound, direction), at every tool and concurrency.
RATIO_GOALS = [
    ("CPU per call", "cpu_us", 1.10, "max"),
    ("req/s", "rps", 0.93, "min"),
]
OAUTH_GOALS = [("CPU per call", "cpu_us", 1.15, "max")]
# The 2026-07-28 era ÷ the 2025-11-25 one, same stateless endpoint, same tools.
MODERN_GOALS = [("CPU per call", "cpu_us", 1.05, "max"), ("req/s", "rps", 1 / 1.05, "min")]
IDLE_RSS_GOAL_MIB = 16
SESSION_GOAL_KIB = 20


def verdict(low, high, bound, direction):
    """Met only if the whole spread meets the bound; missed if none of it does."""
    if direction == "max":
        return "met" if high <= bound else "missed" if low > bound else "undecided"
    return "met" if low >= bound else "missed" if high < bound else "undecided"


def ratio_rows(ours, theirs, goals, tool, connections):
    rows = []
    for what, key, bound, direction in goals:
        ratios = [a[key] / b[key] for a, b in zip(ours, theirs) if b[key]]
        low, high, middle = min(ratios), max(ratios), statistics.median(ratios)
        sign = "≤" if direction == "max" else "≥"
        rows.append(f"| {tool} | {connections} | {what} | {middle:.2f}× | {low:.2f} – {high:.2f} | {sign} {bound:.2f}× | {verdict(low, high, bound, direction)} |")
    return rows


def goals(samples_of, idle, idle_anon, sessions_rss, options, concurrencies):
    base, peer, oauth = "concierge stateless", "bare rmcp", "concierge OAuth (JWT)"
    modern = "concierge stateless, 2026-07-28"
    if options.smoke or any((peer, tool, c) not in samples_of for tool, _ in TOOLS for c in concurrencies):
        return []
    header = ["| tool | conn | figure | ratio | spread | goal | verdict |", "|---|---:|---|---:|---|---|---|"]
    lines = ["", f"## Goals: concierge stateless ÷ bare rmcp, one ratio per repeat ({options.repeat}), median [min – max]", ""] + header
    for connections in concurrencies:
        for tool, _ in TOOLS:
            lines += ratio_rows(samples_of[(base, tool, connections)], samples_of[(peer, tool, connections)], RATIO_GOALS, tool, connections)
    lines += ["", "## Goals: concierge OAuth (JWT) ÷ concierge stateless (static tokens), same tools, same run", ""] + header
    for connections in concurrencies:
        for tool, _ in TOOLS:
            lines += ratio_rows(samples_of[(oauth, tool, connections)], samples_of[(base, tool, connections)], OAUTH_GOALS, tool, connections)
    lines += ["", "## Goals: concierge stateless in the 2026-07-28 era ÷ in the 2025-11-25 era, same endpoint, same run", ""] + header
    for connections in concurrencies:
        for tool, _ in TOOLS:
            lines += ratio_rows(samples_of[(modern, tool, connections)], samples_of[(base, tool, connections)], MODERN_GOALS, tool, connections)
    mib = idle[base] / 1024
    lines += ["", f"- idle RSS: {mib:.1f} MiB (goal ≤ {IDLE_RSS_GOAL_MIB} MiB: {'met' if mib <= IDLE_RSS_GOAL_MIB else 'missed'}); "
              f"{idle_anon / 1024:.1f} MiB of it heap and stacks, the rest the executable's and libraries' pages"]
    if sessions_rss:
        before, after = sessions_rss
        kib = (after - before) / options.sessions
        lines.append(f"- per open stateful session: {kib:.1f} KiB (goal ≤ {SESSION_GOAL_KIB} KiB: {'met' if kib <= SESSION_GOAL_KIB else 'missed'})")
    return lines


if __name__ == "__main__":
    main()
