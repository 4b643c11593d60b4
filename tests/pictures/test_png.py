"""The PNG writer (pbmserv.pictures.png): what it writes reads back, in Pillow, as the very
image."""

from __future__ import annotations

import io
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from pbmserv.pictures import png
from pbmserv.pictures.png import palette_png


@st.composite
def palette_images(draw: st.DrawFn) -> Image.Image:
    width = draw(st.integers(1, 40))
    height = draw(st.integers(1, 30))
    colours = draw(st.integers(1, 256))
    pixels = draw(st.binary(min_size=width * height, max_size=width * height))
    image = Image.frombytes("P", (width, height), bytes(value % colours for value in pixels))
    palette = draw(st.binary(min_size=colours * 3, max_size=colours * 3))
    image.putpalette(palette)
    kind = draw(st.sampled_from(["opaque", "one transparent", "alphas"]))
    if kind == "one transparent":
        image.info["transparency"] = draw(st.integers(0, colours - 1))
    elif kind == "alphas":
        image.info["transparency"] = draw(st.binary(min_size=1, max_size=colours))
    return image


def _read(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    image.load()
    return image


def _as_rgba(image: Image.Image) -> bytes:
    return image.convert("RGBA").tobytes()


@settings(max_examples=200, deadline=None)
@given(palette_images())
def test_a_palette_image_reads_back_as_itself(image: Image.Image) -> None:
    back = _read(palette_png(image))
    assert back.format == "PNG" and back.mode == "P" and back.size == image.size
    assert back.tobytes() == image.tobytes()  # every pixel's index
    assert _as_rgba(back) == _as_rgba(image)  # and what each index shows, alpha too


@settings(max_examples=50, deadline=None)
@given(palette_images())
def test_it_shows_what_pillow_s_own_png_shows(image: Image.Image) -> None:
    pillows = io.BytesIO()
    image.save(pillows, "PNG")
    assert _as_rgba(_read(palette_png(image))) == _as_rgba(_read(pillows.getvalue()))


def test_with_zlib_alone_it_writes_the_same_picture(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine without the isal wheel deflates with zlib."""
    image = Image.linear_gradient("L").convert("P")
    monkeypatch.setattr(png, "_compress", zlib.compress)
    assert _read(palette_png(image)).tobytes() == image.tobytes()


def test_isal_deflates_where_it_is_installed() -> None:
    pytest.importorskip("isal")
    from isal import isal_zlib

    assert png._compress is isal_zlib.compress


def test_an_image_that_is_not_in_a_palette_is_refused() -> None:
    with pytest.raises(ValueError, match="palette"):
        palette_png(Image.new("RGB", (4, 4)))
