"""The five model families of bench_families.py and profile_families.py: each builds its graph and
gives (leaves, loss). Seeds are fixed, so every run measures the same graphs."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

import common


@dataclass
class Family:
    key: str  # prefix of the RESULT names
    name: str
    description: str
    build: Callable[[], tuple[list, torch.Tensor]]
    goal_plain: float  # trace / plain: 2.0 where nodes are small, 1.3 where the engine's work dominates
    repeat: int  # rounds of the recording comparison
    open_repeat: int  # rounds of the opening


def mlp():
    model, loss = common.big_model()
    return list(model.parameters()), loss


def gru(steps: int = 25, batch: int = 16, width: int = 48):
    torch.manual_seed(0)
    cell = torch.nn.GRUCell(width, width)
    xs = torch.randn(steps, batch, width)
    h = torch.zeros(batch, width)
    for x in xs:
        h = cell(x, h)
    return list(cell.parameters()), (h ** 2).mean()


def conv(blocks: int = 12, channels: int = 8):
    torch.manual_seed(0)
    parts: list[torch.nn.Module] = []
    for i in range(blocks):
        parts += [torch.nn.Conv2d(3 if i == 0 else channels, channels, 3, padding=1),
                  torch.nn.BatchNorm2d(channels), torch.nn.ReLU()]
    model = torch.nn.Sequential(*parts)
    loss = (model(torch.randn(4, 3, 16, 16)) ** 2).mean()
    return list(model.parameters()), loss


def transformer():
    model, loss = common.transformer(layers=1)
    return list(model.parameters()), loss


def loop(nodes: int = 10_000, size: int = 16):
    # one AccumulateGrad, nodes - 2 element-wise multiplications, one sum: exactly `nodes` nodes
    torch.manual_seed(0)
    x = torch.randn(size, requires_grad=True)
    y = x
    for _ in range(nodes - 2):
        y = y * 0.9999
    return [x], y.sum()


FAMILIES = [
    Family("mlp", "MLP", "200 x Linear(64)+Tanh, batch 32 (common.big_model)", mlp, 2.0, 21, 3),
    Family("gru", "GRU", "GRUCell(48) unrolled 25 steps, batch 16", gru, 2.0, 41, 3),
    Family("conv", "conv", "12 x (Conv2d 3x3 -> 8 channels, BatchNorm2d, ReLU) on 4 x 3 x 16 x 16",
           conv, 1.3, 41, 3),
    Family("transformer", "transformer", "1 x TransformerEncoderLayer(256, 4 heads), sequence 64, batch 8",
           transformer, 1.3, 21, 3),
    Family("loop", "loop", "10,000-node element-wise loop (y = y * 0.9999 on 16 numbers)", loop, 2.0, 7, 2),
]
