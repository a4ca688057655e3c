#!/usr/bin/env python3
"""Regenerate the outputs of the README's example commands from a built binary.

Every fenced ```console block of README.md holds `$ dpw ...` lines, each followed by the
output it prints (stdout, then stderr). This script runs each command from the repository
root with the binary given (default target/release/dpw) and writes its output under it,
replacing what was there. `crates/dpw/tests/readme_examples.rs` checks the result.

    cargo build --release && python3 scripts/readme_examples.py [path/to/dpw]
"""

import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(binary: str, command: str) -> list[str]:
    words = shlex.split(command)
    assert words[0] == "dpw", f"an example must start with `dpw `: {command}"
    p = subprocess.run([binary, *words[1:]], cwd=ROOT, capture_output=True, text=True)
    text = p.stdout + p.stderr
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def main() -> None:
    binary = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "target/release/dpw")
    readme = ROOT / "README.md"
    out: list[str] = []
    in_block = False
    for line in readme.read_text().splitlines():
        if not in_block:
            out.append(line)
            in_block = line.rstrip() == "```console"
            continue
        if line.startswith("```"):
            in_block = False
            out.append(line)
        elif line.startswith("$ "):
            out.append(line)
            out.extend(run(binary, line[2:]))
            print(line, file=sys.stderr)
        # Old output lines are dropped: the run above replaced them.
    readme.write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
