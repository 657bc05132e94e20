"""A small model with what torchvision's EfficientNets, ConvNeXts and ViTs
needed of dlc-import: stochastic depth in both modes, ConvNeXt's layer norm
over channels (permute, F.layer_norm, permute back), and a class token
expanded over the batch next to a position embedding. Built as
`new_ops.py:Class`."""

import torch
from torchvision.models.convnext import LayerNorm2d
from torchvision.ops import StochasticDepth


class NewOps(torch.nn.Module):
    def __init__(self, channels=8, classes=5, p=0.2):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, channels, 3, padding=1)
        self.norm = LayerNorm2d(channels)
        self.block = torch.nn.Conv2d(channels, channels, 3, padding=1, groups=channels)
        self.row = StochasticDepth(p, "row")
        self.batch = StochasticDepth(p, "batch")
        self.class_token = torch.nn.Parameter(torch.randn(1, 1, channels))
        self.pos = torch.nn.Parameter(torch.randn(1, 17, channels))
        self.head = torch.nn.Linear(channels, classes)

    def forward(self, x):
        x = self.stem(x)
        x = x + self.row(self.block(self.norm(x)))
        x = x + self.batch(torch.relu(x))
        n = x.shape[0]
        tokens = x.flatten(2).transpose(1, 2)  # [N, 16, C]
        tokens = torch.cat([self.class_token.expand(n, -1, -1), tokens], dim=1) + self.pos
        return self.head(tokens[:, 0])


class StochasticHead(torch.nn.Module):
    """A linear classifier whose logits go through stochastic depth: which
    samples dlc's step kept can be read back from its loss."""

    def __init__(self, mode="row", p=0.5):
        super().__init__()
        self.fc = torch.nn.Linear(8, 5)
        self.sd = StochasticDepth(p, mode)

    def forward(self, x):
        return self.sd(self.fc(x))
