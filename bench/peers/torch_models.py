"""dlc's models in plain PyTorch (no torchvision, no transformers), op for op
as models/*.mlir states them, with the same initializers.

Each model is an nn.Module whose forward takes the model file's inputs and
labels and returns the loss, so that torch.compile sees the loss too.
make_batch draws the synthetic batch that common.inputs_of describes.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

import common


def _has_sdpa():
    return hasattr(F, "scaled_dot_product_attention")


def attention(q, k, v, scale, dropout, training, causal=False, mask=None):
    """softmax(q k^T * scale + mask) with dropout, times v. PyTorch 2's fused
    scaled_dot_product_attention where it exists (what a PyTorch user writes
    today), the explicit product otherwise; the same function either way."""
    p = dropout if training else 0.0
    if _has_sdpa():
        # Every model here scales by 1/sqrt(head size), SDPA's default.
        assert abs(scale - 1 / math.sqrt(q.shape[-1])) < 1e-12, scale
        if mask is not None:
            mask = mask.to(q.dtype)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p,
                                              is_causal=causal)
    scores = torch.matmul(q, k.transpose(-1, -2)) * scale
    if mask is not None:
        scores = scores + mask
    if causal:
        n = scores.shape[-1]
        blocked = torch.triu(torch.ones(n, n, dtype=torch.bool, device=scores.device), 1)
        scores = scores.masked_fill(blocked, float("-inf"))
    probs = F.dropout(torch.softmax(scores, dim=-1), p, training)
    return torch.matmul(probs, v)


def attention_impl():
    return "scaled_dot_product_attention" if _has_sdpa() else "explicit"


def kaiming_conv(conv):
    nn.init.kaiming_normal_(conv.weight, mode="fan_out", nonlinearity="relu")
    if conv.bias is not None:
        nn.init.zeros_(conv.bias)
    return conv


def normal_linear(lin, std):
    nn.init.normal_(lin.weight, std=std)
    if lin.bias is not None:
        nn.init.zeros_(lin.bias)
    return lin


class MLP(nn.Module):
    """models/mlp.mlir: linear(256), relu, linear(10); nn.Linear's default
    init is the file's kaiming_uniform(a = sqrt 5) and U(+-1/sqrt(fan_in))."""
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 256)
        self.fc2 = nn.Linear(256, 10)

    def forward(self, x, labels):
        return F.cross_entropy(self.fc2(F.relu(self.fc1(x))), labels)


class ConvBN(nn.Sequential):
    def __init__(self, cin, cout, k, stride=1, pad=0):
        super().__init__(kaiming_conv(nn.Conv2d(cin, cout, k, stride, pad, bias=False)),
                         nn.BatchNorm2d(cout))


class SmallConvNet(nn.Module):
    """models/small_convnet.mlir."""
    def __init__(self):
        super().__init__()
        self.stem = ConvBN(3, 16, 3, pad=1)
        self.c1 = ConvBN(16, 16, 3, pad=1)
        self.c2 = ConvBN(16, 16, 3, pad=1)
        self.c3 = ConvBN(16, 32, 3, stride=2, pad=1)
        self.fc = nn.Linear(32, 10)

    def forward(self, x, labels):
        s = F.relu(self.stem(x))
        r = F.relu(self.c2(F.relu(self.c1(s))) + s)
        d = F.relu(self.c3(F.max_pool2d(r, 2, 2)))
        d = F.avg_pool2d(d, 2, 2)
        f = d.mean(dim=(2, 3))
        return F.cross_entropy(self.fc(f), labels)


class Block(nn.Module):
    """A transformer layer: BERT's (post-norm, separate q, k, v, exact GELU)
    or GPT's (pre-norm, one qkv projection, tanh GELU), as
    transformer_block in models/generate.py."""

    def __init__(self, d, heads, eps, pre_norm, fused_qkv, gelu, proj_std, causal):
        super().__init__()
        self.heads, self.pre_norm, self.fused_qkv, self.gelu, self.causal = (
            heads, pre_norm, fused_qkv, gelu, causal)
        if fused_qkv:
            self.qkv = normal_linear(nn.Linear(d, 3 * d), 0.02)
        else:
            self.q = normal_linear(nn.Linear(d, d), 0.02)
            self.k = normal_linear(nn.Linear(d, d), 0.02)
            self.v = normal_linear(nn.Linear(d, d), 0.02)
        self.proj = normal_linear(nn.Linear(d, d), proj_std)
        self.ln1 = nn.LayerNorm(d, eps=eps)
        self.fc = normal_linear(nn.Linear(d, 4 * d), 0.02)
        self.fc_proj = normal_linear(nn.Linear(4 * d, d), proj_std)
        self.ln2 = nn.LayerNorm(d, eps=eps)

    def forward(self, h, mask=None):
        n, s, d = h.shape
        hd = d // self.heads

        def heads(t):
            return t.reshape(n, s, self.heads, hd).permute(0, 2, 1, 3)

        a = self.ln1(h) if self.pre_norm else h
        if self.fused_qkv:
            q, k, v = self.qkv(a).split(d, dim=2)
        else:
            q, k, v = self.q(a), self.k(a), self.v(a)
        ctx = attention(heads(q), heads(k), heads(v), 1 / math.sqrt(hd), 0.1, self.training,
                        causal=self.causal, mask=mask)
        ctx = ctx.permute(0, 2, 1, 3).reshape(n, s, d)
        h = h + F.dropout(self.proj(ctx), 0.1, self.training)
        if not self.pre_norm:
            h = self.ln1(h)
        m = self.ln2(h) if self.pre_norm else h
        m = F.gelu(self.fc(m), approximate=self.gelu)
        h = h + F.dropout(self.fc_proj(m), 0.1, self.training)
        if not self.pre_norm:
            h = self.ln2(h)
        return h


class TinyTransformer(nn.Module):
    """models/tiny_transformer.mlir: one pre-norm causal layer, 2 heads of 16,
    vocabulary 64, context 16, an untied language-model head."""
    def __init__(self):
        super().__init__()
        self.wte = nn.Parameter(torch.randn(64, 32) * 0.02)
        self.wpe = nn.Parameter(torch.randn(16, 32) * 0.01)
        self.block = Block(32, 2, 1e-5, True, False, "tanh", 0.02, True)
        self.ln_f = nn.LayerNorm(32)
        self.lm_head = normal_linear(nn.Linear(32, 64, bias=False), 0.02)
        self.register_buffer("positions", torch.arange(16), persistent=False)

    def forward(self, tokens, labels):
        h = F.embedding(tokens, self.wte) + F.embedding(self.positions, self.wpe)
        h = self.block(F.dropout(h, 0.1, self.training))
        logits = self.lm_head(self.ln_f(h))
        return F.cross_entropy(logits.reshape(-1, 64), labels.reshape(-1))


class Bottleneck(nn.Module):
    def __init__(self, cin, width, stride):
        super().__init__()
        self.conv1 = ConvBN(cin, width, 1)
        self.conv2 = ConvBN(width, width, 3, stride=stride, pad=1)  # v1.5
        self.conv3 = ConvBN(width, width * 4, 1)
        self.downsample = (ConvBN(cin, width * 4, 1, stride=stride)
                           if stride != 1 or cin != width * 4 else None)

    def forward(self, x):
        y = F.relu(self.conv1(x))
        y = F.relu(self.conv2(y))
        y = self.conv3(y)
        return F.relu(y + (self.downsample(x) if self.downsample is not None else x))


class ResNet50(nn.Module):
    """models/resnet50.mlir: ResNet-50 v1.5 (torchvision's), 1000 classes."""
    def __init__(self):
        super().__init__()
        self.stem = ConvBN(3, 64, 7, stride=2, pad=3)
        layers, cin = [], 64
        for width, blocks, stride in [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]:
            for i in range(blocks):
                layers.append(Bottleneck(cin, width, stride if i == 0 else 1))
                cin = width * 4
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(2048, 1000)

    def forward(self, x, labels):
        h = F.max_pool2d(F.relu(self.stem(x)), 3, 2, 1)
        h = self.layers(h).mean(dim=(2, 3))
        return F.cross_entropy(self.fc(h), labels)


class VGG16(nn.Module):
    """models/vgg16.mlir: configuration D without batch norm, with the two
    dropouts of the classifier; the adaptive 7x7 pool is the identity at 224."""
    def __init__(self):
        super().__init__()
        layers, cin = [], 3
        for v in [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M",
                  512, 512, 512, "M"]:
            if v == "M":
                layers.append(nn.MaxPool2d(2, 2))
            else:
                layers += [kaiming_conv(nn.Conv2d(cin, v, 3, padding=1)), nn.ReLU(inplace=True)]
                cin = v
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(
            normal_linear(nn.Linear(25088, 4096), 0.01), nn.ReLU(inplace=True), nn.Dropout(0.5),
            normal_linear(nn.Linear(4096, 4096), 0.01), nn.ReLU(inplace=True), nn.Dropout(0.5),
            normal_linear(nn.Linear(4096, 1000), 0.01))

    def forward(self, x, labels):
        h = torch.flatten(self.features(x), 1)
        return F.cross_entropy(self.classifier(h), labels)


class BertBase(nn.Module):
    """models/bert_base.mlir: BERT-base with the masked-LM and next-sentence
    heads (BertForPreTraining's), the decoder tied to the word embeddings;
    loss = masked-LM cross-entropy + next-sentence cross-entropy."""
    def __init__(self):
        super().__init__()
        d, vocab, self.seq = 768, 30522, 128
        self.word = nn.Parameter(torch.randn(vocab, d) * 0.02)
        self.position = nn.Parameter(torch.randn(512, d) * 0.02)
        self.token_type = nn.Parameter(torch.randn(2, d) * 0.02)
        self.ln = nn.LayerNorm(d, eps=1e-12)
        self.layers = nn.ModuleList(
            Block(d, 12, 1e-12, False, False, "none", 0.02, False) for _ in range(12))
        self.pooler = normal_linear(nn.Linear(d, d), 0.02)
        self.nsp = normal_linear(nn.Linear(d, 2), 0.02)
        self.transform = normal_linear(nn.Linear(d, d), 0.02)
        self.transform_ln = nn.LayerNorm(d, eps=1e-12)
        self.decoder_bias = nn.Parameter(torch.zeros(vocab))
        self.register_buffer("positions", torch.arange(self.seq), persistent=False)

    def forward(self, input_ids, token_type_ids, attention_mask, masked_lm_labels,
                next_sentence_label):
        h = (F.embedding(input_ids, self.word) + F.embedding(self.positions, self.position)
             + F.embedding(token_type_ids, self.token_type))
        h = F.dropout(self.ln(h), 0.1, self.training)
        for layer in self.layers:
            h = layer(h, attention_mask)
        nsp = self.nsp(torch.tanh(self.pooler(h[:, 0])))
        t = self.transform_ln(F.gelu(self.transform(h)))
        logits = F.linear(t, self.word, self.decoder_bias)
        mlm = F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                              masked_lm_labels.reshape(-1), ignore_index=-100)
        return mlm + F.cross_entropy(nsp, next_sentence_label)


class GPT2(nn.Module):
    """models/gpt2.mlir: GPT-2 small, context 1024, the output projection tied
    to the token embedding; residual projections initialized with
    0.02 / sqrt(2 x 12)."""
    def __init__(self):
        super().__init__()
        d, vocab, self.seq, layers = 768, 50257, 1024, 12
        self.wte = nn.Parameter(torch.randn(vocab, d) * 0.02)
        self.wpe = nn.Parameter(torch.randn(self.seq, d) * 0.01)
        self.layers = nn.ModuleList(
            Block(d, 12, 1e-5, True, True, "tanh", 0.02 / math.sqrt(2 * layers), True)
            for _ in range(layers))
        self.ln_f = nn.LayerNorm(d, eps=1e-5)
        self.register_buffer("positions", torch.arange(self.seq), persistent=False)

    def forward(self, input_ids, labels):
        h = F.embedding(input_ids, self.wte) + F.embedding(self.positions, self.wpe)
        h = F.dropout(h, 0.1, self.training)
        for layer in self.layers:
            h = layer(h)
        logits = F.linear(self.ln_f(h), self.wte)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))


MODELS = {"mlp": MLP, "small_convnet": SmallConvNet, "tiny_transformer": TinyTransformer,
          "resnet50": ResNet50, "vgg16": VGG16, "bert_base": BertBase, "gpt2": GPT2}


def build(name, seed):
    torch.manual_seed(seed)
    return MODELS[name]()


def make_batch(name, batch, seed, device):
    """The synthetic batch, drawn on the CPU from the seed, then moved."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for _, kind, shape in common.inputs_of(name, batch):
        if kind == "normal":
            t = torch.randn(shape, generator=g)
        elif kind == "zeros":
            t = torch.zeros(shape)
        else:
            t = torch.randint(0, kind, shape, generator=g)
        out.append(t.to(device))
    return out


def parameter_count(model):
    """Trainable elements; a tied weight counts once (parameters() dedups)."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def has_convolutions(model):
    """Whether the model convolves (so its activations have a layout)."""
    return any(isinstance(m, torch.nn.Conv2d) for m in model.modules())
