"""ANSI syntax colour for Python source on a terminal (`pullback --show`).

A few token classes are coloured (keywords, the names a `def` introduces,
comments, strings, numbers); the text between tokens is copied as it is, so
removing the escape codes gives back the input exactly.
"""

import io
import keyword
import tokenize

RESET = "\x1b[0m"
STYLES = {
    "keyword": "\x1b[1;35m",
    "definition": "\x1b[1;34m",
    "comment": "\x1b[2;32m",
    "string": "\x1b[33m",
    "number": "\x1b[36m",
}


def highlight(text):
    """`text` with ANSI colour codes around its tokens; unchanged if it does not tokenize."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return text
    starts = _line_starts(text)
    pieces, copied, previous = [], 0, None
    for token in tokens:
        style = _style(token, previous)
        previous = token
        start = starts[token.start[0] - 1] + token.start[1]
        end = starts[token.end[0] - 1] + token.end[1]
        if style is None or start < copied:
            continue
        pieces += [text[copied:start], STYLES[style], text[start:end], RESET]
        copied = end
    return "".join(pieces) + text[copied:]


def _line_starts(text):
    """The offset in `text` of the start of each line."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def _style(token, previous):
    """The style of `token`, or None to leave it plain."""
    kind = tokenize.tok_name[token.type]
    if kind == "NAME":
        if previous is not None and previous.string in ("def", "class"):
            return "definition"
        return "keyword" if keyword.iskeyword(token.string) else None
    if kind.startswith("FSTRING"):
        return "string"
    return {"COMMENT": "comment", "STRING": "string", "NUMBER": "number"}.get(kind)
