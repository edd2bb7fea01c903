// Drives the built-in OAuth server's sign-in and consent page in headless Chromium, as a person
// would: reads what the page says, signs in, clicks a button, and checks where the browser is sent.
// Run by scripts/consent-browser.sh, which starts the server and builds the authorize URL.
//
//   node consent.mjs --decision allow|deny --url AUTHORIZE_URL --issuer ISSUER --resource URL
//                    --client-id ID --state STATE --callback REDIRECT_URI
//                    [--verifier PKCE_VERIFIER] [--username NAME] [--password PW]
//                    [--login-label LABEL] [--hint TEXT] [--scope-titles JSON]
//                    [--screenshot FILE.png] [--frame-check]
//
// The page's words are the deployment's ([oauth] login_label, sign_in_hint, scope_titles): pass
// what the server was configured with; the defaults are those of a server that sets none. The
// scopes expected on the page are the authorize URL's `scope`.
// Exits 1 with a list of what failed; prints one line per check passed.
import { parseArgs } from "node:util";
import http from "node:http";
import { launch } from "./chromium.mjs";

const { values: a } = parseArgs({
  options: {
    decision: { type: "string" },
    url: { type: "string" },
    issuer: { type: "string" },
    resource: { type: "string" },
    "client-id": { type: "string" },
    state: { type: "string" },
    callback: { type: "string" },
    verifier: { type: "string" },
    username: { type: "string", default: "alice" },
    password: { type: "string", default: "correct horse battery" },
    "login-label": { type: "string", default: "User name" },
    hint: { type: "string" },
    "scope-titles": { type: "string", default: "{}" },
    screenshot: { type: "string" },
    "frame-check": { type: "boolean", default: false },
  },
});
for (const key of ["decision", "url", "issuer", "resource", "client-id", "state", "callback"]) {
  if (!a[key]) throw new Error(`--${key} is required`);
}

const scopes = (new URL(a.url).searchParams.get("scope") || "").split(" ").filter(Boolean);
const titles = JSON.parse(a["scope-titles"]);
// The server's refusal names the field as its label does ("Wrong e-mail address or password."),
// an acronym ("PIN") keeping its capitals.
const label = a["login-label"];
const lowered = /^.[\p{Lu}]/u.test(label) ? label : label.charAt(0).toLowerCase() + label.slice(1);
const wrongSignIn = `Wrong ${lowered} or password.`;

const failures = [];
const check = (ok, what, detail = "") => {
  if (ok) console.log(`  ok   ${what}`);
  else {
    console.log(`  FAIL ${what}${detail ? `: ${detail}` : ""}`);
    failures.push(what);
  }
};
const same = (actual, expected, what) =>
  check(
    JSON.stringify(actual) === JSON.stringify(expected),
    what,
    `got ${JSON.stringify(actual)}, want ${JSON.stringify(expected)}`,
  );

const browser = await launch();

const closers = [];
try {
  const context = await browser.newContext({ viewport: { width: 900, height: 900 } });
  const page = await context.newPage();
  const consoleErrors = [];
  page.on("console", (m) => m.type() === "error" && consoleErrors.push(m.text()));
  page.on("pageerror", (e) => consoleErrors.push(String(e)));

  // The client's loopback redirect listener, as a native client (Claude Code) runs one. (page.route
  // cannot answer it: Playwright does not intercept the target of a server's redirect.)
  const callbackBase = a.callback.split("?")[0];
  const received = [];
  const listener = http.createServer((req, res) => {
    received.push(req.url);
    res.writeHead(200, { "content-type": "text/html" }).end("<p>back at the client</p>");
  });
  const target = new URL(a.callback);
  await new Promise((ok, fail) => listener.once("error", fail).listen(Number(target.port), target.hostname, ok));
  closers.push(() => new Promise((ok) => listener.close(ok)));

  // --- The page as the user first sees it.
  const response = await page.goto(a.url);
  same(response.status(), 200, "GET /authorize answers 200");
  const headers = response.headers();
  const csp = headers["content-security-policy"] || "";
  check(csp.includes("frame-ancestors 'none'"), "CSP forbids framing (frame-ancestors 'none')", csp);
  same((headers["x-frame-options"] || "").toUpperCase(), "DENY", "X-Frame-Options: DENY");
  check(/no-store/.test(headers["cache-control"] || ""), "Cache-Control: no-store", headers["cache-control"]);
  same(await page.title(), "Allow access", "page title");
  same((await page.locator("h1").innerText()).trim(), "Sign in to allow access", "heading");
  same((await page.locator(".client").innerText()).trim(), "Claude Code", "client name shown");
  check(await page.locator(".badge", { hasText: "unverified" }).isVisible(), "self-registered name marked unverified");
  // Each scope by its raw name, with its title (if it has one) above it.
  const listed = await page.locator("ul.scopes li").evaluateAll((items) =>
    items.map((li) => ({
      name: (li.querySelector("code")?.innerText || "").trim(),
      title: li.querySelector(".title") ? li.querySelector(".title").innerText.trim() : null,
    })),
  );
  same(
    listed,
    scopes.map((name) => ({ name, title: titles[name] ?? null })),
    "requested scopes listed (titles where configured)",
  );
  same((await page.locator('label[for="username"]').innerText()).trim(), label, "first field's label");
  same(
    await page.locator("#username").evaluate((e) => [e.type, e.autocomplete]),
    ["text", "username"],
    "first field is type=text, autocomplete=username",
  );
  if (a.hint) {
    same((await page.locator(".hint").innerText()).trim(), a.hint, "sign-in hint shown");
  } else {
    same(await page.locator(".hint").count(), 0, "no sign-in hint");
  }
  const details = {};
  const dts = await page.locator("dl dt").allInnerTexts();
  const dds = await page.locator("dl dd").allInnerTexts();
  dts.forEach((dt, i) => (details[dt.trim()] = (dds[i] || "").trim()));
  same(details["Resource"], a.resource, "resource shown");
  same(details["Returns to"], new URL(a.callback).hostname, "return host shown");
  same(details["Client ID"], a["client-id"], "client ID shown");
  for (const field of ["#username", "#password"]) {
    check(await page.locator(field).isVisible(), `${field} field visible`);
  }
  check(await page.getByRole("button", { name: "Allow" }).isVisible(), "Allow button visible");
  check(await page.getByRole("button", { name: "Deny" }).isVisible(), "Deny button visible");
  // The inline style must survive the page's own CSP (style-src 'unsafe-inline').
  const look = await page.evaluate(() => ({
    card: getComputedStyle(document.querySelector("main")).backgroundColor,
    allow: getComputedStyle(document.querySelector("button.allow")).backgroundColor,
    width: document.querySelector("main").getBoundingClientRect().width,
    overflow: document.documentElement.scrollWidth > document.documentElement.clientWidth,
  }));
  same(look.card, "rgb(255, 255, 255)", "stylesheet applied (white card)");
  same(look.allow, "rgb(31, 94, 255)", "stylesheet applied (blue Allow button)");
  check(look.width > 300 && look.width <= 484, "card is a centred column", `width ${look.width}px`);
  check(!look.overflow, "no horizontal scrolling");
  if (a.screenshot) {
    await page.screenshot({ path: a.screenshot, fullPage: true });
    console.log(`  ---  screenshot: ${a.screenshot}`);
  }

  let back;
  if (a.decision === "allow") {
    // A wrong password shows the form again, with a message and a fresh CSRF token.
    const csrfBefore = await page.locator('input[name="csrf"]').inputValue();
    await page.fill("#username", a.username);
    await page.fill("#password", "not the password");
    await Promise.all([
      page.waitForResponse((r) => r.request().method() === "POST" && new URL(r.url()).pathname === "/authorize"),
      page.getByRole("button", { name: "Allow" }).click(),
    ]);
    await page.locator(".error").waitFor();
    same((await page.locator(".error").innerText()).trim(), wrongSignIn, "wrong password refused on the page");
    check(new URL(page.url()).pathname === "/authorize", "still on the authorize page", page.url());
    const csrfAfter = await page.locator('input[name="csrf"]').inputValue();
    check(csrfAfter && csrfAfter !== csrfBefore, "a fresh CSRF token after the failed attempt");

    await page.fill("#username", a.username);
    await page.fill("#password", a.password);
    await Promise.all([
      page.waitForURL((u) => u.href.startsWith(callbackBase), { timeout: 10_000 }),
      page.getByRole("button", { name: "Allow" }).click(),
    ]);
    back = new URL(page.url());
    const code = back.searchParams.get("code");
    check(!!code && code.length >= 20, "redirected to the client with a code", back.href);
    same(back.searchParams.get("state"), a.state, "state returned unchanged");
    same(back.searchParams.get("iss"), a.issuer, "iss is the issuer");
    same(back.searchParams.get("error"), null, "no error");
    // The browser may also ask the listener for /favicon.ico; only the callback counts.
    same(
      received.filter((path) => path.startsWith("/callback")),
      [back.pathname + back.search],
      "the client's listener received the redirect",
    );

    if (a.verifier && code) {
      // The client's side: the code and the PKCE verifier buy tokens.
      const token = await fetch(`${a.issuer}/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "authorization_code",
          code,
          client_id: a["client-id"],
          redirect_uri: a.callback,
          code_verifier: a.verifier,
        }),
      });
      const body = await token.json().catch(() => ({}));
      same(token.status, 200, "code + PKCE verifier exchanged at /token");
      check(typeof body.access_token === "string" && body.access_token.length > 20, "access token issued");
      same((body.scope || "").split(" ").sort(), [...scopes].sort(), "granted scopes");
    }
  } else if (a.decision === "deny") {
    await Promise.all([
      page.waitForURL((u) => u.href.startsWith(callbackBase), { timeout: 10_000 }),
      page.getByRole("button", { name: "Deny" }).click(),
    ]);
    back = new URL(page.url());
    same(back.searchParams.get("error"), "access_denied", "redirected with error=access_denied");
    same(back.searchParams.get("state"), a.state, "state returned unchanged");
    same(back.searchParams.get("iss"), a.issuer, "iss is the issuer");
    same(back.searchParams.get("code"), null, "no code");
  } else {
    throw new Error(`--decision must be allow or deny, not ${a.decision}`);
  }
  same(consoleErrors, [], "no console errors on the consent page");

  if (a["frame-check"]) {
    // Clickjacking: another site framing the page gets nothing.
    const framer = await context.newPage();
    const refusals = [];
    framer.on("console", (m) => /frame-ancestors|X-Frame-Options/i.test(m.text()) && refusals.push(m.text()));
    await framer.setContent(`<iframe id="f" src="${a.url.replace(/&/g, "&amp;").replace(/"/g, "&quot;")}" width="600" height="600"></iframe>`, {
      waitUntil: "load",
    });
    await framer.waitForTimeout(300);
    const frame = framer.frames().find((f) => f !== framer.mainFrame());
    let forms = -1;
    try {
      forms = await frame.locator("form").count();
    } catch {
      forms = 0; // an error page that cannot even be inspected
    }
    check(!!frame && forms === 0, "the page does not render inside a frame", `frame ${frame && frame.url()}, ${forms} forms`);
    check(refusals.length > 0, "Chromium reports the framing refusal", "no console message");
  }
} catch (error) {
  failures.push(String(error));
  console.log(`  FAIL ${error.stack || error}`);
} finally {
  await browser.close();
  for (const close of closers) await close();
}

if (failures.length) {
  console.log(`consent page (${a.decision}): ${failures.length} check(s) failed`);
  process.exit(1);
}
console.log(`consent page (${a.decision}): all checks passed`);
