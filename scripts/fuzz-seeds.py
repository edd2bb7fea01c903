#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora (fuzz/corpus/<target>/) from examples/ and the tests.

Run from anywhere; it replaces each target's seeds with what the sources give today. The seeds
are checked in; `scripts/fuzz.sh` fuzzes from them into a scratch corpus, and `scripts/fuzz.sh
--minimise` folds what a long run found back in, minimised.
"""
import base64
import hashlib
import json
import pathlib
import shutil

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fuzz" / "corpus"
APP_OF = {"/coffee/mcp": "coffee", "/ski/mcp": "trips", "/ski/mcp/trips": "trips",
          "/kgqa/mcp": "kgqa", "/hotel/mcp": "intake", "/mappy/mcp": "mappy"}


def write(target, seeds):
    folder = CORPUS / target
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for seed in seeds:
        data = seed if isinstance(seed, bytes) else (
            seed if isinstance(seed, str) else json.dumps(seed, ensure_ascii=False)).encode()
        (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)


def placeholders(value):
    """The walk plan's `${saved.path}` references, as a plausible literal."""
    if isinstance(value, str) and value.startswith("${"):
        return "5" if "id" in value.lower() else "x"
    if isinstance(value, dict):
        return {k: placeholders(v) for k, v in value.items()}
    if isinstance(value, list):
        return [placeholders(v) for v in value]
    return value


def walk_calls():
    plan = json.loads((ROOT / "scripts/interop/walk-plan.json").read_text())
    for endpoint in plan["endpoints"]:
        for call in endpoint["calls"]:
            args = {}
            if "argsFile" in call:
                args = json.loads((ROOT / call["argsFile"]).read_text())
            args.update(call.get("args", {}))
            yield APP_OF[endpoint["path"]], call["tool"], placeholders(args)


def mcp_request():
    def rpc(method, params=None, id=1):
        message = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            message["params"] = params
        return message
    initialize = rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "fuzz", "version": "1"}})
    bodies = [
        initialize,
        rpc("tools/list"),
        rpc("tools/call", {"name": "echo", "arguments": {"text": "hallo", "count": 3,
                                                        "items": [{"name": "a", "qty": 2}]}}),
        rpc("tools/call", {"name": "echo", "arguments": {"text": 5}}, id="string-id"),
        rpc("tools/call", {"name": "nope", "arguments": {}}),
        rpc("tools/call", {"name": "echo", "arguments": {"text": "t"},
                           "_meta": {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
                                     "progressToken": 7}}),
        rpc("ping"),
        rpc("resources/list"),
        rpc("prompts/list"),
        rpc("logging/setLevel", {"level": "debug"}),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 3, "result": {}},
        [rpc("tools/list", id=1), rpc("ping", id=2)],
        [],
        {"jsonrpc": "1.0", "id": None, "method": "tools/list"},
    ]
    seeds = []
    for selector in (0, 1, 8, 9):
        for body in bodies:
            seeds.append(bytes([selector]) + json.dumps(body, ensure_ascii=False).encode())
    return seeds


def jwt_tokens():
    """Tokens signed by the JWT target's fixed key (seed [7; 32]) over its two claim sets: the
    server's own encoding (EdDSA, kid = first 16 of base64url(sha256(x)))."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives import serialization
    b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
    key = Ed25519PrivateKey.from_private_bytes(bytes([7] * 32))
    public = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    kid = b64(hashlib.sha256(b64(public).encode()).digest())[:16]
    header = {"typ": "at+jwt", "alg": "EdDSA", "kid": kid}
    base = {"iss": "https://mcp.example", "aud": "https://mcp.example/mappy/mcp",
            "client_id": "fuzz-client", "iat": 1764000000, "nbf": 1764000000, "exp": 4102444800}
    sets = [dict(base, sub="alice", scope="mappy:read mappy:write", jti="jti-alice", role="owner"),
            dict(base, sub="fuzz-client", scope="mappy:read", jti="jti-fuzz-client", role=None)]
    tokens = []
    for claims in sets:
        signing_input = b64(json.dumps(header).encode()) + "." + b64(json.dumps(claims).encode())
        tokens.append(signing_input + "." + b64(key.sign(signing_input.encode())))
    return tokens


def main():
    examples = ROOT / "examples"
    feed = examples / "ski/feed"
    write("mcp_request", mcp_request())
    write("tool_arguments", [f"{app}.{tool}\n{json.dumps(args, ensure_ascii=False)}"
                             for app, tool, args in walk_calls()])
    kgqa = [f"{tool}\n{json.dumps(args, ensure_ascii=False)}"
            for app, tool, args in walk_calls() if app == "kgqa"]
    kgqa += ["ask_customer_service\n" + json.dumps(
        {"question": "{{ vars.graph }}{% for x in range(9) %}{{ x }}{% endfor %}",
         "session_id": "{{ call.client }}", "customer_context": {"n": "{{ 7*7 }}"}})]
    write("kgqa_request", kgqa)
    write("typo3_manifest", [(feed / "manifest.json").read_bytes()])
    records = json.loads((feed / "records.json").read_text())["records"]
    by_kind = {}
    for record in records:
        by_kind.setdefault(record["type"], []).append(record)
    write("typo3_records", [{"records": group[:3]} for group in by_kind.values()])
    pages = sorted(p for p in (feed / "pages").rglob("*") if p.is_file())
    write("html_markdown", [p.read_bytes() for p in pages[:: max(1, len(pages) // 12)]]
          + [b"<p>Hallo <script>alert(1)</script><style>p{}</style><b>Welt</b></p>"])
    export = json.loads((examples / "ski/export/products.json").read_text())
    write("product_export", [dict(export, products=export["products"][i:i + 2])
                             for i in range(0, min(len(export["products"]), 12), 2)])
    write("buspro_hotels", [(examples / "ski/buspro/hotel.xml").read_bytes()])
    write("hotel_submit", [p.read_bytes() for p in sorted((examples / "hotel").glob("*.json"))])
    client = "client_id=fuzz-client&redirect_uri=https%3A%2F%2Fapp.example%2Fcallback"
    pkce = "code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256"
    write("oauth_authorize", [
        f"response_type=code&{client}&{pkce}&scope=mappy%3Aread&state=xyz&resource=https%3A%2F%2Fmcp.example%2Fmappy%2Fmcp",
        f"response_type=code&{client}&{pkce}",
        f"response_type=token&{client}&state=%3Cscript%3E",
        "response_type=code&client_id=https%3A%2F%2Fapp.example%2Fclient.json&redirect_uri=https%3A%2F%2Fapp.example%2Fcb&" + pkce,
    ])
    write("oauth_token", [
        "grant_type=authorization_code&code=abc&redirect_uri=https%3A%2F%2Fapp.example%2Fcallback&client_id=fuzz-client&code_verifier=dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
        "grant_type=refresh_token&refresh_token=xyz&client_id=fuzz-client&resource=https%3A%2F%2Fmcp.example%2Fmappy%2Fmcp",
        "grant_type=client_credentials&client_id=fuzz-client&client_secret=s&scope=mappy%3Aread",
    ])
    write("oauth_register", [
        {"redirect_uris": ["https://claude.ai/api/mcp/auth_callback"], "token_endpoint_auth_method": "client_secret_post",
         "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"], "client_name": "Claude"},
        {"redirect_uris": ["http://127.0.0.1:33418/callback", "https://vscode.dev/redirect"],
         "token_endpoint_auth_method": "none", "client_name": "Visual Studio Code"},
        {"redirect_uris": ["javascript:alert(1)"], "client_name": "x" * 300},
    ])
    write("oauth_client_metadata", [
        {"client_id": "https://app.example/oauth/client.json", "client_name": "App",
         "redirect_uris": ["https://app.example/callback", "http://127.0.0.1/cb"],
         "token_endpoint_auth_method": "none"},
        {"client_id": "https://app.example/oauth/client.json", "redirect_uris": ["https://app.example/cb"],
         "token_endpoint_auth_method": "private_key_jwt"},
    ])
    write("oauth_jwt", jwt_tokens())
    write("config", [(ROOT / "concierge.toml").read_bytes()]
          + [p.read_bytes() for p in sorted((ROOT / "bench").glob("*.toml"))]
          + ['[server]\nlisten = "${FUZZ_LISTEN}"\n[limits]\nx = "${APP_TOKEN:-60/minute}"\n'])
    write("coffee_menu", [(examples / "coffee/menu.xlsx").read_bytes()])


if __name__ == "__main__":
    main()
