"""Interop check: the Python `mcp` SDK (2.x) hears a reload of the server it is connected to.

Starts concierge on a config of its own (the coffee app, tokens in a file), connects in both
protocol eras — 2025-11-25 (`legacy`: initialize, a session; `notifications/tools/list_changed`
on the session's GET stream, through the SDK's message handler) and 2026-07-28 (`auto`:
server/discover; the change on a `subscriptions/listen` stream, `Client.listen`) — then edits the
config so the endpoint serves one more tool, and checks the client is told and then lists and
calls it. Prints one line per check and `interop-reload: N passed, M failed`; exits 1 on a failure.
Usage: python reload.py BINARY   (run from the repository's root)
"""

import asyncio
import os
import pathlib
import subprocess
import sys
import tempfile

import httpx2
from mcp import types
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

BINARY = os.path.abspath(sys.argv[1])
MENU = pathlib.Path("examples/coffee/menu.xlsx").resolve()
results = []


def check(name, ok, detail=""):
    results.append(ok)
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))


def config(state, tools):
    listed = ", ".join(f'"coffee.{t}"' for t in tools)
    return f"""[server]
listen = "127.0.0.1:0"

[apps.coffee]
menu = "{MENU}"
orders = "{state}/orders.xlsx"

[[endpoint]]
path = "/coffee/mcp"
tools = [{listed}]
auth = {{ kind = "tokens", file = "mcp-tokens" }}
"""


def start(state):
    tokens = pathlib.Path(state, "mcp-tokens")
    tokens.write_text("python:python-token\n")
    tokens.chmod(0o600)
    path = pathlib.Path(state, "concierge.toml")
    path.write_text(config(state, ["get_menu"]))
    server = subprocess.Popen([BINARY, "serve", "--config", str(path)], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, env={**os.environ, "RUST_LOG": "warn"})
    for line in server.stdout:
        if line.startswith("concierge listening on "):
            return server, path, line.split()[-1]
    raise SystemExit("concierge did not start")


def edit(path, state, tools):
    partial = path.with_suffix(".partial")
    partial.write_text(config(state, tools))
    partial.replace(path)


async def names(client):
    return sorted(t.name for t in (await client.list_tools()).tools)


async def legacy(url, path, state):
    heard = asyncio.Event()

    async def handler(message):
        if isinstance(message, types.ToolListChangedNotification):
            heard.set()

    transport = streamable_http_client(f"{url}/coffee/mcp",
                                       http_client=httpx2.AsyncClient(headers={"Authorization": "Bearer python-token"},
                                                                         timeout=httpx2.Timeout(30.0, read=300.0)))
    async with Client(transport, mode="legacy", message_handler=handler) as client:
        check("[legacy] one tool before", await names(client) == ["get_menu"], await names(client))
        edit(path, state, ["get_menu", "search_menu"])
        try:
            await asyncio.wait_for(heard.wait(), 15)
            check("[legacy] list_changed through the message handler", True)
        except TimeoutError:
            check("[legacy] list_changed through the message handler", False, "nothing within 15 s")
        listed = await names(client)
        check("[legacy] the new tool is listed", listed == ["get_menu", "search_menu"], listed)
        found = await client.call_tool("search_menu", {"query": "кокос"})
        check("[legacy] and callable in the same session", found.is_error is not True, found)


async def modern(url, path, state):
    transport = streamable_http_client(f"{url}/coffee/mcp",
                                       http_client=httpx2.AsyncClient(headers={"Authorization": "Bearer python-token"},
                                                                         timeout=httpx2.Timeout(30.0, read=300.0)))
    async with Client(transport, mode="auto") as client:
        check("[2026] discovered", client.protocol_version == "2026-07-28", client.protocol_version)
        before = await names(client)
        check("[2026] two tools before", before == ["get_menu", "search_menu"], before)
        async with client.listen(tools_list_changed=True) as subscription:
            edit(path, state, ["get_menu", "search_menu", "get_order_status"])
            try:
                async with asyncio.timeout(15):
                    async for _event in subscription:
                        break
                check("[2026] list_changed on subscriptions/listen", True)
            except TimeoutError:
                check("[2026] list_changed on subscriptions/listen", False, "nothing within 15 s")
        listed = await names(client)
        check("[2026] the new tool is listed (the SDK's cache evicted)",
              listed == ["get_menu", "get_order_status", "search_menu"], listed)


async def main():
    with tempfile.TemporaryDirectory() as state:
        server, path, url = start(state)
        try:
            await legacy(url, path, state)
            await modern(url, path, state)
        finally:
            server.terminate()
            server.wait(10)
    failed = results.count(False)
    print(f"interop-reload: {len(results) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


asyncio.run(main())
