"""Mappy's confirmable write confirmed over MRTR (MCP 2026-07-28), with the Python SDK 2.3.

A client that declares elicitation is asked through a form (`resultType: "input_required"`) and
writes once when the user confirms; one whose user declines writes nothing; a `requestState`
handed back twice, or changed, is refused; a client without elicitation keeps the confirm-token
round trip. With the URLs of two more instances of one deployment (sharing its state), a state
asked for on the first writes on the second and is refused on the third.
Prints one line per check and `mrtr-python: N passed, M failed`; exits 1 on any failure.
Usage: python mrtr_confirm.py BASE_URL [SECOND_INSTANCE_URL THIRD_INSTANCE_URL]
"""

import asyncio
import json
import sys
import uuid

import httpx2
import mappy_signin
from mcp import types
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

BASE = sys.argv[1].rstrip("/")
ENDPOINT = f"{BASE}/mappy/mcp"
OTHERS = [url.rstrip("/") for url in sys.argv[2:4]]
TOOL = "location_hours_update"
results = []


def check(name, ok, detail=""):
    results.append(bool(ok))
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {detail}"), flush=True)
    return bool(ok)


def document(result):
    return json.loads(result.content[0].text)


def connect(token, elicitation=None, endpoint=ENDPOINT):
    transport = streamable_http_client(
        endpoint, http_client=httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60))
    return Client(transport, mode="auto", elicitation_callback=elicitation)


async def hours_call(client):
    """Arguments of a real write that changes nothing: a location's own hours again."""
    groups = document(await client.call_tool("group_list", {}))
    locations = document(await client.call_tool("location_list", {"group_id": groups["results"][0]["id"]}))
    location = document(await client.call_tool("location_get", {"location_id": locations["results"][0]["id"]}))
    return {"location_id": location["id"], "regular_hours": location["regular_hours"], "idempotency_key": str(uuid.uuid4())}


async def main():
    token, _, _ = await mappy_signin.mappy_token(BASE, "interop mrtr (python)")
    asked = []

    async def confirming(context, params):
        asked.append(params)
        return types.ElicitResult(action="accept", content={"confirm": True})

    async def declining(context, params):
        asked.append(params)
        return types.ElicitResult(action="decline")

    # A user who confirms: one form, then the write.
    async with connect(token, confirming) as client:
        check("speaks 2026-07-28", client.protocol_version == "2026-07-28", client.protocol_version)
        args = await hours_call(client)
        result = await client.call_tool(TOOL, args)
        written = document(result)
        check("a confirmed write is written", not result.is_error and not written.get("confirmationRequired")
              and not written.get("idempotentReplay"), json.dumps(written)[:300])
        check("the user was asked once, by a form naming the tool",
              len(asked) == 1 and TOOL in asked[0].message and asked[0].requested_schema["properties"].get("confirm"),
              repr(asked))

    # A user who declines: nothing is written, and the key stays free for a later confirmation.
    asked.clear()
    async with connect(token, declining) as client:
        args = await hours_call(client)
        result = await client.call_tool(TOOL, args)
        check("a declined write answers confirmation_declined", result.is_error
              and document(result).get("error", {}).get("code") == "confirmation_declined", result.content[0].text[:300])
    async with connect(token, confirming) as client:
        result = await client.call_tool(TOOL, args)
        check("the declined key writes fresh once confirmed (nothing was written before)",
              not result.is_error and not document(result).get("idempotentReplay"), result.content[0].text[:300])

    # Driving the rounds by hand: a state used once, then handed back again or changed.
    async with connect(token, confirming) as client:
        args = await hours_call(client)
        first = await client.session.call_tool(TOOL, args, allow_input_required=True)
        check("a declaring client gets input_required with a requestState",
              isinstance(first, types.InputRequiredResult) and bool(first.request_state), repr(first)[:300])
        accept = {"confirm": {"action": "accept", "content": {"confirm": True}}}
        tampered = first.request_state[:-2] + ("AA" if not first.request_state.endswith("AA") else "BB")
        refused = await client.session.call_tool(TOOL, args, input_responses=accept, request_state=tampered)
        check("a changed requestState is refused", refused.is_error
              and document(refused)["error"]["code"] == "request_state_invalid", refused.content[0].text[:300])
        done = await client.session.call_tool(TOOL, args, input_responses=accept, request_state=first.request_state)
        check("the state handed back writes", not done.is_error and not document(done).get("idempotentReplay"),
              done.content[0].text[:300])
        again = await client.session.call_tool(TOOL, args, input_responses=accept, request_state=first.request_state)
        check("the same state handed back again is refused", again.is_error
              and document(again)["error"]["code"] == "request_state_used", again.content[0].text[:300])
        other = dict(args, idempotency_key=str(uuid.uuid4()))
        moved = await client.session.call_tool(TOOL, other, input_responses=accept, request_state=first.request_state)
        check("a state for other arguments is refused", moved.is_error
              and document(moved)["error"]["code"] == "request_state_invalid", moved.content[0].text[:300])

    # Across instances: asked on the first, written on the second, refused on the third.
    if len(OTHERS) == 2:
        accept = {"confirm": {"action": "accept", "content": {"confirm": True}}}
        async with connect(token, confirming) as first, \
                connect(token, confirming, f"{OTHERS[0]}/mappy/mcp") as second, \
                connect(token, confirming, f"{OTHERS[1]}/mappy/mcp") as third:
            args = await hours_call(first)
            asked = await first.session.call_tool(TOOL, args, allow_input_required=True)
            done = await second.session.call_tool(TOOL, args, input_responses=accept, request_state=asked.request_state)
            check("a state asked for on one instance writes on another", not done.is_error
                  and not document(done).get("idempotentReplay"), done.content[0].text[:300])
            again = await third.session.call_tool(TOOL, args, input_responses=accept, request_state=asked.request_state)
            check("and is refused on a third", again.is_error
                  and document(again)["error"]["code"] == "request_state_used", again.content[0].text[:300])

    # A client without elicitation: the confirm-token round trip, as before.
    async with connect(token) as client:
        args = await hours_call(client)
        preview = document(await client.call_tool(TOOL, args))
        check("without elicitation: a preview with a confirmToken", preview.get("confirmationRequired")
              and bool(preview.get("confirmToken")), json.dumps(preview)[:300])
        result = await client.call_tool(TOOL, dict(args, confirm_token=preview["confirmToken"]))
        check("and the token writes", not result.is_error, result.content[0].text[:300])

    failed = results.count(False)
    print(f"mrtr-python: {len(results) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


asyncio.run(main())
