"""Interop check: the Python `mcp` SDK's own OAuth client (`OAuthClientProvider`) against the
demo's /mappy/mcp — discovery from the 401 challenge, dynamic registration, PKCE, and the sign-in
and consent form filled as a browser would (the redirect handler follows the authorization URL
with httpx and submits the form as a sample Mappy owner). The client asks for the scopes the
challenge names; after consent it must see Mappy's write tools and reply to a review.

Prints one line per check and `interop-oauth-client: N passed, M failed`; exits 1 on any failure.
Usage: python oauth_client.py BASE_URL SAMPLE_JSON
"""

import asyncio
import json
import re
import sys
import uuid
from urllib.parse import parse_qs, urlparse

import httpx2
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata

BASE = sys.argv[1].rstrip("/")
SAMPLE = json.load(open(sys.argv[2], encoding="utf-8"))
OWNER = next(u for u in SAMPLE["users"] if u["role"] == "MAIN_USER")
results = []


def check(name, ok, detail=""):
    results.append(ok)
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))


def structured(result):
    return result.structured_content or json.loads(result.content[0].text)


class Memory:
    """Token storage for one run."""

    def __init__(self):
        self.tokens = None
        self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, info):
        self.client = info


class Browser:
    """What a person does with the authorization URL: open it, sign in, allow."""

    def __init__(self):
        self.answer = None
        self.asked_scopes = None

    async def open(self, url):
        self.asked_scopes = parse_qs(urlparse(url).query).get("scope", [""])[0].split()
        async with httpx2.AsyncClient(follow_redirects=False) as http:
            page = await http.get(url)
            csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
            if not csrf:
                raise RuntimeError(f"no sign-in form: {page.status_code} {page.text[:300]}")
            decided = await http.post(url.split("?")[0], data={
                "csrf": csrf.group(1), "username": OWNER["email"], "password": OWNER["password"],
                "decision": "allow"})
            location = decided.headers.get("location")
            if not location:
                raise RuntimeError(f"no redirect after consent: {decided.status_code} {decided.text[:300]}")
            query = parse_qs(urlparse(location).query)
            self.answer = AuthorizationCodeResult(
                code=query["code"][0], state=query.get("state", [None])[0], iss=query.get("iss", [None])[0])

    async def callback(self):
        return self.answer


async def main():
    browser = Browser()
    provider = OAuthClientProvider(
        server_url=f"{BASE}/mappy/mcp",
        client_metadata=OAuthClientMetadata(
            client_name="Python SDK OAuth interop",
            redirect_uris=["http://127.0.0.1:5173/callback"],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=Memory(),
        redirect_handler=browser.open,
        callback_handler=browser.callback,
    )
    transport = streamable_http_client(f"{BASE}/mappy/mcp", http_client=httpx2.AsyncClient(auth=provider))
    async with Client(transport) as client:
        check("the client asked for the write scopes the challenge names",
              "mappy:review:write" in (browser.asked_scopes or []), browser.asked_scopes)
        tools = sorted(t.name for t in (await client.list_tools()).tools)
        check("after consent tools/list shows the write tools", "review_reply" in tools, tools)
        locations = structured(await client.call_tool("location_list", {}))
        location = locations["results"][0]["id"]
        reviews = structured(await client.call_tool("review_list", {"location_id": location}))
        review = reviews["results"][0]["id"]
        key = str(uuid.uuid4())
        arguments = {"review_id": review, "comment": "Cảm ơn bạn! (Python SDK OAuth interop)",
                     "idempotency_key": key}
        answer = await client.call_tool("review_reply", arguments)
        data = structured(answer)
        if data.get("confirmationRequired"):
            answer = await client.call_tool("review_reply", {**arguments, "confirm_token": data["confirmToken"]})
            data = structured(answer)
        check("review_reply works with the token the SDK obtained", answer.is_error is not True, data)
    failed = results.count(False)
    print(f"interop-oauth-client: {len(results) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


asyncio.run(main())
