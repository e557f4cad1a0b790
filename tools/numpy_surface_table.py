"""Writes README's table of the NumPy surface from docs/numpy_surface.csv.

The table (staged calls grouped by kind, then the refused ones with the reason or the supported
alternative) goes between ``<!-- numpy-surface:begin -->`` and ``<!-- numpy-surface:end -->``
in README.md. ``python tools/numpy_surface_table.py`` prints it; ``--write`` replaces README's
block; ``--check`` exits 1 when README's block differs (tests/surface/test_catalog.py checks the
same).
"""

from __future__ import annotations

import argparse
import csv
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CSV = ROOT / "docs" / "numpy_surface.csv"
README = ROOT / "README.md"
BEGIN, END = "<!-- numpy-surface:begin -->", "<!-- numpy-surface:end -->"
KINDS = {  # kind -> heading, in table order
    "creation": "Creation",
    "elementwise": "Element-wise",
    "reduction": "Reductions and scans",
    "shape": "Shapes and joins",
    "linalg": "Products and linear algebra",
    "sorting": "Sorting and searching",
    "attribute": "Array attributes",
    "method": "Array methods",
    "math": "`math` on staged scalars",
    "builtin": "Builtins on staged values",
    "dtype": "dtype helpers",
}


def read_rows(path: pathlib.Path = CSV) -> list[dict[str, str]]:
    """The rows of the list, as dicts of its columns."""
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def is_pending(row: dict[str, str]) -> bool:
    """A refused row another helper's branch is adding (its note starts with "pending")."""
    return row["status"] == "refused" and row["note"].startswith("pending")


def _names(rows: list[dict[str, str]]) -> str:
    return ", ".join(f"`{row['name']}`" for row in rows)


def generate(rows: list[dict[str, str]]) -> str:
    """The Markdown block (without the markers)."""
    listed = [row for row in rows if row["listed"] == "survey"]
    staged = [row for row in rows if row["status"] == "staged"]
    share = 100 * sum(row["status"] == "staged" for row in listed) / len(listed)
    extra = len(rows) - len(listed)
    lines = [
        f"{len(listed) - sum(row['status'] != 'staged' for row in listed)} of the {len(listed)} "
        f"calls listed in `docs/numpy_surface.csv` stage ({share:.0f}%), plus {extra} more calls "
        "of the same families; each is tested against NumPy on every target (`tests/surface/`). "
        "The list holds the NumPy functions, array methods, `math` functions and builtins that "
        "scientific and ML code calls most (counted by `tools/numpy_usage.py` in scikit-learn, "
        "SciPy, numpy-ml, ML-From-Scratch, filterpy and others: `docs/numpy_usage.csv`), and "
        "every call issue 10 names. Random numbers, I/O, strings and datetimes are not on it.",
        "",
        "| kind | staged calls |",
        "|---|---|",
    ]
    for kind, heading in KINDS.items():
        names = [row for row in staged if row["kind"] == kind]
        if names:
            lines.append(f"| {heading} | {_names(names)} |")
    refused = [row for row in rows if row["status"] == "refused" and not is_pending(row)]
    if refused:
        lines += ["", "Refused with a clear error naming the call:", "",
                  "| call | why, and what to write instead |", "|---|---|"]
        lines += [f"| `{row['name']}` | {row['note']} |" for row in refused]
    pending = [row for row in rows if is_pending(row)]
    if pending:
        lines += ["", f"Not staged yet (a clear error naming the call): {_names(pending)}."]
    return "\n".join(lines) + "\n"


def readme_block(text: str) -> str | None:
    """The text between README's markers, or None when they are absent."""
    if BEGIN not in text or END not in text:
        return None
    return text.split(BEGIN, 1)[1].split(END, 1)[0].removeprefix("\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", action="store_true", help="replace README's block")
    group.add_argument("--check", action="store_true", help="exit 1 if README's block differs")
    args = parser.parse_args(argv)
    table = generate(read_rows())
    if not (args.write or args.check):
        sys.stdout.write(table)
        return 0
    text = README.read_text()
    current = readme_block(text)
    if current is None:
        print(f"README.md has no {BEGIN} ... {END} markers", file=sys.stderr)
        return 1
    if args.check:
        return 0 if current == table else 1
    head, rest = text.split(BEGIN, 1)
    README.write_text(f"{head}{BEGIN}\n{table}{END}{rest.split(END, 1)[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
