"""Small modules for dlc-import's tests, built as `encoder.py:Class`."""

import torch


class EncoderClassifier(torch.nn.Module):
    """torch.nn.TransformerEncoder (post-norm, GELU, batch first) over a
    sequence of feature vectors, mean-pooled over positions, then a linear
    classifier."""

    def __init__(self, d_model=32, heads=4, layers=2, classes=5, dropout=0.1, norm_first=False):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(d_model, heads, 4 * d_model, dropout=dropout,
                                                 activation="gelu", batch_first=True,
                                                 norm_first=norm_first, layer_norm_eps=1e-6)
        self.encoder = torch.nn.TransformerEncoder(layer, layers)
        self.head = torch.nn.Linear(d_model, classes)

    def forward(self, x):
        return self.head(self.encoder(x).mean(dim=1))


class Unsupported(torch.nn.Module):
    """A convolution followed by an activation the dialect lacks."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3)
        self.act = torch.nn.Mish()

    def forward(self, x):
        y = self.conv(x)
        return torch.flatten(torch.nn.functional.adaptive_avg_pool2d(self.act(y), 1), 1)


class Cumsum(torch.nn.Module):
    """A function the dialect lacks, called in forward."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(torch.cumsum(x, dim=1))


class HardActivations(torch.nn.Module):
    """Every spelling of relu6, hardswish and hardsigmoid dlc-import maps;
    `bounds` other than (0, 6) give a hardtanh the dialect lacks."""

    def __init__(self, bounds=(0.0, 6.0)):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)
        self.relu6 = torch.nn.ReLU6()
        self.hardtanh = torch.nn.Hardtanh(*bounds)
        self.hardswish = torch.nn.Hardswish()
        self.hardsigmoid = torch.nn.Hardsigmoid()

    def forward(self, x):
        F = torch.nn.functional
        x = self.hardtanh(self.relu6(self.fc(x)))
        x = F.hardtanh(F.relu6(x), 0.0, 6.0)
        return F.hardsigmoid(F.hardswish(self.hardsigmoid(self.hardswish(x))))
