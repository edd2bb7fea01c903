"""Interop check: the Python `mcp` SDK (2.x) against concierge's /kgqa/mcp and /coffee/mcp.

Runs both ways the SDK connects: `auto` (probes server/discover, falls back to initialize) and
`legacy` (initialize handshake, sessions). Prints one line per check and a closing
`interop-python: N passed, M failed`; exits 1 on any failure.
Usage: python python_mcp.py BASE_URL   (e.g. http://127.0.0.1:8080)
"""

import asyncio
import json
import sys

import httpx2
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

BASE = sys.argv[1].rstrip("/")
results = []


def check(name, ok, detail=""):
    results.append(ok)
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))


def structured(result):
    return result.structured_content or json.loads(result.content[0].text)


async def kgqa(mode):
    headers = {"Authorization": "Bearer demo-token"}
    transport = streamable_http_client(f"{BASE}/kgqa/mcp", http_client=httpx2.AsyncClient(headers=headers))
    async with Client(transport, mode=mode) as client:
        tools = await client.list_tools()
        names = sorted(t.name for t in tools.tools)
        check(f"[{mode}] kgqa lists five tools", len(names) == 5, names)
        price = await client.call_tool("query_route_price", {"route_name": "黄小西", "days": 3})
        envelope = structured(price)
        check(f"[{mode}] 15.1 query_route_price succeeds", envelope.get("success") is True, envelope)
        check(f"[{mode}] 15.1 keeps risk_notes", bool(envelope.get("data", {}).get("risk_notes")), envelope)
        fallback = structured(await client.call_tool("ask_customer_service", {"question": "美酒中秋有什么活动或者套餐？"}))
        check(
            f"[{mode}] 15.4 controlled fallback",
            fallback.get("data", {}).get("response_mode") == "llm_graph_qa_controlled_failure",
            fallback,
        )
        bad = await client.call_tool("query_route_price", {})
        check(f"[{mode}] a missing argument is an isError result", bad.is_error is True, bad)


async def coffee(mode):
    headers = {"Authorization": "Bearer demo-token"}
    transport = streamable_http_client(f"{BASE}/coffee/mcp", http_client=httpx2.AsyncClient(headers=headers))
    async with Client(transport, mode=mode) as client:
        menu = structured(await client.call_tool("search_menu", {"query": "кокос"}))
        check(f"[{mode}] coffee search_menu", menu["results"][0]["drink"] == "Кокосовый латте", menu)


async def main():
    for mode in ("auto", "legacy"):
        for scenario in (kgqa, coffee):
            try:
                await scenario(mode)
            except Exception as error:  # a crash is a failed check, with its reason
                check(f"[{mode}] {scenario.__name__} ran", False, repr(error))
    failed = results.count(False)
    print(f"interop-python: {len(results) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


asyncio.run(main())
