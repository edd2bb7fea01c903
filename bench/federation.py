"""Federation side by side: one tool of a FastMCP 4 server (PyPI fastmcp 4.1.6, stateless JSON,
uvicorn) called directly, through concierge (`kind = "mcp"`), and through IBM ContextForge (PyPI
mcp-contextforge-gateway 1.0.7.post20260921, the newest this machine's PyPI has; 1.1.0 is not
published there) federating the same server, at 1 and 32 connections.

concierge runs its whole platform (token auth, a rate limit, validation against the upstream's
schema, an audit line per call to a file); ContextForge runs with its JWT auth on, its rate limit on
at the same 1,000,000 calls a second (in memory, no lockout), SQLite, its in-memory cache, the tool
in a virtual server. The upstream and the server
under test share core 0, wrk runs on core 1 (bench/harness.py's pinning). Added CPU per call is
the gateway's own (user + system of its process tree) over the calls wrk counted; added latency is
the gateway's p50/p99 minus the direct ones of the same repeat. Median of paired repeats [min –
max]. Called by `bench/run.sh --federation`; writes bench/results/<date>-federation.md.
`BENCH_CONTEXTFORGE_LIMITS=off` runs ContextForge without its rate limiter (its best case).

Beside them, Debian's nginx as a plain reverse proxy of the same calls (one worker, a keep-alive
pool to the upstream, no access log): no auth, no JSON read, no audit — what only relaying an HTTP
request and its answer over loopback costs on this machine, the floor under any gateway's CPU.
And bench/peers/json-relay: the same relay on concierge's own stack (axum, reqwest, serde_json)
that reads the request and the answer as JSON and does nothing else — the floor under any gateway
that understands MCP, built the way concierge is.
"""

import argparse
import datetime
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from harness import LOAD_CORE, MENU, SERVER_CORE, Server, free_port, post, wrk  # noqa: E402

TOOL_ARGS = '{"query":"латте"}'
GOALS = {"cpu_us": 150.0, "p99_ms": 1.0, "rps_vs_contextforge": 5.0}


def tree(pid):
    """`pid` and its descendants."""
    children = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, []))
    return found


def tree_rss_kb(pid, field="VmHWM"):
    total = 0
    for member in tree(pid):
        try:
            for line in Path(f"/proc/{member}/status").read_text().splitlines():
                if line.startswith(field + ":"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


def tree_cpu_seconds(pid):
    total = 0.0
    for member in tree(pid):
        try:
            fields = Path(f"/proc/{member}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            pass
    return total


def start(server, tool):
    env = {**os.environ, **(server.env or {})}
    server.process = subprocess.Popen(["taskset", "-c", SERVER_CORE] + server.command, cwd=server.cwd, env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    answering(server, tool)


def answering(server, tool):
    """Waits until `server` answers a call of `tool`."""
    deadline = time.monotonic() + 120
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": json.loads(TOOL_ARGS)}}
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise SystemExit(f"{server.name} exited during start-up")
        try:
            status, _, text = post(server.url, body, {"MCP-Protocol-Version": "2025-11-25", **server.headers}, timeout=5)
            if status == 200 and '"result"' in text and '"isError":true' not in text:
                return
        except Exception:
            pass
        time.sleep(0.1)
    raise SystemExit(f"{server.name} did not answer a tools/call within 120 s")


def api(base, token, path, body):
    request = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST")
    request.add_header("Authorization", f"Bearer {token}")
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def contextforge(venv, upstream_url, state):
    """ContextForge on a free port with the upstream registered and its tool in a virtual server;
    its Server (not yet answering tools/call until registered) and the tool's name there."""
    port = free_port()
    env = {
        "JWT_SECRET_KEY": "bench-jwt-secret-0123456789abcdef0123456789",
        "AUTH_ENCRYPTION_SECRET": "bench-auth-secret-0123456789abcdef01234567",
        "BASIC_AUTH_USER": "bench", "BASIC_AUTH_PASSWORD": "bench-password-0123456789",
        "PLATFORM_ADMIN_EMAIL": "admin@bench.example", "PLATFORM_ADMIN_PASSWORD": "Bench-Admin-Passw0rd!",
        "DATABASE_URL": f"sqlite:///{state}/contextforge.db", "DEV_MODE": "true", "ENVIRONMENT": "development",
        "MCPGATEWAY_UI_ENABLED": "false", "MCPGATEWAY_ADMIN_API_ENABLED": "true", "CACHE_TYPE": "memory",
        "LOG_LEVEL": "ERROR", "SSRF_PROTECTION_ENABLED": "false",
        # Its rate limit on, as concierge's is, at the same 1,000,000 calls a second; in memory (no
        # Redis), as concierge's in-process limiter; no lockout of the load generator's account.
        "RATE_LIMITING_ENABLED": "false" if os.environ.get("BENCH_CONTEXTFORGE_LIMITS") == "off" else "true",
        "RATE_LIMITING_REDIS_ENABLED": "false",
        "RATE_LIMIT_MEDIUM_RPM": "60000000", "RATE_LIMIT_MEDIUM_BURST": "60000000",
        "TOOL_RATE_LIMIT": "60000000", "RATE_LIMIT_LOCKOUT_ENABLED": "false",
    }
    process_env = {**os.environ, **env}
    server = Server("ContextForge 1.0.7", [str(venv / "bin/mcpgateway"), "--host", "127.0.0.1", "--port", str(port)],
                    "", {}, cwd=state, env=env)
    server.process = subprocess.Popen(["taskset", "-c", SERVER_CORE] + server.command, cwd=state, env=process_env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while True:
        try:
            with urllib.request.urlopen(base + "/health", timeout=2) as response:
                if response.status == 200:
                    break
        except Exception:
            pass
        if server.process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("ContextForge did not start")
        time.sleep(0.2)
    token = subprocess.run([str(venv / "bin/python"), "-m", "mcpgateway.utils.create_jwt_token", "--username",
                            "admin@bench.example", "--exp", "10080", "--secret", env["JWT_SECRET_KEY"]],
                           env=process_env, capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
    gateway = api(base, token, "/gateways", {"name": "coffee", "url": upstream_url, "transport": "STREAMABLEHTTP"})
    request = urllib.request.Request(base + "/tools")
    request.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=30) as response:
        listed = json.loads(response.read())
    listed = listed if isinstance(listed, list) else listed.get("items", [])
    tool = next(t for t in listed if t["name"].endswith("search-menu") and t.get("gatewayId", gateway["id"]) == gateway["id"])
    virtual = api(base, token, "/servers", {"server": {"name": "bench", "associated_tools": [tool["id"]]}})
    server.url = f"{base}/servers/{virtual['id']}/mcp"
    server.headers = {"Authorization": f"Bearer {token}"}
    return server, tool["name"]


def fastmcp():
    """The FastMCP server every path calls (one uvicorn worker), on a free port; not started."""
    port = free_port()
    return Server("FastMCP 4.1.6 (direct)", [str(ROOT / "bench/.venv/bin/uvicorn"), "fastmcp_server:app", "--host", "127.0.0.1",
                                             "--port", str(port), "--workers", "1", "--loop", "uvloop", "--http", "httptools",
                                             "--log-level", "error"],
                  f"http://127.0.0.1:{port}/mcp", {}, cwd=ROOT / "bench/peers", env={"BENCH_MENU": str(MENU)})


def nginx(upstream_url, state):
    """nginx relaying every request to the upstream: the cost of the relay alone."""
    port = free_port()
    upstream = upstream_url.removeprefix("http://").split("/", 1)[0]
    folder = Path(state) / "nginx"
    folder.mkdir()
    conf = folder / "nginx.conf"
    conf.write_text(f"""daemon off;
worker_processes 1;
error_log {folder}/error.log;
pid {folder}/nginx.pid;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  upstream fastmcp {{ server {upstream}; keepalive 64; }}
  server {{
    listen 127.0.0.1:{port};
    location / {{ proxy_pass http://fastmcp; proxy_http_version 1.1; proxy_set_header Connection ""; }}
  }}
}}
""")
    version = subprocess.run(["nginx", "-v"], capture_output=True, text=True).stderr.strip().removeprefix("nginx version: nginx/")
    return Server(f"nginx {version} (relay only)", ["nginx", "-c", str(conf), "-p", str(folder)], f"http://127.0.0.1:{port}/mcp", {},
                  cwd=folder, env={})


def median_range(values):
    return statistics.median(values), min(values), max(values)


def json_relay(bin_dir, upstream_url):
    """bench/peers/json-relay in front of the upstream: axum and reqwest reading JSON both ways."""
    port = free_port()
    return Server("axum + reqwest, JSON read (json-relay)", [str((ROOT / bin_dir / "json-relay").resolve()), f"127.0.0.1:{port}",
                                                             upstream_url],
                  f"http://127.0.0.1:{port}/mcp", {}, cwd=ROOT, env={})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default="target/release")
    parser.add_argument("--duration", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    state = tempfile.mkdtemp(prefix="concierge-federation-bench-")
    ours_port = free_port()
    upstream = fastmcp()
    ours = Server("concierge (mcp)", [str((ROOT / options.bin / "concierge").resolve()), "serve", "--config", "concierge-federation-bench.toml"],
                  f"http://127.0.0.1:{ours_port}/mcp", {"Authorization": "Bearer bench-token"}, cwd=ROOT / "bench",
                  env={"CONCIERGE_LISTEN": f"127.0.0.1:{ours_port}", "CONCIERGE_VAR": state, "BENCH_UPSTREAM_URL": upstream.url,
                       "RUST_LOG": "error"})
    relay = nginx(upstream.url, state)
    reader = json_relay(options.bin, upstream.url)
    gateways = []
    rows = {}
    idle, peak = {}, {}
    try:
        start(upstream, "search_menu")
        start(ours, "search_menu")
        theirs, their_tool = contextforge(ROOT / "bench/.venv-contextforge", upstream.url, state)
        answering(theirs, their_tool)
        start(relay, "search_menu")
        start(reader, "search_menu")
        gateways = [(ours, "search_menu"), (theirs, their_tool), (relay, "search_menu"), (reader, "search_menu")]
        for server, _ in gateways:
            idle[server.name] = tree_rss_kb(server.process.pid, "VmRSS")
        for connections in (1, 32):
            for _ in range(options.repeat):
                for server, tool in [(upstream, "search_menu")] + gateways:
                    before = tree_cpu_seconds(server.process.pid)
                    figures = wrk(server, tool, TOOL_ARGS, connections, options.duration, pin=True)
                    calls = figures["rps"] * options.duration
                    figures["cpu_us"] = (tree_cpu_seconds(server.process.pid) - before) * 1e6 / max(calls, 1)
                    rows.setdefault((server.name, connections), []).append(figures)
                    if server is not upstream:
                        peak[server.name] = max(peak.get(server.name, 0), tree_rss_kb(server.process.pid))
    finally:
        for server in [upstream, ours, relay, reader] + [g for g, _ in gateways[1:2]]:
            server.stop()
    report(rows, upstream.name, [g.name for g, _ in gateways], idle, peak, options)


def report(rows, direct, gateway_names, idle, peak, options):
    ours, theirs, relay, reader = gateway_names
    lines = [f"# Federation: concierge against IBM ContextForge, {datetime.date.today()}", "",
             "One tool (`search_menu`) of a FastMCP 4.1.6 server, called directly, through concierge (`kind = \"mcp\"`, "
             "token auth, a rate limit, validation, an audit line per call) and through ContextForge 1.0.7.post20260921 "
             f"(JWT auth, its rate limiter {'off' if os.environ.get('BENCH_CONTEXTFORGE_LIMITS') == 'off' else 'on at 1,000,000 calls a second, in memory'}). {options.repeat} paired repeats of {options.duration} s per row; upstream and gateway on core "
             f"{SERVER_CORE}, wrk on core {LOAD_CORE}; median [min – max]. A gateway's CPU is its own process tree's. "
             "nginx relays the same calls and does nothing else: the floor under any gateway's CPU on this machine; "
             "json-relay relays them on axum and reqwest reading each request and answer as JSON and does nothing else: "
             "the floor under a gateway that understands MCP, on concierge's stack.", "",
             "| path | conn | req/s | CPU µs/call | p50 ms | p99 ms | errors |", "|---|---:|---:|---:|---:|---:|---:|"]
    for (name, connections), samples in rows.items():
        def cell(key, digits=1):
            m, lo, hi = median_range([s[key] for s in samples])
            return f"{m:.{digits}f} [{lo:.{digits}f} – {hi:.{digits}f}]"
        errors = sum(s["errors"] for s in samples)
        lines.append(f"| {name} | {connections} | {cell('rps')} | {cell('cpu_us')} | {cell('p50_ms', 2)} | {cell('p99_ms', 2)} | {errors} |")
    lines += ["", "| gateway | conn | added CPU µs/call | added p50 ms | added p99 ms | req/s ÷ direct | RSS peak MiB |",
              "|---|---:|---:|---:|---:|---:|---:|"]
    for name in gateway_names:
        for connections in (1, 32):
            through, plain = rows[(name, connections)], rows[(direct, connections)]
            cpu = median_range([s["cpu_us"] for s in through])
            p50 = median_range([a["p50_ms"] - b["p50_ms"] for a, b in zip(through, plain)])
            p99 = median_range([a["p99_ms"] - b["p99_ms"] for a, b in zip(through, plain)])
            rps = median_range([a["rps"] / b["rps"] for a, b in zip(through, plain)])
            lines.append(f"| {name} | {connections} | {cpu[0]:.0f} [{cpu[1]:.0f} – {cpu[2]:.0f}] | {p50[0]:.2f} | {p99[0]:.2f} | "
                         f"{rps[0]:.2f} | {peak[name] / 1024:.1f} |")
    # A short run may see ContextForge answer no call at all at 32 connections: infinitely fewer.
    ratio = median_range([a["rps"] / b["rps"] if b["rps"] else math.inf
                          for a, b in zip(rows[(ours, 32)], rows[(theirs, 32)])])
    cpu32 = statistics.median(s["cpu_us"] for s in rows[(ours, 32)])
    relay32 = statistics.median(s["cpu_us"] for s in rows[(relay, 32)])
    reader32 = statistics.median(s["cpu_us"] for s in rows[(reader, 32)])
    p99_32 = statistics.median(a["p99_ms"] - b["p99_ms"] for a, b in zip(rows[(ours, 32)], rows[(direct, 32)]))
    lines += ["", "Goals at 32 connections:", "",
              f"- concierge's added CPU per call {cpu32:.0f} µs (goal ≤ {GOALS['cpu_us']:.0f}): {'met' if cpu32 <= GOALS['cpu_us'] else 'NOT met'}",
              f"- concierge's added p99 {p99_32:.2f} ms (goal ≤ {GOALS['p99_ms']:.0f} ms): {'met' if p99_32 <= GOALS['p99_ms'] else 'NOT met'}",
              f"- concierge's req/s ÷ ContextForge's {ratio[0]:.2f} [{ratio[1]:.2f} – {ratio[2]:.2f}] (goal ≥ {GOALS['rps_vs_contextforge']:.0f}): "
              f"{'met' if ratio[0] >= GOALS['rps_vs_contextforge'] else 'NOT met'}",
              f"- the floor: nginx relaying the same calls costs {relay32:.0f} µs a call; concierge's CPU is "
              f"{cpu32 / relay32:.2f}× the relay's, {cpu32 - relay32:.0f} µs over it",
              f"- the floor on concierge's stack: json-relay costs {reader32:.0f} µs a call "
              f"({'under' if reader32 <= GOALS['cpu_us'] else 'over'} the goal); concierge's CPU is "
              f"{cpu32 / reader32:.2f}× it, {cpu32 - reader32:.0f} µs over it",
              "", "| gateway | idle RSS MiB | peak RSS MiB |", "|---|---:|---:|"]
    for name in gateway_names:
        lines.append(f"| {name} | {idle[name] / 1024:.1f} | {peak[name] / 1024:.1f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    variant = "-contextforge-unlimited" if os.environ.get("BENCH_CONTEXTFORGE_LIMITS") == "off" else ""
    out = ROOT / "bench" / "results" / f"{datetime.datetime.now():%Y-%m-%d-%H%M}-federation{variant}.md"
    out.write_text(text)
    print(f"written to {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
