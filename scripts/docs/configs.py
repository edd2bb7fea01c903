"""Every TOML example of the book marked as a config passes `concierge check`.

```toml,config   a whole config;
```toml,fragment a fragment appended to the demo's concierge.toml (new sections, more
                 [[endpoint]]s).
Each is written to the repository's root (relative paths in it are read from there, as a reader
running it from a clone would) and checked with a state folder of its own, then removed.
Usage: configs.py path/to/concierge"""

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
FENCE = re.compile(r"^```toml,(config|fragment)\s*\n(.*?)^```\s*$", re.M | re.S)


def main(binary):
    binary = str(Path(binary).resolve())
    demo = (ROOT / "concierge.toml").read_text(encoding="utf-8")
    failures, checked = [], 0
    for page in sorted((ROOT / "docs/src").rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            kind, body = match.group(1), match.group(2)
            line = text.count("\n", 0, match.start()) + 1
            config = body if kind == "config" else demo + "\n" + body
            where = f"{page.relative_to(ROOT)}:{line}"
            path = ROOT / f".docs-check-{os.getpid()}.toml"
            path.write_text(config, encoding="utf-8")
            try:
                with tempfile.TemporaryDirectory() as state:
                    env = {k: v for k, v in os.environ.items() if not k.startswith(("APP_", "BXH_", "MAPPY_", "CONCIERGE_"))}
                    env.update({"CONCIERGE_VAR": state, "RUST_LOG": "error"})
                    run = subprocess.run([binary, "check", "--config", path.name], cwd=ROOT, env=env,
                                         capture_output=True, text=True, timeout=120)
            finally:
                path.unlink(missing_ok=True)
            checked += 1
            if run.returncode != 0:
                failures.append(f"{where} ({kind}):\n{run.stdout}{run.stderr}")
    if failures:
        print("docs: TOML examples `concierge check` refuses:\n" + "\n".join(failures))
        sys.exit(1)
    print(f"docs: {checked} TOML examples pass `concierge check`")


if __name__ == "__main__":
    main(sys.argv[1])
