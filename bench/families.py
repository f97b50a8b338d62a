"""The model families of bench_families.py, bench_trace_memory.py and profile_families.py: each
builds its graph and gives (leaves, loss). Seeds are fixed, so every run measures the same graphs.

Each family is of one kind, which sets its recording goal (trace / plain torch.autograd.grad):
small-op graphs (many cheap nodes: the recording's Python per node shows) <= 2.5x, engine-heavy
ones (few nodes, each a real kernel) <= 1.6x. The first five are those the benchmark was tuned on
in earlier passes; the last two (a ResNet-style block stack, an LSTM whose hidden states carry the
learner's hooks) were added in the fifth pass and never tuned for."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

import common


SMALL_OP, ENGINE_HEAVY = "small-op", "engine-heavy"
GOAL_PLAIN = {SMALL_OP: 2.5, ENGINE_HEAVY: 1.6}  # trace / plain torch.autograd.grad, by kind


@dataclass
class Family:
    key: str  # prefix of the RESULT names
    name: str
    description: str
    build: Callable[[], tuple[list, torch.Tensor]]
    kind: str  # SMALL_OP or ENGINE_HEAVY
    repeat: int  # rounds of the recording comparison
    open_repeat: int  # rounds of the opening
    tuned: bool = True  # measured, and the lab tuned on it, in the earlier passes

    @property
    def goal_plain(self) -> float:
        return GOAL_PLAIN[self.kind]


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


class _Block(torch.nn.Module):
    """A ResNet basic block: relu(bn(conv(relu(bn(conv(x))))) + x), convolutions without bias."""

    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(channels)
        self.conv2 = torch.nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(channels)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(y)) + x)


def resnet(blocks: int = 6, channels: int = 16):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, channels, 3, padding=1, bias=False),
                                torch.nn.BatchNorm2d(channels), torch.nn.ReLU(),
                                *[_Block(channels) for _ in range(blocks)],
                                torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(channels, 10))
    loss = torch.nn.functional.cross_entropy(model(torch.randn(8, 3, 32, 32)), torch.arange(8) % 10)
    return list(model.parameters()), loss


def lstm_hooked(steps: int = 20, batch: int = 16, width: int = 32):
    """An LSTM cell unrolled, with a hook of the learner's on every hidden state (one that keeps the
    norm of the gradient arriving there, as a learner watching vanishing gradients writes it): the
    recording runs them, and copies what passes where they could edit it."""
    torch.manual_seed(0)
    cell = torch.nn.LSTMCell(width, width)
    xs = torch.randn(steps, batch, width)
    h = c = torch.zeros(batch, width)
    norms: dict[int, float] = {}
    for t, x in enumerate(xs):
        h, c = cell(x, (h, c))
        h.register_hook(lambda g, t=t: norms.__setitem__(t, float(g.norm())))
    return list(cell.parameters()), (h ** 2).mean()


FAMILIES = [
    Family("mlp", "MLP", "200 x Linear(64)+Tanh, batch 32 (common.big_model)", mlp, SMALL_OP, 21, 7),
    Family("gru", "GRU", "GRUCell(48) unrolled 25 steps, batch 16", gru, SMALL_OP, 41, 7),
    Family("conv", "conv", "12 x (Conv2d 3x3 -> 8 channels, BatchNorm2d, ReLU) on 4 x 3 x 16 x 16",
           conv, ENGINE_HEAVY, 41, 7),
    Family("transformer", "transformer", "1 x TransformerEncoderLayer(256, 4 heads), sequence 64, batch 8",
           transformer, ENGINE_HEAVY, 21, 7),
    Family("loop", "loop", "10,000-node element-wise loop (y = y * 0.9999 on 16 numbers)", loop, SMALL_OP, 9, 5),
    Family("resnet", "ResNet", "Conv2d stem + 6 basic blocks (16 channels, batch norm, skip) + pool + Linear, "
           "cross-entropy, on 8 x 3 x 32 x 32", resnet, ENGINE_HEAVY, 21, 7, tuned=False),
    Family("lstm", "LSTM with hooks", "LSTMCell(32) unrolled 20 steps, batch 16, a hook of the learner's on "
           "every hidden state", lstm_hooked, SMALL_OP, 41, 7, tuned=False),
]
