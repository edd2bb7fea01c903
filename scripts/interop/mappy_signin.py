"""Mappy's OAuth sign-in the way a browser does it (registration, PKCE, the consent form), for the
interop scripts: the plan's sample user, every scope of the demo's [oauth].scopes."""

import base64
import hashlib
import json
import re
import secrets
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import httpx2

ROOT = Path(__file__).resolve().parents[2]
PLAN = json.loads((Path(__file__).resolve().parent / "walk-plan.json").read_text(encoding="utf-8"))


async def mappy_token(base, client_name):
    """The access token, the person it was granted to, and the scopes granted."""
    oauth = PLAN["oauth"]
    sample = json.loads((ROOT / oauth["sample"]).read_text(encoding="utf-8"))
    person = next(u for u in sample["users"] if u["email"] == oauth["user"])
    resource = f"{base}{oauth['resource']}"
    async with httpx2.AsyncClient(follow_redirects=False, timeout=30) as http:
        registered = (await http.post(f"{base}/register", json={
            "redirect_uris": [oauth["redirectUri"]], "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"], "client_name": client_name})).json()
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        page = await http.get(f"{base}/authorize", params={
            "response_type": "code", "client_id": registered["client_id"], "redirect_uri": oauth["redirectUri"],
            "scope": " ".join(oauth["scopes"]), "state": "walk", "code_challenge": challenge,
            "code_challenge_method": "S256", "resource": resource})
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)
        decided = await http.post(f"{base}/authorize", data={
            "csrf": csrf, "username": person["email"], "password": person["password"], "decision": "allow"})
        code = parse_qs(urlparse(decided.headers["location"]).query)["code"][0]
        token = (await http.post(f"{base}/token", data={
            "grant_type": "authorization_code", "code": code, "redirect_uri": oauth["redirectUri"],
            "client_id": registered["client_id"], "code_verifier": verifier, "resource": resource})).json()
    return token["access_token"], person, set(token.get("scope", "").split())
