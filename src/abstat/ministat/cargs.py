"""The C library behaviours the ministat command line depends on: ``getopt``
(BSD and GNU permutation), ``strtol`` and ``atoi`` as glibc reads them."""

import os


class _Usage(Exception):
    """A ministat usage error: *whine* then the usage text, exit status 2."""

    def __init__(self, whine: str, getopt_message: str | None = None) -> None:
        super().__init__(whine)
        self.whine = whine
        self.getopt_message = getopt_message


def getopt(args: list[str], spec: dict[str, bool], *, permute: bool):
    """Yield ``(option, argument)`` pairs then ``(None, operands)``, like C
    ``getopt``: grouped flags (``-As``), attached arguments (``-w60``),
    ``--`` ends the options.  With *permute* (GNU getopt, Linux) operands may
    precede options; otherwise (BSD) the first operand ends the options.
    Raises :class:`_Usage` for an unknown option or a missing argument.
    """
    operands: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            operands.extend(args[i + 1 :])
            break
        if len(arg) < 2 or arg[0] != "-":
            if not permute:
                operands.extend(args[i:])
                break
            operands.append(arg)
            i += 1
            continue
        j = 1
        while j < len(arg):
            letter = arg[j]
            takes = spec.get(letter)
            if takes is None:
                raise _Usage("Unknown option", f"invalid option -- '{letter}'")
            if takes:
                value, i = _argument(args, i, j)
                yield letter, value
                break
            yield letter, None
            j += 1
        i += 1
    yield None, operands


def _argument(args: list[str], i: int, j: int) -> tuple[str, int]:
    """The argument of the option letter ``args[i][j]``: the rest of its word, else the next word; and the
    index of the word it ends in."""
    arg = args[i]
    if j + 1 < len(arg):
        return arg[j + 1 :], i
    if i + 1 < len(args):
        return args[i + 1], i + 1
    raise _Usage("Unknown option", f"option requires an argument -- '{arg[j]}'")


def c_strtol(text: str) -> tuple[int, bool]:
    """``(int)strtol(text, &end, 10)`` and whether all of *text* was used."""
    raw = os.fsencode(text)
    n = len(raw)
    i = 0
    while i < n and raw[i] in b" \t\n\v\f\r":
        i += 1
    sign, j = _sign(raw, i)
    k = j
    while k < n and 48 <= raw[k] <= 57:
        k += 1
    if k == j:
        return 0, n == 0  # no conversion: end = start of the string
    return _c_int(sign, raw[j:k]), k == n


def _sign(raw: bytes, i: int) -> tuple[int, int]:
    """The sign at ``i`` (``+``, ``-`` or none: positive) and where the digits start."""
    if i < len(raw) and raw[i] in b"+-":
        return (-1 if raw[i] == 45 else 1), i + 1
    return 1, i


def _c_int(sign: int, digits: bytes) -> int:
    """strtol's long for *sign* and *digits*, then the low 32 bits an int keeps (two's complement)."""
    digits = digits.lstrip(b"0") or b"0"
    value = sign * (int(digits) if len(digits) <= 20 else 2**64)  # (saturates below)
    value = max(-(2**63), min(2**63 - 1, value))  # strtol clamps to long
    value &= 0xFFFFFFFF  # then the assignment to int keeps the low 32 bits
    if value >= 2**31:
        value -= 2**32
    return value


def c_atoi(text: str) -> int:
    value, _ = c_strtol(text)
    return value
