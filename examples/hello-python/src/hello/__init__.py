"""The app's Python side, called from QML through pyotherside."""

from text_unidecode import unidecode

__all__ = ["greeting"]


def greeting(name: str) -> str:
    """A greeting that any font can show: accents are spelled out in ASCII."""
    return unidecode("Grüße, {}! ¡Hola! Привет!".format(name))
