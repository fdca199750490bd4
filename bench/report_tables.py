"""The markdown tables of bench/'s result files, read and written: the helpers of bench/report.py."""
import math
import re

# --------------------------------------------------------------------------------------------- parsing
def parse_markdown_tables(text):
    """Every '|'-separated table of a markdown text: a list of dicts
    {heading: the last '#' heading above it, header: [column names], rows: [[cells]]}.
    A table is a run of lines starting with '|'; its second line must be the '---' separator."""
    tables, heading, block = [], "", []

    def flush():
        if len(block) >= 2 and re.fullmatch(r"[\s|:\-]+", block[1]):
            split = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in block]
            header, rows = split[0], split[2:]
            rows = [r + [""] * (len(header) - len(r)) for r in rows]
            tables.append({"heading": heading, "header": header, "rows": rows})
        block.clear()

    for line in text.splitlines():
        if line.lstrip().startswith("|"):
            block.append(line.strip())
            continue
        flush()
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
    flush()
    return tables


def num(cell):
    """A table cell as a float: '0.0131', '99%', '2.04x', 'ratio 2.39', '7.7e+07'; None for '-', '–', ''."""
    if cell is None:
        return None
    m = re.search(r"[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?", cell.replace(",", ""))
    if not m or cell.strip() in ("-", "–", "—"):
        return None
    return float(m.group(0))


def find_table(tables, *words):
    for t in tables:
        if all(w.lower() in t["heading"].lower() for w in words):
            return t
    raise SystemExit(f"report.py: no table under a heading with {words!r}")


def as_dicts(table):
    return [dict(zip(table["header"], r)) for r in table["rows"]]


def search(pattern, text, what, group=1, flags=0):
    m = re.search(pattern, text, flags)
    if not m:
        raise SystemExit(f"report.py: {what} not found (pattern {pattern!r})")
    return m.group(group)


# --------------------------------------------------------------------------------------------- helpers
def g3(x):
    """3 significant digits, plain for moderate values."""
    if x is None:
        return "–"
    if x == 0:
        return "0"
    e = math.floor(math.log10(abs(x)))
    if -3 <= e < 6:
        return f"{x:.{max(0, 2 - e)}f}"
    return f"{x:.2e}"


def sp(n):
    """An integer with thin-space thousands separators, as in the rest of the report."""
    return f"{n:,}".replace(",", " ")


def sci(x):
    return f"{x:.2e}".replace("e+0", "e").replace("e+", "e")


def md_table(header, rows, align=None):
    align = align or ["---"] + ["---:"] * (len(header) - 1)
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)
