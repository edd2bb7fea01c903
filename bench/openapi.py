"""OpenAPI side by side: one GET of a billing API (nginx answering a static invoice) called through
concierge as `kind = "openapi"` (from bench/openapi/billing.yaml) and as the same request declared
by hand as `kind = "http"`, at 1 and 32 connections; the CPU per call of each concierge process
(user + system over the calls wrk counted), median of paired repeats [min – max]. Then start-up
with GitHub's document (npm @octokit/openapi 23.0.2, CONCIERGE_TEST_GITHUB_SPEC; fetched by
scripts/upstreams.sh's install_github_spec): `concierge check` of a config with four of its
operations against the same config without them, wall time and peak RSS. Called by
`bench/run.sh --openapi`; writes bench/results/<date>-openapi.md.
"""

import argparse
import datetime
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from harness import Server, free_port, wrk  # noqa: E402
import federation  # noqa: E402

ARGS = '{"id":"inv-1"}'
GOALS = {"cpu_ratio": 1.1, "startup_ms": 300.0, "startup_rss_mib": 30.0}


def nginx(state, port):
    conf = Path(state) / "nginx.conf"
    conf.write_text(f"""daemon off; worker_processes 1; pid {state}/nginx.pid; error_log {state}/nginx.err;
events {{ worker_connections 1024; }}
http {{ access_log off; client_body_temp_path {state}; proxy_temp_path {state}; fastcgi_temp_path {state};
  uwsgi_temp_path {state}; scgi_temp_path {state};
  server {{ listen 127.0.0.1:{port}; keepalive_requests 1000000;
    location /invoices/ {{ default_type application/json; return 200 '{{"id":"inv-1","total":42.5,"currency":"EUR"}}'; }} }} }}
""")
    return subprocess.Popen(["taskset", "-c", "0", "nginx", "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def config(state, api, kind):
    if kind == "openapi":
        app = f"""[apps.billing]
kind = "openapi"
spec = "{ROOT}/bench/openapi/billing.yaml"
base_url = "{api}"
operations = ["getInvoice"]
"""
    else:
        app = f"""[apps.billing]
kind = "http"
base_url = "{api}"
[[apps.billing.tool]]
name = "get_invoice"
description = "One invoice"
read_only = true
request = {{ method = "GET", path = "/invoices/{{{{ id | urlencode }}}}" }}
[apps.billing.tool.input_schema]
type = "object"
required = ["id"]
properties = {{ id = {{ type = "string", maxLength = 64 }} }}
"""
    path = Path(state) / f"{kind}.toml"
    path.write_text(f"""[server]
listen = "${{CONCIERGE_LISTEN}}"
[audit.bench]
path = "{state}/{kind}.audit.log"
{app}
[[endpoint]]
path = "/mcp"
tools = ["billing.*"]
auth = {{ kind = "tokens", env = "BENCH_TOKENS", default = "bench:bench-token" }}
audit = "bench"
session = "stateless"
""")
    return path


def check_run(binary, path):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    subprocess.run([binary, "check", "--config", str(path)], check=True, capture_output=True,
                   env={**os.environ, "RUST_LOG": "error"})
    return (time.monotonic() - started) * 1000, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default="target/release")
    parser.add_argument("--duration", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    binary = str((ROOT / options.bin / "concierge").resolve())
    state = tempfile.mkdtemp(prefix="concierge-openapi-bench-")
    api_port = free_port()
    api = nginx(state, api_port)
    servers = []
    rows = {}
    try:
        for kind in ("openapi", "http"):
            port = free_port()
            server = Server(f"concierge ({kind})", [binary, "serve", "--config", str(config(state, f"http://127.0.0.1:{api_port}", kind))],
                            f"http://127.0.0.1:{port}/mcp", {"Authorization": "Bearer bench-token"},
                            env={"CONCIERGE_LISTEN": f"127.0.0.1:{port}", "RUST_LOG": "error"})
            federation.TOOL_ARGS = ARGS
            federation.start(server, "get_invoice")
            servers.append(server)
        for connections in (1, 32):
            for _ in range(options.repeat):
                for server in servers:
                    figures = wrk(server, "get_invoice", ARGS, connections, options.duration, pin=True)
                    rows.setdefault((server.name, connections), []).append(figures)
    finally:
        for server in servers:
            server.stop()
        api.terminate()
    startup = {}
    github = os.environ.get("CONCIERGE_TEST_GITHUB_SPEC")
    if github:
        base = Path(state) / "base.toml"
        base.write_text(f"""[server]
listen = "127.0.0.1:0"
[apps.other]
kind = "openapi"
spec = "{ROOT}/bench/openapi/billing.yaml"
base_url = "http://127.0.0.1:9"
operations = ["getInvoice"]
[[endpoint]]
path = "/mcp"
tools = ["other.*"]
auth = {{ kind = "none" }}
""")
        with_github = Path(state) / "github.toml"
        with_github.write_text(base.read_text() + f"""
[apps.github]
kind = "openapi"
spec = "{github}"
operations = ["repos/get", "issues/list-for-repo", "repos/get-content", "pulls/create"]
[[endpoint]]
path = "/github/mcp"
tools = ["github.*"]
auth = {{ kind = "none" }}
""")
        for name, path in (("without", base), ("with GitHub's document", with_github)):
            runs = []
            for _ in range(options.repeat):
                # Each in a fresh child so ru_maxrss is its own.
                out = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(ROOT / 'bench')!r}); import openapi; print(*openapi.check_run({binary!r}, {str(path)!r}))"],
                                     capture_output=True, text=True, check=True).stdout.split()
                runs.append((float(out[0]), float(out[1])))
            startup[name] = runs
    report(rows, startup, options)


def median_range(values):
    return statistics.median(values), min(values), max(values)


def report(rows, startup, options):
    stamp = datetime.datetime.now().strftime("%Y-%m-%d-%H%M")
    lines = [f"# OpenAPI side by side, {stamp}", "",
             f"`bench/run.sh --openapi`: {options.repeat} paired repeats of {options.duration} s, servers and nginx on core 0, wrk on core 1.", "",
             "| connections | server | calls/s | p50 ms | p99 ms | CPU µs/call | errors |", "|---:|---|---:|---:|---:|---:|---:|"]
    for (name, connections), runs in sorted(rows.items(), key=lambda r: (r[0][1], r[0][0])):
        cell = lambda key, d=1: "{:.{d}f} [{:.{d}f} – {:.{d}f}]".format(*median_range([r[key] for r in runs]), d=d)
        lines.append(f"| {connections} | {name} | {cell('rps', 0)} | {cell('p50_ms', 2)} | {cell('p99_ms', 2)} | {cell('cpu_us')} | {sum(r['errors'] for r in runs)} |")
    lines.append("")
    for connections in (1, 32):
        ours = rows.get(("concierge (openapi)", connections))
        plain = rows.get(("concierge (http)", connections))
        if ours and plain:
            ratios = [o["cpu_us"] / p["cpu_us"] for o, p in zip(ours, plain)]
            m, lo, hi = median_range(ratios)
            lines.append(f"- CPU per call, openapi / http at {connections} connection(s): {m:.2f}× [{lo:.2f} – {hi:.2f}] (goal ≤ {GOALS['cpu_ratio']}×)")
    if startup:
        base_ms = statistics.median(r[0] for r in startup["without"])
        base_rss = statistics.median(r[1] for r in startup["without"])
        gh_ms = statistics.median(r[0] for r in startup["with GitHub's document"])
        gh_rss = statistics.median(r[1] for r in startup["with GitHub's document"])
        lines.append(f"- `concierge check` without GitHub's document: {base_ms:.0f} ms, peak RSS {base_rss:.1f} MiB; with it (13 MB, four operations chosen): {gh_ms:.0f} ms, {gh_rss:.1f} MiB — the document adds {gh_ms - base_ms:.0f} ms (goal ≤ {GOALS['startup_ms']:.0f}) and {gh_rss - base_rss:.1f} MiB (goal ≤ {GOALS['startup_rss_mib']:.0f})")
    text = "\n".join(lines) + "\n"
    out = ROOT / "bench/results" / f"{stamp}-openapi.md"
    out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
