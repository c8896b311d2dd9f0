"""Ranges of the numbers a program or a command line may hold.

Every number enters odt as an exact ``Fraction`` (a literal) or a float (an option); the
backends turn coefficients into floats or scaled integers. These limits keep every value
well inside float range and exact in a float's 53-bit mantissa, so a value out of range
is reported where it is written instead of overflowing in a backend.
"""
from __future__ import annotations

import math
from fractions import Fraction

#: Largest magnitude of a number literal, a coefficient or a bound (exact in a double).
MAX_MAGNITUDE = 10**15
#: Largest integer literal in a skeleton or a data block (depths, widths, quantiles).
MAX_INT = 10**9
#: Largest time limit, in seconds (about 31 years).
MAX_SECONDS = 1e9


def out_of_range(value: Fraction | float, limit: float = MAX_MAGNITUDE) -> str | None:
    """Why ``value`` is not a number odt can take, or None.

    >>> out_of_range(Fraction(10) ** 400) is not None
    True
    >>> out_of_range(Fraction(1, 10**20))
    'number 1e-20 is too small: its magnitude is below 1e-15'
    >>> out_of_range(Fraction(3, 2)) is None
    True
    """
    if isinstance(value, float) and not math.isfinite(value):
        return f"number {value} is not finite"
    magnitude = abs(Fraction(value))  # exact, and typed as one kind of number
    if magnitude > limit:
        digits = len(str(abs(int(value))))
        return f"number out of range: {digits} digits, larger than {power(limit)}"
    if magnitude != 0 and magnitude < Fraction(1, MAX_MAGNITUDE):
        return f"number {float(value):.3g} is too small: its magnitude is below 1e-{len(str(MAX_MAGNITUDE)) - 1}"
    return None


def positive_seconds(value: float | None, what: str = "time limit") -> str | None:
    """Why ``value`` is not a usable time limit (a positive finite number of seconds), or None.

    >>> positive_seconds(float("nan"))
    'the time limit must be a positive finite number of seconds, not nan'
    >>> positive_seconds(60.0) is None
    True
    """
    if value is None:
        return None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value) \
            or value <= 0 or value > MAX_SECONDS:
        return f"the {what} must be a positive finite number of seconds, not {value if isinstance(value, float) else repr(value)}"
    return None


#: the units of a memory size (powers of 1024)
MEMORY_UNITS = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def memory_size(text: str, default_unit: str | None = "G") -> float:
    """Bytes of a memory size written as text: a number with a unit K, M, G or T (powers
    of 1024; ``B`` or ``iB`` may follow), or without one in ``default_unit`` (None: the
    unit is required). Raises ``ValueError`` saying why the text is no memory size.

    >>> memory_size("4G"), memory_size("500MiB"), memory_size("2")
    (4294967296.0, 524288000.0, 2147483648.0)
    >>> memory_size("0.5K", None)
    512.0
    """
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    scale = MEMORY_UNITS.get(t[-1:], 0)
    if not scale and default_unit is None:
        raise ValueError(f"not a memory size: {text!r} (a number and a unit: 500M, 2G; a number alone is bytes)")
    try:
        value = float(t[:-1] if scale else t) * (scale or MEMORY_UNITS[default_unit or "G"])
    except ValueError:
        raise ValueError(f"not a memory size: {text!r} (e.g. 4, 500M, 2G)") from None
    if not value > 0 or not math.isfinite(value):
        raise ValueError(f"a memory size must be positive and finite, not {text!r}")
    return value


def power(limit: float) -> str:
    """``10**k`` written as ``1e<k>``.

    >>> power(10**15)
    '1e15'
    """
    return f"1e{len(str(int(limit))) - 1}"
