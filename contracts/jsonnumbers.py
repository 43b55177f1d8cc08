"""JSON numbers that keep the text they were written as.

orjson reads every JSON number with a fraction or an exponent as a double, which holds about
15 significant digits: ``1.23456789123456789`` (a Decimal column written as a JSON number by
Kafka's JsonConverter with ``decimal.format=NUMERIC``, as Paimon's and Flink CDC's Debezium
output does) would come out rounded. A document holding a number written with more digits
than a double keeps is read a second time with the standard library's reader
(:func:`contracts.jsondoc.exact_numbers`), every such
number becoming a :class:`JsonNumber`: a float (what every other reader of the document
expects) that also carries its text, which the Decimal decoder reads digit for digit.

The check is a C-speed ``translate`` + ``find`` for a run of 16 digits or points (then a
look at each such run), so documents without a long number (nearly all) cost one pass over
their bytes and no second parse.
"""

from __future__ import annotations

from typing import Any, Final

import orjson

#: Digits and the decimal point all become ``0``: a long number is a long run of ``0``.
_DIGITS_AND_POINT: Final = bytes.maketrans(b"0123456789.", b"0" * 11)
#: 15 significant digits (a double's DBL_DIG) and a point: longer runs may not be exact.
_LONG_NUMBER: Final = b"0" * 16
_KEEP_TEXT_ABOVE: Final = 15
#: An integer of 20 digits (or 19 and a minus) may lie outside int64/uint64.
_OUT_OF_RANGE_DIGITS: Final = 20
_TAIL: Final = _OUT_OF_RANGE_DIGITS - len(_LONG_NUMBER)
_FULL_TAIL: Final = b"0" * _TAIL
_EXPONENT: Final = frozenset(b"eE")
_MINUS: Final = ord("-")


class JsonNumber(float):
    """A JSON number read as a float that keeps the ``text`` it was written as."""

    __slots__ = ("text",)
    text: str

    def __new__(cls, text: str) -> JsonNumber:
        number = super().__new__(cls, text)
        number.text = text
        return number

    def __reduce__(self) -> tuple[Any, ...]:
        return (JsonNumber, (self.text,))

    def __repr__(self) -> str:
        return self.text

    @property
    def wide_integer(self) -> int | None:
        """The integer this number is, when it was written as one (an integer only becomes a
        JsonNumber beyond the 64-bit range); else None."""
        digits = self.text[1:] if self.text[:1] == "-" else self.text
        return int(self.text) if digits.isdigit() else None

    __str__ = __repr__


def integer_as_read(value: Any) -> Any:
    """``value``, or the exact integer a wide-integer :class:`JsonNumber` stands for (what
    type inference counts, so that it sees an integer, not a double)."""
    if isinstance(value, JsonNumber) and value.wide_integer is not None:
        return value.wide_integer
    return value


def number_keeping_text(text: str) -> float:
    """A JSON number's ``text`` as a float, a :class:`JsonNumber` when it is long enough that
    a double may not hold every digit (the ``parse_float`` hook of :func:`json.loads`)."""
    return JsonNumber(text) if len(text) > _KEEP_TEXT_ABOVE else float(text)


def may_lose_digits(data: bytes) -> bool:
    """Whether ``data`` may hold a number written with more digits than a double keeps (a
    run of 16 digits and points holding a point or followed by an exponent) or an integer
    outside the 64-bit range (20 digits, or 19 and a sign).

    Long integers inside the range (microsecond and nanosecond times: 16 and 19 digits, in
    nearly every Debezium message) are read exactly by orjson and do not count."""
    marked = data.translate(_DIGITS_AND_POINT)
    at = marked.find(_LONG_NUMBER)
    while at >= 0:
        end = at + len(_LONG_NUMBER)
        # only runs shorter than 20 are looked at further, so 4 more bytes say where it ends
        tail = marked[end : end + _TAIL]
        if tail == _FULL_TAIL:
            return True
        end += len(tail) - len(tail.lstrip(b"0"))
        if (
            data.find(b".", at, end) >= 0
            or (end < len(data) and data[end] in _EXPONENT)
            or (end - at == _OUT_OF_RANGE_DIGITS - 1 and at > 0 and data[at - 1] == _MINUS)
        ):
            return True
        at = marked.find(_LONG_NUMBER, end)
    return False


def as_written(obj: Any) -> Any:
    """orjson's ``default``: a :class:`JsonNumber` written back as its own text."""
    if isinstance(obj, JsonNumber):
        return orjson.Fragment(obj.text)
    raise TypeError(f"Type is not JSON serializable: {type(obj).__name__}")
