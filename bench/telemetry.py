#!/usr/bin/env python3
"""What operating concierge costs: the same server and calls with telemetry off, with Prometheus
metrics on (scraped every second, as a Prometheus would), and with metrics and OpenTelemetry traces
on (every span exported over OTLP/HTTP to a receiver on loopback). A B C A B C in one run; medians
of calls per second and CPU per call, and each as a ratio to "off".

Run by `bench/run.sh --telemetry`; writes bench/results/<date>-telemetry.md.
"""

import argparse
import datetime
import http.server
import shutil
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import harness  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


class Receiver(http.server.BaseHTTPRequestHandler):
    """An OTLP/HTTP receiver that counts what it is sent and answers 200."""

    received = 0

    def do_POST(self):
        length = int(self.headers.get("content-length", 0))
        self.rfile.read(length)
        Receiver.received += length
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def scraper(url, stop, counts):
    while not stop.is_set():
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                counts["bytes"] = len(response.read())
                counts["scrapes"] += 1
        except OSError:
            pass
        stop.wait(1.0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default="target/release")
    parser.add_argument("--duration", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    bin_dir = (ROOT / options.bin).resolve()
    auth = {"Authorization": f"Bearer {harness.TOKEN}"}

    receiver = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    otlp = f"http://127.0.0.1:{receiver.server_address[1]}"

    modes = []
    for name, extra in [
        ("off", {}),
        ("metrics", {"metrics": True}),
        ("metrics + traces", {"metrics": True, "traces": True}),
        ("metrics + traces 10%", {"metrics": True, "traces": True, "sampled": "0.1"}),
    ]:
        port, metrics_port = harness.free_port(), harness.free_port()
        env = {
            "CONCIERGE_LISTEN": f"127.0.0.1:{port}",
            "CONCIERGE_VAR": tempfile.mkdtemp(prefix="concierge-bench-"),
            "RUST_LOG": "error",
        }
        if extra.get("metrics"):
            env["CONCIERGE_METRICS_LISTEN"] = f"127.0.0.1:{metrics_port}"
        if extra.get("traces"):
            env["OTEL_EXPORTER_OTLP_ENDPOINT"] = otlp
        if extra.get("sampled"):
            env["OTEL_TRACES_SAMPLER"] = "traceidratio"
            env["OTEL_TRACES_SAMPLER_ARG"] = extra["sampled"]
        server = harness.Server(
            f"concierge, {name}",
            [str(bin_dir / "concierge"), "serve", "--config", "concierge-bench.toml"],
            f"http://127.0.0.1:{port}/stateless/mcp",
            auth,
            cwd=ROOT / "bench",
            env=env,
        )
        modes.append((name, server, f"http://127.0.0.1:{metrics_port}/metrics" if extra.get("metrics") else None))

    stop = threading.Event()
    counts = {name: {"scrapes": 0, "bytes": 0} for name, _, _ in modes}
    rows = {}
    try:
        for name, server, metrics in modes:
            server.start()
            if metrics:
                threading.Thread(target=scraper, args=(metrics, stop, counts[name]), daemon=True).start()
        for connections in (1, 32):
            for tool, args in harness.TOOLS:
                for _, server, _ in modes:
                    harness.wrk(server, tool, args, connections, 1)  # warm-up
                samples = {name: [] for name, _, _ in modes}
                for _ in range(options.repeat):
                    for name, server, _ in modes:
                        samples[name].append(harness.wrk(server, tool, args, connections, options.duration))
                for name, runs in samples.items():
                    rows[(name, tool, connections)] = {
                        "rps": statistics.median(r["rps"] for r in runs),
                        "cpu_us": statistics.median(r["cpu_us"] for r in runs),
                        "rps_spread": (min(r["rps"] for r in runs), max(r["rps"] for r in runs)),
                        "errors": sum(r["errors"] for r in runs),
                    }
    finally:
        stop.set()
        for _, server, _ in modes:
            server.stop()
            # A run's audit lines (a gigabyte at these rates) are not kept.
            shutil.rmtree(server.env["CONCIERGE_VAR"], ignore_errors=True)
        receiver.shutdown()

    lines = [
        f"# Telemetry on vs off — {datetime.datetime.now():%Y-%m-%d %H:%M}",
        "",
        "`bench/run.sh --telemetry`: the benchmark's stateless coffee endpoint (token auth, rate limiter,",
        "validation, an audit line per call), four instances started alike: telemetry off; Prometheus",
        "metrics on, scraped every second; metrics and OTLP traces on (every request's spans exported",
        "to a receiver on loopback); the same with 10% of traces sampled (`OTEL_TRACES_SAMPLER=traceidratio`).",
        f"wrk, A B C D × {options.repeat}, {options.duration:g} s each; medians (min–max of calls/s).",
        "",
        "| tool | connections | mode | calls/s | vs off | CPU per call | vs off | errors |",
        "|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    for connections in (1, 32):
        for tool, _ in harness.TOOLS:
            base = rows[("off", tool, connections)]
            for name, _, _ in modes:
                row = rows[(name, tool, connections)]
                low, high = row["rps_spread"]
                lines.append(
                    f"| {tool} | {connections} | {name} | {row['rps']:,.0f} ({low:,.0f}–{high:,.0f}) | "
                    f"{row['rps'] / base['rps']:.3f}× | {row['cpu_us']:.1f} µs | "
                    f"{row['cpu_us'] / base['cpu_us']:.3f}× | {row['errors']} |"
                )
    scraped = ", ".join(
        "{}: {} ({:,} bytes last)".format(n, c["scrapes"], c["bytes"])
        for n, c in counts.items()
        if c["scrapes"]
    )
    lines += ["", f"Scrapes answered: {scraped}; OTLP bytes received: {Receiver.received:,}."]
    print("\n".join(lines))
    results = ROOT / "bench/results"
    results.mkdir(exist_ok=True)
    path = results / f"{datetime.datetime.now():%Y-%m-%d-%H%M}-telemetry.md"
    path.write_text("\n".join(lines) + "\n")
    print(f"\nwritten to {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
