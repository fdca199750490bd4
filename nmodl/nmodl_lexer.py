"""NMODL tokens with their line numbers (cablesim's own reader; see nmodl/README.md).

Comments (`: ...`, `? ...`, COMMENT ... ENDCOMMENT) and TITLE lines are dropped here.
VERBATIM blocks become one VERBATIM token, which the parser rejects with its line.
"""

import re


class NmodlError(Exception):
    """One-line error: FILE:LINE: message."""

    def __init__(self, path, line, msg):
        super().__init__("%s:%d: %s" % (path, line, msg))
        self.path, self.line, self.msg = path, line, msg


_TOKEN = re.compile(r"""
    (?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>==|!=|<->|<<|<=|>=|&&|\|\||->|[-+*/^(){}\[\],=<>!'~@])
""", re.VERBOSE)


class Token:
    __slots__ = ("kind", "text", "line")

    def __init__(self, kind, text, line):
        self.kind, self.text, self.line = kind, text, line

    def __repr__(self):
        return "%s:%r@%d" % (self.kind, self.text, self.line)


def tokenize(text, path):
    toks = []
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    k = 0
    in_comment = in_verbatim = False
    while k < len(lines):
        line = lines[k]
        lineno = k + 1
        k += 1
        stripped = line.strip()
        if in_comment:
            if stripped.startswith("ENDCOMMENT"):
                in_comment = False
            continue
        if in_verbatim:
            if stripped.startswith("ENDVERBATIM"):
                in_verbatim = False
            continue
        if stripped.startswith("COMMENT"):
            in_comment = True
            continue
        if stripped.startswith("VERBATIM"):
            toks.append(Token("name", "VERBATIM", lineno))
            in_verbatim = True
            continue
        if stripped.startswith("TITLE"):
            continue
        pos = 0
        while pos < len(line):
            c = line[pos]
            if c in " \t\f\v":
                pos += 1
                continue
            if c in ":?":
                break
            m = _TOKEN.match(line, pos)
            if not m:
                raise NmodlError(path, lineno, "unexpected character %r" % c)
            kind = m.lastgroup
            toks.append(Token(kind, m.group(kind), lineno))
            pos = m.end()
    if in_comment:
        raise NmodlError(path, len(lines), "COMMENT without ENDCOMMENT")
    toks.append(Token("eof", "", len(lines)))
    return toks
