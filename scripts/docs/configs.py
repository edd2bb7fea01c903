"""Every TOML example of the book marked as a config passes `concierge check`.

```toml,config   a whole config;
```toml,fragment a fragment merged into the demo's concierge.toml: tables key by key, arrays
                 of tables ([[endpoint]], [[apps.<name>.tool]]) appended, other values replaced.
Each is written to the repository's root (relative paths in it are read from there, as a reader
running it from a clone would) and checked with a state folder of its own, then removed.
Usage: configs.py path/to/concierge"""

import datetime
import json
import os
import re
import tomllib
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
FENCE = re.compile(r"^```toml,(config|fragment)\s*\n(.*?)^```\s*$", re.M | re.S)


def merge(base, fragment):
    """`fragment` deep-merged into `base` (both as tomllib reads them)."""
    for key, value in fragment.items():
        old = base.get(key)
        if isinstance(old, dict) and isinstance(value, dict):
            merge(old, value)
        elif is_tables(old) and is_tables(value):
            old.extend(value)
        else:
            base[key] = value
    return base


def is_tables(value):
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def key(name):
    return name if BARE.match(name) else json.dumps(name, ensure_ascii=False)


def value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, (datetime.date, datetime.time, datetime.datetime)):
        return v.isoformat()
    if isinstance(v, list):
        return "[" + ", ".join(value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{key(k)} = {value(x)}" for k, x in v.items()) + " }"
    raise TypeError(type(v))


def dump(table, path=()):
    """A TOML document of `table`: its values, then its tables and arrays of tables."""
    lines = [f"{key(k)} = {value(v)}" for k, v in table.items() if not isinstance(v, dict) and not is_tables(v)]
    for k, v in table.items():
        inner = path + (k,)
        name = ".".join(key(p) for p in inner)
        if isinstance(v, dict):
            lines += ["", f"[{name}]", dump(v, inner)]
        elif is_tables(v):
            for item in v:
                lines += ["", f"[[{name}]]", dump(item, inner)]
    return "\n".join(lines)


def main(binary):
    binary = str(Path(binary).resolve())
    demo = (ROOT / "concierge.toml").read_text(encoding="utf-8")
    failures, checked = [], 0
    for page in sorted((ROOT / "docs/src").rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            kind, body = match.group(1), match.group(2)
            line = text.count("\n", 0, match.start()) + 1
            config = body if kind == "config" else dump(merge(tomllib.loads(demo), tomllib.loads(body)))
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
