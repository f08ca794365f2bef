"""Parameter descriptions from Google, NumPy and Sphinx docstrings."""

from __future__ import annotations

from mcpbind.server.docstrings import Docstring, parse_docstring


def test_google_style() -> None:
    def forecast(city: str, days: int = 1, *extra: str, **options: str) -> str:
        """Forecast the weather.

        Uses a made-up model.

        Args:
            city: The city's name.
            days (int, optional): How many days ahead,
                at most 7.

                Zero means today.
            *extra: Ignored words.
            **options: Knobs.

        Returns:
            str: the forecast.
        """
        return city

    assert parse_docstring(forecast.__doc__) == Docstring(
        "Forecast the weather.\n\nUses a made-up model.\n\nReturns:\n    str: the forecast.",
        {
            "city": "The city's name.",
            "days": "How many days ahead, at most 7.\n\nZero means today.",
            "extra": "Ignored words.",
            "options": "Knobs.",
        },
    )


def test_google_section_names_and_types_with_parentheses() -> None:
    doc = """Summary.

    Keyword Arguments:
        limit (dict[str, (int)]): The limit (inclusive): per key.
    """
    assert parse_docstring(doc) == Docstring("Summary.", {"limit": "The limit (inclusive): per key."})


def test_numpy_style() -> None:
    doc = """Convert a value.

    Parameters
    ----------
    value : float
        The value,
        in metres.
    low, high : float
        The bounds.
    verbose

    Returns
    -------
    float
        The converted value.
    """
    assert parse_docstring(doc) == Docstring(
        "Convert a value.\n\nReturns\n-------\nfloat\n    The converted value.",
        {"value": "The value, in metres.", "low": "The bounds.", "high": "The bounds."},
    )


def test_sphinx_style() -> None:
    doc = """Send a message.

    :param str to: Who gets it,
        by address.
    :type to: str
    :param dict[str, int] headers: Extra headers.
    :keyword retries: How often to retry.
    :returns: the message id.
    :rtype: str
    """
    assert parse_docstring(doc) == Docstring(
        "Send a message.\n\n:returns: the message id.\n:rtype: str",
        {"to": "Who gets it, by address.", "headers": "Extra headers.", "retries": "How often to retry."},
    )


def test_plain_and_empty_docstrings() -> None:
    assert parse_docstring(None) == Docstring("")
    assert parse_docstring("") == Docstring("")
    assert parse_docstring("Just a summary.\n\nArgs are described nowhere.") == Docstring(
        "Just a summary.\n\nArgs are described nowhere."
    )
    # A section header inside a sentence is not a section.
    text = "Summary.\n\nThe Parameters: are listed elsewhere."
    assert parse_docstring(text) == Docstring(text)
    only_parameters = "\n    Args:\n        x: The x.\n    "
    assert parse_docstring(only_parameters) == Docstring("", {"x": "The x."})
