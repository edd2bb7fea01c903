// Debian's Chromium as every browser test here starts it (scripts/browser/install.sh puts it there).
import { chromium } from "playwright-core";

export function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    // Playwright adds --headless, --no-sandbox (chromiumSandbox: false) and a fresh profile
    // directory; the rest keep Chromium off the network, which is closed on the CI machines.
    args: [
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
