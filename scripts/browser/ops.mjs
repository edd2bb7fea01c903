// Drives the ops console (/ops) in headless Chromium as an operator would: signs in (a wrong
// token first), reads the overview, triggers the ski sync, filters the audit trail and opens one
// call's record, revokes an OAuth client; and checks that a form without the CSRF token or from
// another origin changes nothing. Run by scripts/ops-browser.sh, which starts the demo.
//
//   node ops.mjs --base URL --token OPS_TOKEN --client-id REGISTERED_CLIENT [--screenshots DIR]
//
// Exits 1 with a list of what failed; prints one line per check passed.
import { parseArgs } from "node:util";
import crypto from "node:crypto";
import http from "node:http";
import { launch } from "./chromium.mjs";

const { values: a } = parseArgs({
  options: {
    base: { type: "string" },
    token: { type: "string" },
    "client-id": { type: "string" },
    screenshots: { type: "string" },
  },
});
for (const key of ["base", "token", "client-id"]) {
  if (!a[key]) throw new Error(`--${key} is required`);
}

const failures = [];
const check = (ok, what, detail = "") => {
  if (ok) console.log(`  ok   ${what}`);
  else {
    console.log(`  FAIL ${what}${detail ? `: ${detail}` : ""}`);
    failures.push(what);
  }
};

// Traffic for the console to show: a session on the coffee endpoint, three searches, one call
// with a wrong argument, and one request with a wrong token.
async function mcp(session, body, token = "demo-token") {
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    authorization: `Bearer ${token}`,
  };
  if (session) {
    headers["mcp-session-id"] = session;
    headers["mcp-protocol-version"] = "2025-11-25";
  }
  return fetch(`${a.base}/coffee/mcp`, { method: "POST", headers, body: JSON.stringify(body) });
}
const opened = await mcp(null, {
  jsonrpc: "2.0", id: 1, method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "ops-test", version: "1" } },
});
const session = opened.headers.get("mcp-session-id");
await opened.text();
await (await mcp(session, { jsonrpc: "2.0", method: "notifications/initialized" })).text();
let id = 2;
for (const query of ["латте", "чай", "капучино"]) {
  await (await mcp(session, { jsonrpc: "2.0", id: id++, method: "tools/call", params: { name: "search_menu", arguments: { query } } })).text();
}
await (await mcp(session, { jsonrpc: "2.0", id: id++, method: "tools/call", params: { name: "search_menu", arguments: { query: 5 } } })).text();
await (await mcp(session, { jsonrpc: "2.0", id: id++, method: "tools/call", params: { name: "create_order", arguments: { items: [{ drink: "капучино", qty: 2 }] } } })).text();
const refused = await mcp(null, { jsonrpc: "2.0", id: 1, method: "tools/list" }, "wrong-token");
check(refused.status === 401, "a wrong MCP token is refused (traffic for the console)");
// The audit writes off the request path, within a fraction of a second.
await new Promise((resolve) => setTimeout(resolve, 700));

const browser = await launch();
const shot = async (page, name) => {
  if (a.screenshots) await page.screenshot({ path: `${a.screenshots}/${name}.png`, fullPage: true });
};

// A person signs in to Mappy through the demo's authorization server (the registered client, with
// PKCE, its loopback redirect on a port of its own): a live refresh-token family for the console.
async function signInToMappy(context) {
  const b64url = (bytes) => bytes.toString("base64url");
  const verifier = b64url(crypto.randomBytes(32));
  const challenge = b64url(crypto.createHash("sha256").update(verifier).digest());
  const listener = http.createServer((req, res) => res.writeHead(200).end("back at the client"));
  await new Promise((ok) => listener.listen(0, "127.0.0.1", ok));
  const redirect = `http://127.0.0.1:${listener.address().port}/callback`;
  const url = new URL(`${a.base}/authorize`);
  for (const [k, v] of Object.entries({
    response_type: "code", client_id: a["client-id"], redirect_uri: redirect, state: "s1",
    code_challenge: challenge, code_challenge_method: "S256", scope: "mappy:location:read",
    resource: `${a.base}/mappy/mcp`,
  })) url.searchParams.set(k, v);
  const page = await context.newPage();
  try {
    await page.goto(url.href);
    await page.fill("#username", "owner@phohathanh.example");
    await page.fill("#password", "demo-owner");
    await Promise.all([
      page.waitForURL((u) => u.href.startsWith(redirect), { timeout: 10_000 }),
      page.getByRole("button", { name: "Allow" }).click(),
    ]);
    const code = new URL(page.url()).searchParams.get("code");
    const answer = await fetch(`${a.base}/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code", code, redirect_uri: redirect, client_id: a["client-id"],
        code_verifier: verifier, resource: `${a.base}/mappy/mcp`,
      }),
    });
    return (await answer.json()).refresh_token;
  } finally {
    await page.close();
    listener.close();
  }
}

async function refresh(token) {
  const answer = await fetch(`${a.base}/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: token, client_id: a["client-id"] }),
  });
  return { status: answer.status, body: await answer.json() };
}

try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const refreshToken = await signInToMappy(context);
  check(typeof refreshToken === "string" && refreshToken.length > 20, "a Mappy user signed in through the client (a live token family)");
  const page = await context.newPage();

  // Signed out: the sign-in form, and a wrong token is refused.
  await page.goto(`${a.base}/ops`);
  check(await page.locator('input[name="token"]').isVisible(), "signed out, /ops asks for the ops token");
  await page.fill('input[name="token"]', "not-the-token-at-all");
  await Promise.all([page.waitForNavigation(), page.click('button[type="submit"]')]);
  check((await page.textContent("body")).includes("That is not the ops token."), "a wrong token is refused");
  const auditBefore = await context.request.get(`${a.base}/ops/audit`, { maxRedirects: 0 });
  check(auditBefore.status() === 303, "the audit is not shown signed out", `status ${auditBefore.status()}`);

  await page.fill('input[name="token"]', a.token);
  await page.click('button[type="submit"]');
  await page.waitForURL(`${a.base}/ops`);
  const overview = await page.textContent("body");
  check(overview.includes("Apps and their upstreams"), "the overview is shown once signed in");
  check(/coffee\/mcp/.test(overview) && overview.includes("tools/list tokens"), "endpoints with their tools/list token cost");
  const demoRow = page.locator("tr", { has: page.locator('a[href="/ops/audit?client=demo"]') });
  check((await demoRow.count()) === 1, "the demo client's traffic is in the clients table");
  if ((await demoRow.count()) === 1) {
    const cells = await demoRow.locator("td").allTextContents();
    check(Number(cells[1]) >= 4, "its calls of the last hour are counted", cells.join(" | "));
    check(Number(cells[3]) >= 1, "its refusals of the last hour are counted", cells.join(" | "));
    check((await demoRow.locator("svg rect").count()) === 48, "with a chart of 24 hours");
  }
  check(overview.includes("sync_paused_until_timestamp_seconds"), "the ski sync's readings are shown");
  const orders = page.locator("tr", { has: page.locator('a[href="/ops/audit?tool=create_order"]') });
  check((await orders.count()) === 1 && (await orders.textContent()).includes("made 1"), "the order is among the writes of the day");
  await shot(page, "ops-overview");

  // Sync now: the trips app's action, answered with the run's report.
  await Promise.all([page.waitForNavigation(), page.click('button:has-text("Sync the content now")')]);
  const flash = await page.textContent(".flash");
  check(flash.startsWith("Sync the content now:") && /outcome/.test(flash), "sync now runs the content sync and reports it", flash);

  // The audit: filter by client and outcome, then one call's record.
  await Promise.all([page.waitForNavigation(), page.click('a[href="/ops/audit"]')]);
  await page.fill('input[name="client"]', "demo");
  await page.selectOption('select[name="outcome"]', "invalid_argument");
  await Promise.all([page.waitForNavigation(), page.click('button:has-text("Filter")')]);
  const rows = page.locator("table tr:not(:first-child)");
  const outcomes = await rows.locator("td:nth-child(6)").allTextContents();
  check(outcomes.length === 1 && outcomes[0].startsWith("invalid_argument"), "the filter keeps the one invalid call", JSON.stringify(outcomes));
  await shot(page, "ops-audit");
  const trace = (await rows.locator("td:nth-child(8)").first().textContent()).trim();
  await Promise.all([page.waitForNavigation(), rows.locator("td:nth-child(8) a").first().click()]);
  const record = await page.textContent("pre");
  check(record.includes(`"trace_id": "${trace}"`) && record.includes('"tool": "search_menu"'), "one call's record, with its trace id", record.slice(0, 200));

  // OAuth clients: the registered one is listed, and revoked.
  await Promise.all([page.waitForNavigation(), page.click('a[href="/ops/oauth"]')]);
  const clientRow = page.locator("tr:not(.family)", { hasText: a["client-id"] });
  check((await clientRow.count()) === 1, "the registered OAuth client is listed");
  const familyRow = page.locator("tr.family", { hasText: a["client-id"] });
  check(
    (await familyRow.count()) === 1 && (await familyRow.textContent()).includes("mappy:location:read"),
    "its signed-in user's token family is listed, with its scope",
  );
  await shot(page, "ops-oauth");

  // Revoking the family ends its refresh token.
  await Promise.all([page.waitForNavigation(), familyRow.locator('button:has-text("Revoke")').click()]);
  check((await page.textContent(".flash")).includes("Token family revoked"), "revoking the family says so");
  check((await page.locator("tr.family").count()) === 0, "and the family is gone from the list");
  const refused = await refresh(refreshToken);
  check(refused.status === 400 && refused.body.error === "invalid_grant", "its refresh token no longer works", JSON.stringify(refused));

  // Forms without the CSRF token, or from another origin, change nothing.
  const noCsrf = await context.request.post(`${a.base}/ops/oauth/revoke`, {
    form: { client_id: a["client-id"], csrf: "0000" },
    maxRedirects: 0,
  });
  check(noCsrf.status() === 403, "a revoke without the form's CSRF token is refused", `status ${noCsrf.status()}`);
  const csrf = await page.getAttribute('input[name="csrf"]', "value");
  const foreign = await context.request.post(`${a.base}/ops/oauth/revoke`, {
    form: { client_id: a["client-id"], csrf },
    headers: { origin: "https://evil.example" },
    maxRedirects: 0,
  });
  check(foreign.status() === 403, "a revoke sent from another origin is refused", `status ${foreign.status()}`);
  await page.goto(`${a.base}/ops/oauth`);
  const stillThere = page.locator("tr:not(.family)", { hasText: a["client-id"] });
  check((await stillThere.count()) === 1, "the client is still there");

  await Promise.all([page.waitForNavigation(), stillThere.locator('button:has-text("Revoke")').click()]);
  check((await page.textContent(".flash")).includes("removed"), "revoke says the client is removed");
  check((await page.locator("tr", { hasText: a["client-id"] }).count()) === 0, "and it is gone from the list");

  // Framing is refused; no script may run.
  const headers = (await context.request.get(`${a.base}/ops`)).headers();
  check(headers["x-frame-options"] === "DENY" && headers["content-security-policy"].includes("default-src 'none'"), "the console cannot be framed and runs no script");

  // Signing out ends the session.
  await Promise.all([page.waitForNavigation(), page.click('button:has-text("Sign out")')]);
  check(await page.locator('input[name="token"]').isVisible(), "signing out shows the sign-in form again");
} finally {
  await browser.close();
}

if (failures.length) {
  console.log(`${failures.length} check(s) failed: ${failures.join("; ")}`);
  process.exit(1);
}
