"""The conv encoder (cortex) that image-like sensors build: the visual sensor's, and depth's and thermal's."""

from __future__ import annotations

from golem.images import SIZE

#: Conv channels of the cortex, layer by layer (``cortical_depth`` of them are used).
CORTEX_CHANNELS = (32, 64, 64, 128, 128, 256)
FEATURES = 256


def conv_cortex(in_channels: int, depth: int, *, size: int = SIZE, channels=CORTEX_CHANNELS, features: int = FEATURES):
    """``[N, in_channels, size, size]`` → ``[N, features]``: ``depth`` × (conv 3×3 stride 2 + ReLU), flatten, Linear + ReLU.

    The module's ``out_features`` is ``features``.
    """
    from torch import nn

    layers: list[nn.Module] = []
    c, hw = in_channels, size
    for out_c in channels[:depth]:
        layers += [nn.Conv2d(c, out_c, kernel_size=3, stride=2, padding=1), nn.ReLU()]
        c, hw = out_c, (hw + 1) // 2
    layers += [nn.Flatten(), nn.Linear(c * hw * hw, features), nn.ReLU()]
    module = nn.Sequential(*layers)
    # He initialisation: with PyTorch's default the features of different frames start
    # almost identical and training collapses to predicting button frequencies.
    for layer in module.modules():
        if isinstance(layer, (nn.Conv2d, nn.Linear)):
            nn.init.kaiming_normal_(layer.weight, nonlinearity="relu")
            nn.init.zeros_(layer.bias)
    module.out_features = features
    return module
