"""Interop check: langchain-mcp-adapters (the MCP client DeerFlow uses) against /kgqa/mcp.

Loads the tools the way DeerFlow does (MultiServerMCPClient, streamable HTTP, a Bearer header) and
calls two of them. Prints `interop-langchain: N passed, M failed`; exits 1 on any failure.
Usage: python langchain_mcp.py BASE_URL
"""

import asyncio
import json
import sys

from langchain_mcp_adapters.client import MultiServerMCPClient

BASE = sys.argv[1].rstrip("/")
results = []


def check(name, ok, detail=""):
    results.append(ok)
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))


def envelope(output):
    # Tools answer with the JSON text content; adapters return it as a string or content blocks.
    if isinstance(output, tuple):
        output = output[0]
    if isinstance(output, list):
        output = "".join(block.get("text", "") if isinstance(block, dict) else str(block) for block in output)
    return json.loads(output)


async def main():
    client = MultiServerMCPClient(
        {
            "baixinghui_customer_service": {
                "transport": "streamable_http",
                "url": f"{BASE}/kgqa/mcp",
                "headers": {"Authorization": "Bearer demo-token"},
            }
        }
    )
    try:
        tools = {tool.name: tool for tool in await client.get_tools()}
        check("five tools loaded", len(tools) == 5, sorted(tools))
        price = envelope(await tools["query_route_price"].ainvoke({"route_name": "黄小西", "days": 3}))
        check("15.1 query_route_price succeeds", price.get("success") is True, price)
        compare = envelope(
            await tools["compare_routes"].ainvoke({"route_names": ["黄小西", "小西镇梵"], "compare_focus": "老人小孩、不要太累"})
        )
        check("15.3 compare_routes recommends", "黄小西" in compare.get("data", {}).get("customer_reply", ""), compare)
    except Exception as error:
        check("the adapter ran", False, repr(error))
    failed = results.count(False)
    print(f"interop-langchain: {len(results) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


asyncio.run(main())
