"""Interop check: the Python `mcp` SDK's legacy HTTP+SSE client (`mcp.client.sse`) against the
demo's /mappy/sse, with an OAuth access token obtained the way a browser would (registration,
PKCE, the sign-in form as a sample Mappy user).

Prints one line per check and `interop-legacy-sse: N passed, M failed`; exits 1 on any failure.
Usage: python legacy_sse.py BASE_URL SAMPLE_JSON
"""

import asyncio
import base64
import hashlib
import json
import re
import secrets
import sys
from urllib.parse import parse_qs, urlparse

import httpx
from mcp import ClientSession
from mcp.client.sse import sse_client

BASE = sys.argv[1].rstrip("/")
SAMPLE = json.load(open(sys.argv[2], encoding="utf-8"))
RESOURCE = f"{BASE}/mappy/mcp"
REDIRECT = "http://127.0.0.1:5000/callback"
results = []


def check(name, ok, detail=""):
    results.append(ok)
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))


def user(role):
    return next(u for u in SAMPLE["users"] if u["role"] == role)


async def access_token(person, scopes):
    async with httpx.AsyncClient(follow_redirects=False) as http:
        registered = (await http.post(f"{BASE}/register", json={
            "redirect_uris": ["http://127.0.0.1/callback"], "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"], "client_name": "legacy SSE interop"})).json()
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        page = await http.get(f"{BASE}/authorize", params={
            "response_type": "code", "client_id": registered["client_id"], "redirect_uri": REDIRECT,
            "scope": " ".join(scopes), "state": "interop", "code_challenge": challenge,
            "code_challenge_method": "S256", "resource": RESOURCE})
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
        decided = await http.post(f"{BASE}/authorize", data={
            "csrf": csrf, "username": person["email"], "password": person["password"], "decision": "allow"})
        code = parse_qs(urlparse(decided.headers["location"]).query)["code"][0]
        token = (await http.post(f"{BASE}/token", data={
            "grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT,
            "client_id": registered["client_id"], "code_verifier": verifier, "resource": RESOURCE})).json()
        return token["access_token"]


async def main():
    group_user = user("GROUP_USER")
    token = await access_token(group_user, ["mappy:location:read", "mappy:review:read"])
    headers = {"Authorization": f"Bearer {token}"}
    async with sse_client(f"{BASE}/mappy/sse", headers=headers) as (read, write):
        async with ClientSession(read, write) as session:
            info = await session.initialize()
            check("sse initialize names concierge", info.serverInfo.name == "concierge", info.serverInfo)
            tools = sorted(t.name for t in (await session.list_tools()).tools)
            check("sse lists the token's tools only", "location_list" in tools and "review_reply" not in tools, tools)
            listed = await session.call_tool("location_list", {})
            data = listed.structuredContent or json.loads(listed.content[0].text)
            ids = [location["id"] for location in data.get("results", [])]
            check("sse location_list answers the GROUP_USER's tenancy", bool(ids) and not listed.isError, data)
            foreign = await session.call_tool("location_get", {"location_id": 999999})
            check("sse passes the API's 404 through as a tool error", foreign.isError is True, foreign)
    failed = results.count(False)
    print(f"interop-legacy-sse: {len(results) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


asyncio.run(main())
