"""The cube detector's network: a small encoder-decoder that outputs maps at 1/4 resolution.

Why this shape: a cube is 9-15 input pixels across, so a map at stride 4 puts 2-4 cells on each
cube and keeps touching cubes apart; the encoder goes down to stride 32 so that every cell sees
the tray's walls and the tower around it (a cube outside the tray looks like one inside; only
the context tells). Plain 3x3 convolutions, batch norm folded at export, ReLU, nearest
upsampling and additions: operations that OpenCV's ``cv2.dnn`` runs in every version the
project supports.

A global-context branch adds the average of the deepest features over the whole picture
(squeeze-and-excitation and ParseNet use the same idea): a cube's colour depends on the light,
and the light is best judged from everything in view (the tray's print, the table, the other
cubes), more than any cell's receptive field holds.

Output channels (``HEADS``): in-tray cube centre (logit), out-of-tray cube centre (logit), tray
floor corner (logit), seven colour logits, and the centre's sub-cell offset (x, y, through a
sigmoid in the decoder).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional

from vision.netinput import INPUT_CHANNELS

HEADS = ("cube", "outside", "corner", *(f"colour:{i}" for i in range(7)), "dx", "dy")
CUBE, OUTSIDE, CORNER = 0, 1, 2
COLOUR = slice(3, 10)
OFFSET = slice(10, 12)


def conv(cin: int, cout: int, stride: int = 1, dilation: int = 1) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, stride, padding=dilation, dilation=dilation, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
    )


def pointwise(cin: int, cout: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout),
                         nn.ReLU(inplace=True))


BASE_CHANNELS = (16, 24, 40, 64, 96)  # at strides 2, 4, 8, 16 and 32


def check_channels(c) -> tuple[int, ...]:
    """``c`` as one positive width per stride, or ValueError."""
    c = tuple(c)
    if len(c) != len(BASE_CHANNELS) or min(c) < 1:
        raise ValueError(f"five positive widths, one per stride, as 16,24,40,96,160, not {c}")
    return c


class CubeNet(nn.Module):
    def __init__(self, width: float = 1, channels: tuple[int, ...] | None = None):
        super().__init__()
        # ``width`` scales every layer (1.5: about 2.4 times the time per picture in cv2.dnn);
        # ``channels`` sets each stride's width instead. Why: most parameters sit at strides
        # 16 and 32, most time at 2 and 4, so widening only the deep stages is nearly free
        # (16, 24, 40, 96, 160: twice the parameters for 6 % more time; vision/README.md)
        c = check_channels(channels or [round(n * width) for n in BASE_CHANNELS])
        self.stem = nn.Sequential(conv(INPUT_CHANNELS, c[0], 2), conv(c[0], c[1], 2),
                                  conv(c[1], c[1]))                       # stride 4
        self.down8 = nn.Sequential(conv(c[1], c[2], 2), conv(c[2], c[2]))     # stride 8
        self.down16 = nn.Sequential(conv(c[2], c[3], 2), conv(c[3], c[3]),
                                    conv(c[3], c[3], dilation=2))             # stride 16
        self.down32 = nn.Sequential(conv(c[3], c[4], 2), conv(c[4], c[4]))     # stride 32
        self.lat32 = pointwise(c[4], c[3])
        # the whole picture's average: the light's colour and the tray's print, seen at once
        self.context = nn.Conv2d(c[4], c[3], 1)
        self.fuse16 = conv(c[3], c[2])
        self.lat8 = pointwise(c[2], c[2])
        self.fuse8 = conv(c[2], c[1])
        self.lat4 = pointwise(c[1], c[1])
        self.fuse4 = conv(c[1], c[1])
        self.head = nn.Conv2d(c[1], len(HEADS), 1)
        with torch.no_grad():  # start with few centres everywhere (focal-loss practice)
            self.head.bias.zero_()
            self.head.bias[[CUBE, OUTSIDE, CORNER]] = -4.0
            self.context.weight.zero_()  # a network trained without it goes on unchanged
            self.context.bias.zero_()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        f4 = self.stem(x)
        f8 = self.down8(f4)
        f16 = self.down16(f8)
        f32 = self.down32(f16)
        u = self.lat32(f32)
        # expanded, not broadcast: OpenCV 5 fuses an addition after a convolution only when
        # both sides have the same shape
        u = u + self.context(functional.adaptive_avg_pool2d(f32, 1)).expand_as(u)
        u = functional.interpolate(u, scale_factor=2.0, mode="nearest") + f16
        u = self.fuse16(u)
        u = functional.interpolate(u, scale_factor=2.0, mode="nearest") + self.lat8(f8)
        u = self.fuse8(u)
        u = functional.interpolate(u, scale_factor=2.0, mode="nearest") + self.lat4(f4)
        return self.head(self.fuse4(u))
