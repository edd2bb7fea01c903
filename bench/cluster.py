"""The price of sharing state: the same tools under the same load, served by
  A  one instance, everything in the process and in SQLite (the default),
  B  one instance on Redis (limits) and PostgreSQL (the hotel intake),
  C  three instances on the same Redis and PostgreSQL, behind nginx,
taken A B C A B C, with the Redis commands and PostgreSQL transactions each call costs and the CPU
the stores spend on it. Called by `bench/run.sh --cluster`, which installs PostgreSQL
(CONCIERGE_TEST_PG_BIN), redis-server and nginx; this script starts its own PostgreSQL with the
durability settings of a real one (fsync and synchronous commit on), as SQLite's FULL sync is.
"""

import argparse
import datetime
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402  (the single-server harness: Server, wrk, cpu_seconds, free_port)

ROOT = harness.ROOT
AUTH = {"Authorization": f"Bearer {harness.TOKEN}"}
LOADS = [
    ("get_menu (read)", "/coffee/mcp", "tools-call.lua", {"BENCH_TOOL": "get_menu", "BENCH_ARGS": "{}"}),
    ("hotel submit (durable write)", "/hotel/mcp", "hotel-submit.lua", {}),
]


def run(command, **kwargs):
    return subprocess.run(command, check=True, capture_output=True, text=True, **kwargs).stdout


def psql(url, sql):
    return run(["psql", url, "-Atqc", sql]).strip()


def database(admin_url, name):
    psql(admin_url, f"DROP DATABASE IF EXISTS {name}")
    psql(admin_url, f"CREATE DATABASE {name}")
    return admin_url.rsplit("/", 1)[0] + "/" + name


def redis_calls(port):
    """(round trips, commands) Redis has executed so far: a script run is one round trip, and
    each command inside it counts as a command too."""
    stats = run(["redis-cli", "-p", str(port), "INFO", "commandstats"])
    calls = {line.split(":")[0].removeprefix("cmdstat_"): int(line.split("calls=")[1].split(",")[0])
             for line in stats.splitlines() if line.startswith("cmdstat_")}
    inside = sum(n for name, n in calls.items() if name in ("time", "zremrangebyscore", "zcard", "zadd", "pexpire", "zrange", "get", "set", "hmget", "hset", "exists", "del", "expire", "hget"))
    scripts = calls.get("evalsha", 0) + calls.get("eval", 0)
    # Commands sent on their own (outside scripts) are round trips of their own.
    return scripts + max(0, sum(calls.values()) - inside - scripts), sum(calls.values())


def start_postgres(work):
    """A PostgreSQL of this run's own, durable as a real one; its admin URL and its stop."""
    bin_dir = os.environ.get("CONCIERGE_TEST_PG_BIN") or sorted(Path("/usr/lib/postgresql").glob("*/bin"))[-1]
    data, port = work / "pg", harness.free_port()
    data.mkdir()
    as_root = os.geteuid() == 0
    prefix = ["runuser", "-u", "postgres", "--"] if as_root else []
    if as_root:
        os.chmod(work, 0o755)
        run(["chown", "-R", "postgres", str(data)])
    run(prefix + [f"{bin_dir}/initdb", "-D", str(data / "data"), "-A", "trust", "-U", "postgres"])
    run(prefix + [f"{bin_dir}/pg_ctl", "-D", str(data / "data"), "-l", str(data / "log"), "-w",
                  "-o", f"-p {port} -k {data} -c listen_addresses=127.0.0.1 -c max_connections=200", "start"])
    stop = lambda: subprocess.run(prefix + [f"{bin_dir}/pg_ctl", "-D", str(data / "data"), "-m", "fast", "stop"], capture_output=True)
    return f"postgres://postgres@127.0.0.1:{port}/postgres", stop


def pg_commits(admin_url, names):
    listed = ",".join(f"'{n}'" for n in names)
    return int(psql(admin_url, f"SELECT coalesce(sum(xact_commit), 0) FROM pg_stat_database WHERE datname IN ({listed})"))


def store_cpu(redis_pid):
    """CPU seconds of Redis and of every PostgreSQL process on this machine."""
    postgres = [int(p) for p in subprocess.run(["pgrep", "-x", "postgres"], capture_output=True, text=True).stdout.split()]
    return harness.cpu_seconds(redis_pid), sum(harness.cpu_seconds(p) for p in postgres)


class Mode:
    """One deployment under test: its instances, and the URL the load goes to."""

    def __init__(self, name, instances, front, extra=None):
        self.name, self.instances, self.front = name, instances, front
        self.extra = extra or []  # processes besides concierge (nginx), for CPU

    def pids(self):
        return [s.process.pid for s in self.instances] + [p.pid for p in self.extra]


def concierge(bin_dir, port, state, env):
    return harness.Server(
        f"concierge on {port}",
        [str(bin_dir / "concierge"), "serve", "--config", "concierge-cluster.toml"],
        f"http://127.0.0.1:{port}/coffee/mcp",
        AUTH,
        cwd=ROOT / "bench",
        env={"CONCIERGE_LISTEN": f"127.0.0.1:{port}", "CONCIERGE_VAR": state, "RUST_LOG": "error", **env},
    )


def nginx_config(directory, listen, ports):
    servers = " ".join(f"server 127.0.0.1:{p};" for p in ports)
    return f"""
daemon off;
worker_processes 1;
pid {directory}/nginx.pid;
error_log {directory}/error.log warn;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  client_body_temp_path {directory}/body;
  proxy_temp_path {directory}/proxy;
  fastcgi_temp_path {directory}/fastcgi;
  uwsgi_temp_path {directory}/uwsgi;
  scgi_temp_path {directory}/scgi;
  upstream concierge {{ {servers} keepalive 64; }}
  server {{
    listen 127.0.0.1:{listen};
    location / {{
      proxy_pass http://concierge;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_buffering off;
    }}
  }}
}}
"""


def load(mode, path, script, env, connections, seconds):
    """One wrk run against `mode`: figures, plus the CPU of all its processes per call."""
    server = harness.Server(mode.name, None, mode.front + path, AUTH)
    server.process = mode.instances[0].process
    before = sum(harness.cpu_seconds(p) for p in mode.pids())
    saved = harness.WRK_SCRIPT
    harness.WRK_SCRIPT = ROOT / "bench/wrk" / script
    os.environ.update({"BENCH_RUN": uuid.uuid4().hex[:12], **env})
    try:
        figures = harness.wrk(server, env.get("BENCH_TOOL", ""), env.get("BENCH_ARGS", "{}"), connections, seconds)
    finally:
        harness.WRK_SCRIPT = saved
    requests = figures["rps"] * seconds
    figures["cpu_us"] = (sum(harness.cpu_seconds(p) for p in mode.pids()) - before) * 1e6 / max(requests, 1)
    figures["requests"] = requests
    return figures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default="target/release")
    parser.add_argument("--duration", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    redis_bin = os.environ.get("CONCIERGE_TEST_REDIS_SERVER") or shutil.which("redis-server")
    nginx_bin = os.environ.get("CONCIERGE_TEST_NGINX") or shutil.which("nginx") or "/usr/sbin/nginx"
    if not redis_bin:
        raise SystemExit("bench --cluster needs redis-server")
    bin_dir = (ROOT / options.bin).resolve()
    work = Path(tempfile.mkdtemp(prefix="concierge-cluster-bench-"))
    processes = []
    servers = []
    admin, stop_postgres = start_postgres(work)
    try:
        redis_port = harness.free_port()
        redis = subprocess.Popen([redis_bin, "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                                  "--dir", str(work)], stdout=subprocess.DEVNULL)
        processes.append(redis)
        time.sleep(0.3)
        one_db = database(admin, "bench_one")
        three_db = database(admin, "bench_three")
        shared = lambda db, instance: {
            "CONCIERGE_REDIS_URL": f"redis://127.0.0.1:{redis_port}/",
            "CONCIERGE_DATABASE_URL": db,
            "CONCIERGE_INSTANCE": instance,
            "CONCIERGE_SESSION_SECRET": "the cluster benchmark's session secret",
        }
        local = {"CONCIERGE_REDIS_URL": "", "CONCIERGE_DATABASE_URL": ""}
        a = concierge(bin_dir, harness.free_port(), str(work / "a"), local)
        b = concierge(bin_dir, harness.free_port(), str(work / "b"), shared(one_db, "b"))
        c_ports = [harness.free_port() for _ in range(3)]
        c = [concierge(bin_dir, p, str(work / f"c{i}"), shared(three_db, f"c{i}")) for i, p in enumerate(c_ports)]
        for server in [a, b, *c]:
            server.start()
            servers.append(server)
        listen = harness.free_port()
        (work / "nginx.conf").write_text(nginx_config(work, listen, c_ports))
        nginx = subprocess.Popen([nginx_bin, "-p", str(work), "-c", str(work / "nginx.conf")], stderr=subprocess.DEVNULL)
        processes.append(nginx)
        front = f"http://127.0.0.1:{listen}"
        deadline = time.monotonic() + 10
        while not harness.call_ok(front + "/coffee/mcp", AUTH):
            if time.monotonic() > deadline:
                raise SystemExit("nginx did not answer")
            time.sleep(0.05)
        # Every mode answers both loads before they are timed (wrk counts only HTTP failures).
        for url in [a.url.removesuffix("/coffee/mcp"), b.url.removesuffix("/coffee/mcp"), front]:
            submit = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "th_hotel_submit_task_results", "arguments": {
                "source_message": {"source_message_id": f"bench-check-{uuid.uuid4().hex}", "subject": "FYI", "from": "agent@example.test",
                                   "received_at": "2026-07-12T05:00:00Z", "source_channel": "Email"},
                "route_code": "S10", "result_type": "entry_notice", "notice_reason": "informational message, no reservation action",
                "extraction_warnings": []}}}
            _, _, text = harness.post(url + "/hotel/mcp", submit, {"MCP-Protocol-Version": "2025-11-25", **AUTH})
            if '"success":true' not in text.replace(" ", ""):
                raise SystemExit(f"the hotel submission failed on {url}: {text[:300]}")
            if not harness.call_ok(url + "/coffee/mcp", AUTH):
                raise SystemExit(f"get_menu failed on {url}")
        modes = [
            Mode("A: 1 instance, in-process + SQLite", [a], a.url.removesuffix("/coffee/mcp")),
            Mode("B: 1 instance, Redis + PostgreSQL", [b], b.url.removesuffix("/coffee/mcp")),
            Mode("C: 3 instances + nginx, Redis + PostgreSQL", c, front, [nginx]),
        ]
        rows = {}
        for label, path, script, env in LOADS:
            for connections in (1, 32):
                for mode in modes:
                    load(mode, path, script, env, connections, 1)  # warm-up, not counted
                samples = {m.name: [] for m in modes}
                for _ in range(options.repeat):
                    for mode in modes:  # A B C A B C: drift hits every mode alike
                        r0, p0 = redis_calls(redis_port), pg_commits(admin, ["bench_one", "bench_three"])
                        cpu0 = store_cpu(redis.pid)
                        figures = load(mode, path, script, env, connections, options.duration)
                        cpu1 = store_cpu(redis.pid)
                        calls = max(figures["requests"], 1)
                        r1 = redis_calls(redis_port)
                        figures["redis_trips"] = (r1[0] - r0[0] - 1) / calls  # minus our INFO
                        figures["redis_ops"] = (r1[1] - r0[1] - 1) / calls
                        figures["pg_tx"] = (pg_commits(admin, ["bench_one", "bench_three"]) - p0) / calls
                        figures["redis_cpu_us"] = (cpu1[0] - cpu0[0]) * 1e6 / calls
                        figures["pg_cpu_us"] = (cpu1[1] - cpu0[1]) * 1e6 / calls
                        samples[mode.name].append(figures)
                for name, runs in samples.items():
                    rows[(label, connections, name)] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    finally:
        for server in servers:
            server.stop()
        for process in processes:
            process.terminate()
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
        stop_postgres()

    lines = report(rows, modes, options)
    print("\n".join(lines))
    results = ROOT / "bench/results"
    results.mkdir(exist_ok=True)
    path = results / f"{datetime.datetime.now():%Y-%m-%d-%H%M}-cluster.md"
    path.write_text("\n".join(lines) + "\n")
    print(f"\nwritten to {path.relative_to(ROOT)}")


def report(rows, modes, options):
    cpu = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    base = modes[0].name
    lines = [
        f"# concierge cluster benchmark, {datetime.datetime.now():%Y-%m-%d %H:%M}",
        "",
        f"{cpu} cores shared by everything (wrk, nginx, Redis, PostgreSQL, every instance), loopback, wrk -t1, "
        f"{options.duration:g} s per run, median of {options.repeat} runs taken A B C A B C; "
        f"limit policy {os.environ.get('BENCH_POLICY', 'bucket')}; PostgreSQL with fsync and synchronous_commit on. "
        f"× = figure ÷ mode A in the same run. CPU µs/call: concierge (and nginx in C); "
        f"Redis and PostgreSQL CPU and operations per call measured on the servers.",
        "",
        "| load | conn | mode | req/s | ×req/s | p50 ms | ×p50 | p99 ms | ×p99 | CPU µs/call | ×CPU | Redis trips/call | Redis cmds/call | Redis µs/call | PG commits/call | PG µs/call | errors |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for label, _, _, _ in LOADS:
        for connections in (1, 32):
            a = rows[(label, connections, base)]
            for mode in modes:
                r = rows[(label, connections, mode.name)]
                x = lambda key: r[key] / a[key] if a[key] else float("nan")
                lines.append(
                    f"| {label} | {connections} | {mode.name} | {r['rps']:.0f} | {x('rps'):.2f} | {r['p50_ms']:.2f} | {x('p50_ms'):.2f} | "
                    f"{r['p99_ms']:.2f} | {x('p99_ms'):.2f} | {r['cpu_us']:.0f} | {x('cpu_us'):.2f} | {r['redis_trips']:.2f} | {r['redis_ops']:.2f} | "
                    f"{r['redis_cpu_us']:.0f} | {r['pg_tx']:.2f} | {r['pg_cpu_us']:.0f} | {r['errors']:.0f} |"
                )
    return lines


if __name__ == "__main__":
    main()
