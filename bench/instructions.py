"""Instructions per tools/call under callgrind: concierge (static tokens in both protocol eras,
OAuth) beside bare rmcp.

wrk's req/s and CPU µs move with whatever else the machine runs; callgrind counts instructions,
the same for the same binary and requests however busy the machine is. Each server runs under
`valgrind --tool=callgrind`; a warm-up of 3 s, then the counters are zeroed, one wrk connection
sends calls for 10 s, the counters are dumped, and everything the process executed meanwhile
(every thread: hyper, rmcp, the tool, the audit writer) is divided by the calls wrk counted.
Called by bench/instructions.sh; prints a table and the functions that cost most per call.
With `--federation`: concierge federating bench/federation.py's FastMCP server (`kind = "mcp"`,
bench/concierge-federation-bench.toml), called by a client of each era, beside bench/peers/json-relay
relaying the same calls on the same stack (axum, reqwest, serde_json) reading only the JSON; only
the relaying process runs under callgrind, the upstream runs as it is.
"""

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from harness import MENU, WRK_SCRIPT, free_port  # noqa: E402


def exclusive_costs(path):
    """Each function's own instructions in a callgrind dump (calls' inclusive costs left out)."""
    names, cost, fn, skip = {}, collections.Counter(), None, False
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        m = re.match(r"(c?)fn=\((\d+)\)(?: (.*))?$", line)
        if m:
            if m.group(3):
                names[m.group(2)] = m.group(3)
            if not m.group(1):
                fn = names.get(m.group(2), m.group(2))
            continue
        if line.startswith("calls="):
            skip = True
            continue
        if line and (line[0].isdigit() or line[0] in "+-*"):
            if skip:
                skip = False
            else:
                cost[fn] += int(line.split()[-1])
    return cost


def wrk(url, token, seconds, era=""):
    env = {**os.environ, "BENCH_TOOL": "search_menu", "BENCH_ARGS": '{"query":"кокос"}', "BENCH_TOKEN": token, "BENCH_SESSION": "",
           "BENCH_ERA": era}
    out = subprocess.run(["wrk", "-t1", "-c1", f"-d{seconds}s", "-s", str(WRK_SCRIPT), url], env=env, capture_output=True, text=True).stdout
    return int(re.search(r"BENCH requests=(\d+)", out).group(1))


def measure(name, command, url, token, env, cwd, scratch, era=""):
    out = Path(scratch) / f"{name}.callgrind"
    process = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *command], cwd=cwd,
                               env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                wrk(url, token, 1)
                break
            except AttributeError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"{name} did not answer under valgrind")
                time.sleep(1)
        wrk(url, token, 3, era)
        subprocess.run(["callgrind_control", "-z", str(process.pid)], capture_output=True, check=True)
        calls = wrk(url, token, 10, era)
        subprocess.run(["callgrind_control", "-d", str(process.pid)], capture_output=True, check=True)
        dump = Path(f"{out}.1")
        for _ in range(100):
            if dump.exists() and dump.stat().st_size > 0:
                break
            time.sleep(0.2)
        time.sleep(1)
        return calls, exclusive_costs(dump)
    finally:
        process.kill()
        process.wait()


def oauth_token(bin_dir, port, state):
    """As the harness does: a client_credentials token from a normal run on the same state."""
    env = {**os.environ, "CONCIERGE_VAR": state, "CONCIERGE_LISTEN": f"127.0.0.1:{port}", "RUST_LOG": "error"}
    server = subprocess.Popen([str(bin_dir / "concierge"), "serve", "--config", "concierge-bench.toml"], cwd=ROOT / "bench", env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        from harness import oauth_token as mint
        deadline = time.monotonic() + 30
        while True:
            try:
                return mint(bin_dir, port, state)
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
    finally:
        server.terminate()
        server.wait()


def federation(bin_dir, scratch, state):
    """concierge federating the FastMCP server, a client of each era: {name: (calls, costs)}."""
    import federation as fed
    port = free_port()
    upstream = fed.fastmcp()
    fed.start(upstream, "search_menu")
    env = {"CONCIERGE_LISTEN": f"127.0.0.1:{port}", "CONCIERGE_VAR": state, "BENCH_UPSTREAM_URL": upstream.url, "RUST_LOG": "error"}
    command = [str(bin_dir / "concierge"), "serve", "--config", "concierge-federation-bench.toml"]
    results = {}
    try:
        for era in ("", "2026-07-28"):
            name = f"concierge (mcp), a {era or '2025-11-25'} client"
            results[name] = measure(f"federation{len(results)}", command, f"http://127.0.0.1:{port}/mcp", "bench-token", env,
                                    ROOT / "bench", scratch, era)
            print(f"instructions: {name}: {results[name][0]} calls", file=sys.stderr)
        relay_port = free_port()
        relay = [str(bin_dir / "json-relay"), f"127.0.0.1:{relay_port}", upstream.url]
        name = "json-relay (axum + reqwest, JSON read), a 2025-11-25 client"
        results[name] = measure("json-relay", relay, f"http://127.0.0.1:{relay_port}/mcp", "", {}, ROOT, scratch)
        print(f"instructions: {name}: {results[name][0]} calls", file=sys.stderr)
    finally:
        upstream.stop()
    return results


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default="target/release")
    parser.add_argument("--top", type=int, default=15, help="functions listed per server")
    parser.add_argument("--federation", action="store_true", help="concierge federating a FastMCP server instead")
    options = parser.parse_args()
    bin_dir = (ROOT / options.bin).resolve()
    scratch = tempfile.mkdtemp(prefix="concierge-instructions-")
    state = tempfile.mkdtemp(prefix="concierge-instructions-var-")
    if options.federation:
        results = federation(bin_dir, scratch, state)
        print("| server | search_menu calls | instructions a call |")
        print("|---|---:|---:|")
        for name, (calls, costs) in results.items():
            print(f"| {name} | {calls} | {sum(costs.values()) / calls:,.0f} |")
        top(results, options.top)
        return
    port, bare_port = free_port(), free_port()
    concierge_env = {"CONCIERGE_LISTEN": f"127.0.0.1:{port}", "CONCIERGE_VAR": state, "RUST_LOG": "error"}
    token = oauth_token(bin_dir, port, state)
    servers = [
        ("bare rmcp", [str(bin_dir / "rmcp-bare"), f"127.0.0.1:{bare_port}", str(MENU)], f"http://127.0.0.1:{bare_port}/mcp", "", {}, ROOT),
        ("concierge stateless", [str(bin_dir / "concierge"), "serve", "--config", "concierge-bench.toml"],
         f"http://127.0.0.1:{port}/stateless/mcp", "bench-token", concierge_env, ROOT / "bench"),
        ("concierge OAuth (JWT)", [str(bin_dir / "concierge"), "serve", "--config", "concierge-bench.toml"],
         f"http://127.0.0.1:{port}/oauth/mcp", token, concierge_env, ROOT / "bench"),
        ("concierge stateless, 2026-07-28", [str(bin_dir / "concierge"), "serve", "--config", "concierge-bench.toml"],
         f"http://127.0.0.1:{port}/stateless/mcp", "bench-token", concierge_env, ROOT / "bench"),
    ]
    results = {}
    for name, command, url, bearer, env, cwd in servers:
        era = "2026-07-28" if name.endswith("2026-07-28") else ""
        calls, costs = measure(name.split()[0] + str(len(results)), command, url, bearer, env, cwd, scratch, era)
        results[name] = (calls, costs)
        print(f"instructions: {name}: {calls} calls, {sum(costs.values()) / calls:,.0f} a call", file=sys.stderr)
    bare = sum(results["bare rmcp"][1].values()) / results["bare rmcp"][0]
    static = sum(results["concierge stateless"][1].values()) / results["concierge stateless"][0]
    print("| server | search_menu calls | instructions a call | × bare rmcp | × concierge stateless |")
    print("|---|---:|---:|---:|---:|")
    for name, (calls, costs) in results.items():
        per = sum(costs.values()) / calls
        print(f"| {name} | {calls} | {per:,.0f} | {per / bare:.2f} | {per / static:.2f} |")
    top(results, options.top)


def top(results, count):
    for name, (calls, costs) in results.items():
        print(f"\n{name}, the functions that cost most a call:")
        for fn, cost in costs.most_common(count):
            print(f"  {cost / calls:9,.0f}  {fn[:120]}")


if __name__ == "__main__":
    main()
