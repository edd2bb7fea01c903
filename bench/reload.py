"""Reload side by side with steady serving: how long a reload takes from the trigger to the new
deployment serving, and what it does to the calls under way — on the demo config and on a
config of 200 tools (the coffee app plus a SQL instance of 200 statements on SQLite).

For each config: a steady run (wrk, 32 connections, 10 s, a coffee `search_menu` call), then the
same run while the config is changed and reloaded every 0.5 s (`concierge reload`, SIGHUP: the
endpoint's instructions alternate, so every reload applies a change and tells listening
clients). Reported: each reload's own time (the server's `took_ms`: file read, build, check,
swap), the wall time of `concierge reload` (signal to verdict read back), and the calls' p99 and
slowest call in both runs. Server on core 0, wrk on core 1. Called by `bench/run.sh --reload`;
writes bench/results/<date>-reload.md.
"""

import argparse
import datetime
import json
import re
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from harness import SERVER_CORE, Server, free_port, wrk  # noqa: E402

ARGS = '{"query":"кокос"}'


def two_hundred(state):
    """A config of the coffee app and 200 SQL tools; returns its text."""
    script = Path(state, "stock.sql")
    script.write_text("CREATE TABLE stock (id INTEGER PRIMARY KEY, name TEXT NOT NULL, shelf INTEGER NOT NULL);\n"
                      + "".join(f"INSERT INTO stock (name, shelf) VALUES ('item {i}', {i % 17});\n" for i in range(500)))
    tools = "".join(f"""
[[apps.stock.tool]]
name = "shelf_{i}"
description = "The items on shelf {i % 17}, query {i}."
sql = "SELECT id, name FROM stock WHERE shelf = {i % 17} ORDER BY id LIMIT 20"
""" for i in range(200))
    return f"""[server]
listen = "${{CONCIERGE_LISTEN}}"
pid_file = "{state}/concierge.pid"

[apps.coffee]
menu = "{ROOT}/examples/coffee/menu.xlsx"
orders = "{state}/orders.xlsx"

[apps.stock]
kind = "sql"
url = "sqlite://{state}/stock.db"
create_from = "{script}"
{tools}
[[endpoint]]
path = "/coffee/mcp"
tools = ["coffee.*", "stock.*"]
instructions = "Coffee and stock."
auth = {{ kind = "tokens", env = "BENCH_TOKENS", default = "bench:bench-token" }}
session = "stateless"
"""


def demo(state):
    """The demo's own config, its per-client limits lifted (a minute's budget would refuse the
    load long before the run ends: the calls are to be answered, not counted)."""
    text = (ROOT / "concierge.toml").read_text()
    for limit in ("chatbot_mcp", "agent_mcp", "shop_mcp"):
        text = re.sub(rf'^{limit} = ".*"$', f'{limit} = "1000000/second"', text, flags=re.M)
    return text


def run(binary, name, text, state, seconds, toggle):
    # The demo names its files relative to the repository's root: its copy lives there.
    config = ROOT / ".reload-bench.toml" if name == "demo" else Path(state, f"{name}.toml")
    config.write_text(text)
    port = free_port()
    token = "bench-token" if name != "demo" else "demo-token"
    # Calls in the 2026-07-28 era: they need no session on any endpoint (the demo's coffee
    # endpoint is stateful).
    server = Server(name, [binary, "serve", "--config", str(config)], f"http://127.0.0.1:{port}/coffee/mcp",
                    {"Authorization": f"Bearer {token}"}, cwd=ROOT,
                    env={"CONCIERGE_LISTEN": f"127.0.0.1:{port}", "CONCIERGE_VAR": state, "RUST_LOG": "error"},
                    era="2026-07-28")
    server.process = subprocess.Popen(["taskset", "-c", SERVER_CORE, *server.command], cwd=ROOT,
                                      env={**os.environ, **server.env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as answer:
                if json.loads(answer.read())["status"] == "ok":
                    break
        except Exception:
            pass
        if time.monotonic() > deadline or server.process.poll() is not None:
            raise SystemExit(f"{name} did not become healthy")
        time.sleep(0.1)
    try:
        steady = wrk(server, "search_menu", ARGS, 32, seconds, pin=True)
        took, wall, failures, stop = [], [], [], threading.Event()

        def reloads():
            flip = False
            while not stop.is_set():
                flip = not flip
                config.write_text(toggle(text, flip))
                began = time.monotonic()
                out = subprocess.run([binary, "reload", "--config", str(config)], capture_output=True, text=True)
                wall.append((time.monotonic() - began) * 1000)
                if out.returncode != 0:
                    failures.append(out.stdout + out.stderr)
                    return
                status = json.loads(Path(state, "concierge.pid.status").read_text())
                took.append(status["took_ms"])
                stop.wait(0.5)

        thread = threading.Thread(target=reloads)
        time.sleep(0.2)
        thread.start()
        during = wrk(server, "search_menu", ARGS, 32, seconds, pin=True)
        stop.set()
        thread.join()
        if failures:
            raise SystemExit(f"{name}: a reload failed: {failures[0]}")
        return steady, during, took, wall
    finally:
        server.stop()
        if name == "demo":
            config.unlink(missing_ok=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default="target/release")
    parser.add_argument("--seconds", type=int, default=10)
    options = parser.parse_args()
    binary = str((ROOT / options.bin / "concierge").resolve())
    rows = []
    # What each reload changes: an endpoint's instructions (instances carried over), or one of
    # the 200 tools' descriptions (the SQL instance built again: 200 statements).
    for name, make, line in (
        ("demo", demo, 'instructions = """'),
        ("200 tools", two_hundred, 'instructions = "'),
        ("200 tools, instance rebuilt", two_hundred, 'description = "The items on shelf 0, query 0.'),
    ):
        state = tempfile.mkdtemp(prefix="concierge-reload-bench-")
        text = make(state)
        if name == "demo":
            text = text.replace('pid_file = "${CONCIERGE_VAR:-var}/concierge.pid"', f'pid_file = "{state}/concierge.pid"')

        def toggle(text, flip, line=line):
            return text.replace(line, line + ("Changed. " if flip else ""), 1)

        steady, during, took, wall = run(binary, name.replace(" ", "-").replace(",", ""), text, state, options.seconds, toggle)
        rows.append((name, steady, during, took, wall))
        subprocess.run(["rm", "-rf", state])
    stamp = datetime.datetime.now().strftime("%Y-%m-%d-%H%M")
    lines = [f"# Reload, {stamp}", "",
             f"`bench/run.sh --reload`: wrk 32 connections {options.seconds} s steady, then {options.seconds} s while the config "
             "is changed and reloaded every 0.5 s; server on core 0, wrk on core 1 "
             "(`concierge reload` itself unpinned). Limits lifted so every call is answered.", "",
             "| config | reloads | took_ms median | took_ms max | `concierge reload` wall ms median | steady p99 ms | steady max ms | during p99 ms | during max ms | errors during |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, steady, during, took, wall in rows:
        lines.append(f"| {name} | {len(took)} | {statistics.median(took):.0f} | {max(took)} | {statistics.median(wall):.0f} | "
                     f"{steady['p99_ms']:.2f} | {steady['max_ms']:.2f} | {during['p99_ms']:.2f} | {during['max_ms']:.2f} | {during['errors']} |")
    lines.append("")
    for name, steady, during, took, wall in rows:
        lines.append(f"- {name}: reload {max(took)} ms at most (goal ≤ 100); the slowest call during reloads "
                     f"{during['max_ms']:.2f} ms against a steady p99 of {steady['p99_ms']:.2f} ms "
                     f"({during['max_ms'] / steady['p99_ms']:.2f}×, goal ≤ 2×); p99 during {during['p99_ms']:.2f} ms")
    out = ROOT / "bench/results" / f"{stamp}-reload.md"
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
