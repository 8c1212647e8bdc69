# distutils: language = c++
# cython: language_level=3
"""YAML 1.1 versus YAML 1.2: where in a text a plain scalar could be read
differently (yaml_1_1_risk), for kueue_fast.loader.documents.parse_yaml_rs."""

# What this module offers Python (kueue_fast/_compiled.py INTERFACES): bump both when it changes.
INTERFACE = 1

# kueue_fast.loader.documents reads big YAML streams with a YAML 1.2 parser and lets
# PyYAML (YAML 1.1, the loader's reference) read any text where the two could
# disagree. yaml_1_1_risk(text) finds the first such place. A token is a run of
# characters between whitespace, flow indicators ([]{},) and quotes, with one
# leading and one trailing ':' left out. Risky (conservatively: a token inside
# a quoted string or a comment is a false alarm, which only costs speed):
#   * number-like tokens: optional sign, optional '.', a digit, then only
#     digits, letters a-f/A-F/x/X/o/O/i/I/n/N, '_', '.', ':', '+', '-', except
#     the forms both read alike: decimal integers without leading zeros
#     ([-+]?(0|[1-9][0-9]*)) and decimal fractions ([-+]?[0-9]+.[0-9]+);
#     this covers 010 (octal in 1.1), 1:30 (sexagesimal), 1e3 (a float in 1.2
#     only), 0o17, 1_000, .5;
#   * [-+].inf, .nan and their spellings;
#   * YAML 1.1 booleans yes/no/on/off (lower, Title, UPPER case), '=' (the
#     value key), '<<' (merge keys);
#   * a token starting with '!' (tag), '%' (directive), '&' or '*' (anchor,
#     alias: '&a: v' is an empty key to PyYAML), a lone '?' (complex key), a lone
#     ':' (an empty key: null to yaml-rs, an error to PyYAML), '...' (document
#     end), ']' or '}' followed by ':' (collections as keys);
#   * a tab (PyYAML refuses tabs in places YAML 1.2 parsers allow), a byte order
#     mark or a NEL/LS/PS line break anywhere.

cdef inline bint _yaml_boundary(Py_UCS4 c):
    return (c == u' ' or c == u'\t' or c == u'\n' or c == u'\r' or c == u',' or c == u'['
            or c == u']' or c == u'{' or c == u'}' or c == u'"' or c == u"'")


cdef inline bint _number_char(Py_UCS4 c):
    return ((c >= u'0' and c <= u'9') or (c >= u'a' and c <= u'f') or (c >= u'A' and c <= u'F')
            or c == u'x' or c == u'X' or c == u'o' or c == u'O' or c == u'i' or c == u'I'
            or c == u'n' or c == u'N' or c == u'_' or c == u'.' or c == u':' or c == u'+' or c == u'-')


_RISKY_WORDS = frozenset(("yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON",
                          "off", "Off", "OFF", "=", "<<", "?", "...", ":"))
_SPECIAL_FLOATS = frozenset((".inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN"))


cdef bint _risky_token(str text, Py_ssize_t start, Py_ssize_t end):
    cdef Py_UCS4 c
    cdef Py_ssize_t i, j, digits
    if end - start > 1 and text[start] == u':':
        start += 1
    if end - start > 1 and text[end - 1] == u':':
        end -= 1
    c = text[start]
    if c == u'!' or c == u'%' or c == u'&' or c == u'*':
        return True
    if end - start <= 3 and text[start:end] in _RISKY_WORDS:
        return True
    i = start
    if c == u'-' or c == u'+':
        i += 1
    if i < end and text[i] == u'.':
        if text[i:end] in _SPECIAL_FLOATS:
            return True
        i += 1
    if i >= end or not (text[i] >= u'0' and text[i] <= u'9'):
        return False
    for j in range(i, end):
        if not _number_char(text[j]):
            return False  # a letter outside the alphabet: a string for both
    # number-like: safe only as a decimal integer or a decimal fraction
    i = start
    if text[i] == u'-' or text[i] == u'+':
        i += 1
    digits = 0
    j = i
    while j < end and text[j] >= u'0' and text[j] <= u'9':
        j += 1
    digits = j - i
    if digits == 0:
        return True  # '.5' and the like
    if j == end:
        return digits > 1 and text[i] == u'0'  # leading zero: octal in 1.1
    if text[j] != u'.' or j + 1 == end:
        return True
    j += 1
    while j < end and text[j] >= u'0' and text[j] <= u'9':
        j += 1
    return j != end


def yaml_1_1_risk(str text):
    """Index of the first token of ``text`` that PyYAML (YAML 1.1) and a YAML
    1.2 parser could read differently, or -1 (rules in the comment above)."""
    cdef Py_ssize_t n = len(text)
    cdef Py_ssize_t i = 0, start = -1, k
    cdef Py_UCS4 c
    while i < n:
        c = text[i]
        if c == u'\t' or c == u'\ufeff' or c == u'\x85' or c == u'\u2028' or c == u'\u2029':
            return i
        if _yaml_boundary(c):
            if start >= 0:
                if _risky_token(text, start, i):
                    return start
                start = -1
            if c == u']' or c == u'}':
                k = i + 1
                while k < n and (text[k] == u' ' or text[k] == u'\t'):
                    k += 1
                if k < n and text[k] == u':' and (k + 1 == n or text[k + 1] == u' ' or text[k + 1] == u'\t'
                                                    or text[k + 1] == u'\n' or text[k + 1] == u'\r'):
                    return i
        elif start < 0:
            start = i
        i += 1
    if start >= 0 and _risky_token(text, start, n):
        return start
    return -1
