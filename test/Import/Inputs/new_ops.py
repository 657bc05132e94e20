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


class Einsums(torch.nn.Module):
    """torch.einsum as models write it: MaxViT's attention over grouped heads
    (both of its equations, spaces and all), an implicit output, a sum over
    a label of one operand, a contraction over the batch-carrying label's
    neighbour with a transposed operand, and a one-operand transpose."""

    def __init__(self, dim=8, heads=2, classes=5):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.mix = torch.nn.Parameter(torch.randn(dim, dim) / dim ** 0.5)
        self.gate = torch.nn.Parameter(torch.randn(3, dim))
        self.head = torch.nn.Linear(dim, classes)

    def forward(self, x):  # x: [B, G, P, D]
        b, g, p, d = x.shape
        q, k, v = torch.chunk(self.qkv(x), 3, dim=-1)
        q, k, v = (t.reshape(b, g, p, self.heads, d // self.heads).permute(0, 1, 3, 2, 4)
                   for t in (q, k, v))
        att = torch.einsum("B G H I D, B G H J D -> B G H I J", q, k * 0.5).softmax(dim=-1)
        out = torch.einsum("B G H I J, B G H J D -> B G H I D", att, v)
        out = out.permute(0, 1, 3, 2, 4).reshape(b, g, p, d)
        out = torch.einsum("bgpd,ed", out, self.mix).permute(0, 2, 3, 1)  # implicit: "begp"
        out = out + torch.einsum("bgpd,cd->bgpd", out, self.gate)  # c summed on one side
        pooled = torch.einsum("bgpd->bdg", out).mean(dim=2)  # a transpose
        return self.head(pooled)


class BadEinsum(torch.nn.Module):
    """An einsum dlc-import refuses: `equation` over x viewed as [B, 4, 4]
    (and a [4, 4] weight where the equation names two operands)."""

    def __init__(self, equation="bii->bi"):
        super().__init__()
        self.equation = equation
        self.w = torch.nn.Parameter(torch.randn(4, 4))

    def forward(self, x):
        x = x.view(-1, 4, 4)
        if "," in self.equation:
            return torch.einsum(self.equation, x, self.w).flatten(1)
        return torch.einsum(self.equation, x).flatten(1)


class MaxVitAttention(torch.nn.Module):
    """torchvision's own MaxViT attention layer: its einsums and its relative
    position bias, a [positions, heads] parameter gathered by a constant
    index buffer. Input [B, G, P, D] with P = 4 (2x2 windows), D = 8."""

    def __init__(self, classes=5):
        super().__init__()
        from torchvision.models.maxvit import RelativePositionalMultiHeadAttention
        self.attn = RelativePositionalMultiHeadAttention(8, 4, 4)
        self.head = torch.nn.Linear(8, classes)

    def forward(self, x):
        return self.head(self.attn(x).mean(dim=(1, 2)))
