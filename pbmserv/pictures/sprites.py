"""A layered picture's pieces as sprites: small pictures that repeat (a stone, a chess piece, a
highlighted cell), each drawn once and pasted where it stands.

A sprite is a nested ``<svg x y width height>`` whose body is drawn in its own coordinates
(pbmserv.games.drawing.sprite writes them): valid SVG that any viewer draws in place, its box
clipping what it holds. Drawn apart from its picture, a sprite must give the pixels the whole
picture would: so each is drawn in a small document of its own that keeps the fraction of its
position (a hexagon's centre falls between pixels) and the root's inherited attributes (the
font), at the whole pixels of its position. A body that is the same wherever it stands gives
the same small document, drawn once.

A :class:`Sheet` pastes them: each sprite drawn once by LunaSVG on a transparent background,
its colours not premultiplied, pasted through its alpha. Blended so, rather than drawn on the
board by LunaSVG, a pixel at a sprite's anti-aliased edge is a level or two of a colour apart
(never more: tests/mail/test_sprites.py). The PNG a mail carries is in a palette, and mapping
a whole picture's pixels onto it costs as much as pasting its pieces: so the board is mapped
once a palette, and each sprite is pasted as a tile already mapped, through the mask of the
pixels it touches. A tile is the sprite pasted on the board (over the sprites pasted before it
that touch the same pixels), cut to its box and mapped: the pixels the whole pasted picture
would map to, worked out once and kept. The drawing is pbmserv.pictures.raster's: nothing here
reads or draws SVG.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Generic, NamedTuple, Protocol, TypeVar

from PIL import Image, ImageChops

from pbmserv.pictures.palette import Colour, palette_image

#: The root of a layered picture's pieces document (pictures.layers_of has checked that its
#: viewBox is its size): what comes before its size and after.
_ROOT = re.compile(r'(<svg [^>]*?)\bwidth="\d+" height="\d+" viewBox="0 0 \d+ \d+"([^>]*>)')
_NUMBER = r"-?\d+(?:\.\d+)?(?:e-?\d+)?"
#: A sprite's start, exactly as drawing.sprite writes it.
_SPRITE = re.compile(
    rf'<svg(?: class="[^"<>]*")? x="({_NUMBER})" y="({_NUMBER})" '
    rf'width="({_NUMBER})" height="({_NUMBER})">'
)
_END = "</svg>"
#: Groups that only name what they hold (for a reader of the SVG), around sprites: they change
#: nothing drawn (a picture whose board holds a style sheet is not drawn as sprites).
_GROUPS = re.compile(r'(?:<g class="[^"<>]*">|</g>)*')
#: What a body cannot hold and be drawn alone: another svg (its end would be taken for the
#: sprite's), and references to something defined elsewhere in the picture.
_NOT_ALONE = ("<svg", "href=", "url(")


class Sprite(NamedTuple):
    """A sprite as it is drawn alone (``document``), and where that drawing is pasted."""

    left: int
    top: int
    document: str


def sprites_of(pieces: str) -> list[Sprite] | None:
    """The sprites of a layered picture's pieces (a whole SVG document, as
    pictures.layers_of gives it), in the order they are drawn; None when the pieces hold
    anything else (then they are drawn as SVG)."""
    root = _ROOT.match(pieces)
    if root is None or not pieces.endswith(_END):
        return None
    before, after = root.group(1, 2)
    # Each sprite ends at the first </svg> after its start: its body holds no other svg.
    *texts, rest = pieces[root.end() : -len(_END)].split(_END)
    found = []
    depth = 0  # of the groups around the sprites
    for text in texts:
        read = _sprite(text, before, after)
        if read is None:
            return None
        sprite, groups = read
        depth = _in_groups(depth, groups)
        if depth < 0:
            return None
        found.append(sprite)
    if _GROUPS.fullmatch(rest) is None or _in_groups(depth, rest) != 0:
        return None
    return found


def _in_groups(depth: int, groups: str) -> int:
    """The depth of groups after ``groups`` (starts and ends of groups), -1 if one ends that
    was not started."""
    for tag in groups.split(">")[:-1]:
        depth += -1 if tag == "</g" else 1
        if depth < 0:
            return -1
    return depth


@lru_cache(maxsize=4096)
def _sprite(text: str, before: str, after: str) -> tuple[Sprite, str] | None:
    """A sprite (``text``: the groups before its start, its start and its body) in a document
    of its own, as small as holds it at the fraction of its position, and the groups before
    it; None if ``text`` is no sprite. Read once a sprite and a place."""
    groups = _GROUPS.match(text)
    assert groups is not None  # it matches nothing at worst
    start = _SPRITE.match(text, groups.end())
    if start is None:
        return None
    body = text[start.end() :]
    if any(mark in body for mark in _NOT_ALONE):
        return None
    x, y, width, height = (float(number) for number in start.group(1, 2, 3, 4))
    left, top = math.floor(x), math.floor(y)
    # Rounded: a fraction of a decimal (0.85) is not one in binary (0.8500000000000227).
    dx, dy = round(x - left, 9), round(y - top, 9)
    canvas_width, canvas_height = math.ceil(dx + width), math.ceil(dy + height)
    size = f'width="{canvas_width}" height="{canvas_height}" '
    document = (
        f'{before}{size}viewBox="0 0 {canvas_width} {canvas_height}"{after}'
        f'<svg x="{dx!r}" y="{dy!r}" width="{start[3]}" height="{start[4]}">{body}</svg></svg>'
    )
    return Sprite(left, top, document), groups.group(0)


Box = tuple[int, int, int, int]  # left, top, right, bottom


class Board(Protocol):
    """A board drawn, as a Pillow RGB image; compared by identity, as a key (the same object
    as long as it is kept)."""

    def __hash__(self) -> int: ...

    @property
    def image(self) -> Image.Image: ...


BoardT = TypeVar("BoardT", bound=Board)


class _Drawn(NamedTuple):
    """Part of a sprite drawn alone that is not wholly transparent: its box in the sprite, its
    colours (not premultiplied) and alpha, and the pixels it touches at all (a mask of mode
    "1")."""

    box: Box
    colour: Image.Image
    alpha: Image.Image
    touched: Image.Image


class _Part:
    """Part of a sprite (:class:`_Drawn`) where it stands in a picture: its box there, and the
    squares of the picture (``_SQUARE``) the box lies in. Compared by identity, as a key."""

    __slots__ = ("box", "colour", "alpha", "touched", "squares")

    def __init__(
        self, box: Box, colour: Image.Image, alpha: Image.Image, touched: Image.Image
    ) -> None:
        self.box, self.colour, self.alpha, self.touched = box, colour, alpha, touched
        left, top, right, bottom = box
        self.squares = tuple(
            (x, y)
            for x in range(left >> _SQUARE, ((right - 1) >> _SQUARE) + 1)
            for y in range(top >> _SQUARE, ((bottom - 1) >> _SQUARE) + 1)
        )


class _Mapped(Generic[BoardT]):
    """A board and its pixels mapped onto a palette (as :func:`_indices`). Compared by
    identity, as a key."""

    __slots__ = ("board", "palette", "entries", "indices")

    def __init__(self, board: BoardT, palette: Image.Image) -> None:
        self.board, self.palette = board, palette
        self.entries = bytes(palette.getpalette() or ())
        self.indices = _indices(board.image, palette)


def _indices(image: Image.Image, palette: Image.Image) -> Image.Image:
    """An RGB image mapped onto ``palette`` (no dithering), as an "L" image of the indices:
    with no palette of its own, a tile kept takes a tenth of the memory."""
    mapped = image.quantize(palette=palette, dither=Image.Dither.NONE)
    return Image.frombytes("L", mapped.size, mapped.tobytes())


#: A big sprite (a board's coloured sides) is pasted in bands this many pixels high, each
#: band's runs of this many pixels wide that hold something: a paste goes through every pixel
#: of its box, and the sides' box is nearly the whole picture.
_BAND = 32
_SMALL = 4 * _BAND * _BAND  # a sprite no bigger is pasted in one part
_SQUARE = 6  # the parts in a picture are found by where they stand, in squares of 2**6 pixels
_ANY = [0] + [255] * 255  # an alpha to the mask of the pixels touched at all


class Sheet(Generic[BoardT]):
    """Sprites pasted on boards, each drawn once by ``draw_alone`` (a sprite's document drawn
    on a transparent background: RGBA, not premultiplied)."""

    def __init__(self, draw_alone: Callable[[str], Image.Image]) -> None:
        self._draw_alone = draw_alone
        self.drawn = lru_cache(maxsize=1024)(self._drawn)
        self.placed = lru_cache(maxsize=4096)(self._placed)
        self.mapped = lru_cache(maxsize=32)(self._mapped)
        self.tile = lru_cache(maxsize=4096)(self._tile)
        self.overlap = lru_cache(maxsize=8192)(self._overlap)

    def clear(self) -> None:
        """Forget every sprite drawn and every tile."""
        for kept in (self.drawn, self.placed, self.mapped, self.tile, self.overlap):
            kept.cache_clear()

    def pasted(self, board: BoardT, sprites: Sequence[Sprite]) -> Image.Image:
        """The sprites pasted in turn on a copy of the board (RGB), each through its alpha."""
        image = board.image.copy()
        for sprite in sprites:
            for part in self.placed(sprite):
                image.paste(part.colour, part.box[:2], part.alpha)
        return image

    def pasted_in_palette(
        self, board: BoardT, sprites: Sequence[Sprite], colours: tuple[Colour, ...]
    ) -> Image.Image:
        """What :meth:`pasted` draws, mapped onto the palette of ``colours``
        (pbmserv.pictures.palette) as ``Image.quantize`` with no dithering maps it: the board
        mapped once a palette, and each part of a sprite pasted as a tile mapped once, through
        the mask of the pixels it touches. Mapping a pixel looks at that pixel alone, so the
        tiles mapped are the picture mapped. A tile holds what the parts pasted before it that
        touch the same pixels left under it, so it is kept for those parts alone."""
        mapped = self.mapped(board, colours)
        image = mapped.indices.copy()
        standing: dict[tuple[int, int], list[tuple[int, _Part]]] = {}
        order = 0
        for sprite in sprites:
            for part in self.placed(sprite):
                under = {
                    before: other
                    for square in part.squares
                    for before, other in standing.get(square, ())
                    if self.overlap(other, part)
                }
                tile = self.tile(mapped, part, tuple(under[before] for before in sorted(under)))
                image.paste(tile, part.box[:2], part.touched)
                for square in part.squares:
                    standing.setdefault(square, []).append((order, part))
                order += 1
        image.putpalette(mapped.entries)  # the indices become a "P" image
        return image

    def _drawn(self, document: str) -> tuple[_Drawn, ...]:
        """A sprite's document drawn alone, once, as the parts of it to paste."""
        drawn = self._draw_alone(document)
        alpha = drawn.getchannel("A")
        small = drawn.width * drawn.height <= _SMALL
        boxes = [alpha.getbbox()] if small else _filled_runs(alpha)
        return tuple(
            _Drawn(box, drawn.crop(box).convert("RGB"), part, part.point(_ANY, "1"))
            for box in boxes
            if box is not None
            for part in (alpha.crop(box),)
        )

    def _placed(self, sprite: Sprite) -> tuple[_Part, ...]:
        """A sprite's parts where it stands (worked out once a sprite and a place)."""
        x, y = sprite.left, sprite.top
        return tuple(
            _Part(
                (x + left, y + top, x + right, y + bottom), drawn.colour, drawn.alpha, drawn.touched
            )
            for drawn in self.drawn(sprite.document)
            for left, top, right, bottom in (drawn.box,)
        )

    def _overlap(self, first: _Part, second: _Part) -> bool:
        """Whether two parts touch a pixel in common (then the one pasted second is pasted
        over the first, and its tile holds it)."""
        left, top = max(first.box[0], second.box[0]), max(first.box[1], second.box[1])
        right, bottom = min(first.box[2], second.box[2]), min(first.box[3], second.box[3])
        if left >= right or top >= bottom:
            return False
        masks = [
            part.touched.crop((left - x, top - y, right - x, bottom - y))
            for part in (first, second)
            for x, y in (part.box[:2],)
        ]
        return ImageChops.logical_and(*masks).getbbox() is not None

    def _mapped(self, board: BoardT, colours: tuple[Colour, ...]) -> _Mapped[BoardT]:
        palette = palette_image(colours)
        if palette is None:
            raise ValueError("so many colours have no palette")
        return _Mapped(board, palette)

    def _tile(self, mapped: _Mapped[BoardT], part: _Part, under: tuple[_Part, ...]) -> Image.Image:
        """The pixels of ``part``'s box once it is pasted on the board over ``under``, mapped
        onto the palette."""
        left, top = part.box[:2]
        pixels = mapped.board.image.crop(part.box)
        for pasted in (*under, part):
            pixels.paste(pasted.colour, (pasted.box[0] - left, pasted.box[1] - top), pasted.alpha)
        return _indices(pixels, mapped.palette)


def _filled_runs(alpha: Image.Image) -> list[Box | None]:
    """The boxes that hold what is drawn in a big sprite: in each band, each run of filled
    ``_BAND``-wide stretches, narrowed to what it holds."""
    boxes: list[Box | None] = []
    for top in range(0, alpha.height, _BAND):
        bottom = min(alpha.height, top + _BAND)
        start = None
        for left in range(0, alpha.width + _BAND, _BAND):
            right = min(alpha.width, left + _BAND)
            filled = left < alpha.width and alpha.crop((left, top, right, bottom)).getbbox()
            if filled and start is None:
                start = left
            elif not filled and start is not None:
                inside = alpha.crop((start, top, left, bottom)).getbbox()
                if inside is not None:
                    boxes.append(
                        (start + inside[0], top + inside[1], start + inside[2], top + inside[3])
                    )
                start = None
    return boxes
