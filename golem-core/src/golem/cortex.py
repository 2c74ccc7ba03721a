"""The conv encoder (cortex) that image-like sensors build: the visual sensor's, and depth's and thermal's."""

from __future__ import annotations

from functools import cache

from golem.images import SIZE

#: Conv channels of the cortex, layer by layer (``cortical_depth`` of them are used).
CORTEX_CHANNELS = (32, 64, 64, 128, 128, 256)
FEATURES = 256


@cache
def _conv_cortex_class() -> type:
    """``nn.Sequential`` that hands its convolutions the input in channels-last memory order.

    Same parameters, state-dict keys and results as a plain ``nn.Sequential``: only the memory layout
    of the input changes, which lets oneDNN's CPU convolutions skip a reorder (a whole training step
    measured 1.26× faster on this project's CPUs, ``bench/bench_precision.py``). Built on first use, so
    importing this module does not import torch.
    """
    import torch
    from torch import nn

    class ConvCortex(nn.Sequential):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            if x.dim() == 4:
                x = x.contiguous(memory_format=torch.channels_last)
            return super().forward(x)

    return ConvCortex


def conv_cortex(in_channels: int, depth: int, *, size: int = SIZE, channels=CORTEX_CHANNELS, features: int = FEATURES):
    """``[N, in_channels, size, size]`` → ``[N, features]``: ``depth`` × (conv 3×3 stride 2 + ReLU), flatten,
    Linear + ReLU.

    The module's ``out_features`` is ``features``.
    """
    from torch import nn

    layers: list[nn.Module] = []
    c, hw = in_channels, size
    for out_c in channels[:depth]:
        layers += [nn.Conv2d(c, out_c, kernel_size=3, stride=2, padding=1), nn.ReLU()]
        c, hw = out_c, (hw + 1) // 2
    layers += [nn.Flatten(), nn.Linear(c * hw * hw, features), nn.ReLU()]
    module = _conv_cortex_class()(*layers)
    # He initialisation: with PyTorch's default the features of different frames start
    # almost identical and training collapses to predicting button frequencies.
    for layer in module.modules():
        if isinstance(layer, (nn.Conv2d, nn.Linear)):
            nn.init.kaiming_normal_(layer.weight, nonlinearity="relu")
            nn.init.zeros_(layer.bias)
    module.out_features = features
    return module
