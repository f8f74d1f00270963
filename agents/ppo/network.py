"""The policy/value network every learning agent uses, built from a game's declared layout.

A residual CNN over the board planes (hex boards: 3x3 kernels with the two non-neighbour corners
masked), the vector features mixed into the trunk as a per-channel bias, a fully convolutional
placement head (one logit per grid cell x action channel), a small MLP head for the non-spatial
actions and a value head. Its size depends on the board's channels and the config's width and
depth, never on the number of actions: a placement head is one 1x1 convolution.

Pure torch: no Ray, so the ``ppo:`` agent loads a trained network anywhere.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from envs.core.errors import ConfigError
from envs.core.layout import HEX_KERNEL_MASK, GameLayout

#: logit of an illegal action after masking (what RLlib's masking examples use as FLOAT_MIN)
MASKED_LOGIT = -3.4e38


@dataclass(frozen=True)
class NetConfig:
    """Width and depth of the network; everything else follows from the game's layout.

    ``value_scale`` multiplies the value head's output, so the network predicts returns in units
    of ``value_scale`` points (about one game's score) and its weights stay O(1). ``mask_input``
    feeds the legal mask in as well: one input plane per placement channel (where that placement
    is legal) and the non-spatial part of the mask among the vector features, so the network
    need not learn which shapes fit where.
    """

    width: int = 48
    blocks: int = 3
    vector_hidden: int = 64
    head_hidden: int = 64
    value_scale: float = 100.0
    mask_input: bool = True

    @classmethod
    def from_dict(cls, values: dict[str, Any] | None) -> NetConfig:
        """Build from a config mapping; unknown keys and bad values give a ConfigError."""
        values = dict(values or {})
        known = {f.name: f.type for f in fields(cls)}
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise ConfigError(f"network: unknown key(s) {', '.join(unknown)}; known: {', '.join(known)}")
        for key in ("width", "blocks", "vector_hidden", "head_hidden"):
            if key in values and (isinstance(values[key], bool) or not isinstance(values[key], int)
                                  or not 1 <= values[key] <= 1024):
                raise ConfigError(f"network.{key} must be an integer in 1..1024, got {values[key]!r}")
        if "mask_input" in values and not isinstance(values["mask_input"], bool):
            raise ConfigError(f"network.mask_input must be true or false, got {values['mask_input']!r}")
        if "value_scale" in values:
            scale = values["value_scale"]
            if isinstance(scale, bool) or not isinstance(scale, int | float) or not scale > 0:
                raise ConfigError(f"network.value_scale must be a positive number, got {scale!r}")
            values["value_scale"] = float(scale)
        return cls(**values)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class BoardConv(nn.Conv2d):
    """3x3 convolution; on a hex grid the two corners that are not neighbours are zeroed."""

    def __init__(self, in_channels: int, out_channels: int, hex_grid: bool):
        super().__init__(in_channels, out_channels, 3, padding=1)
        mask = torch.from_numpy(HEX_KERNEL_MASK) if hex_grid else torch.ones(3, 3)
        self.register_buffer("kernel_mask", mask.view(1, 1, 3, 3), persistent=False)
        self.hex_grid = hex_grid

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weight = self.weight * self.kernel_mask if self.hex_grid else self.weight
        return F.conv2d(x, weight, self.bias, padding=1)


class ResidualBlock(nn.Module):
    """conv-relu-conv plus the input, then relu; padding cells are kept at zero."""

    def __init__(self, width: int, hex_grid: bool):
        super().__init__()
        self.conv1 = BoardConv(width, width, hex_grid)
        self.conv2 = BoardConv(width, width, hex_grid)

    def forward(self, x: torch.Tensor, cells: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.conv1(x)) * cells
        return F.relu(x + self.conv2(y)) * cells


class BoardPolicyValueNet(nn.Module):
    """Flat observation (B, obs_size) and legal mask (B, num_actions) -> (action logits
    (B, num_actions), value (B,)). The mask is an input only with ``config.mask_input``; the
    logits are not masked here (see :func:`masked_logits`)."""

    def __init__(self, layout: GameLayout, config: NetConfig):
        super().__init__()
        layout.validate()
        obs, act = layout.observation, layout.action
        self.config = config
        self.num_actions = act.num_actions
        self.obs_size = obs.size
        height, width = obs.grid
        plane_index = np.where(obs.plane_index >= 0, obs.plane_index, obs.size).astype(np.int64)
        self.register_buffer("plane_index", torch.from_numpy(plane_index.ravel()), persistent=False)
        self.register_buffer("vector_index", torch.from_numpy(obs.vector_index.astype(np.int64)),
                             persistent=False)
        cells = obs.board_cells() | (act.spatial_index >= 0).any(axis=0)
        self.register_buffer("cells", torch.from_numpy(cells.astype(np.float32)).view(1, 1, height, width),
                             persistent=False)
        self.cell_count = float(cells.sum())
        self.register_buffer("action_source", torch.from_numpy(act.source_index()), persistent=False)
        spatial_index = np.where(act.spatial_index >= 0, act.spatial_index, act.num_actions).astype(np.int64)
        self.register_buffer("mask_plane_index", torch.from_numpy(spatial_index.ravel()), persistent=False)
        self.register_buffer("mask_vector_index", torch.from_numpy(act.nonspatial.astype(np.int64)),
                             persistent=False)
        mask_planes = act.channels if config.mask_input else 0
        mask_vector = int(act.nonspatial.shape[0]) if config.mask_input else 0
        self.grid = (height, width)
        self.in_channels = obs.channels
        self.action_channels = act.channels
        self.num_nonspatial = int(act.nonspatial.shape[0])
        w = config.width
        self.stem = BoardConv(obs.channels + mask_planes, w, obs.hex_grid)
        self.vector_in = nn.Sequential(nn.Linear(max(obs.vector_size + mask_vector, 1), config.vector_hidden),
                                       nn.ReLU())
        self.vector_bias = nn.Linear(config.vector_hidden, w)
        self.blocks = nn.ModuleList(ResidualBlock(w, obs.hex_grid) for _ in range(config.blocks))
        self.placement_head = nn.Conv2d(w, act.channels, 1)
        self.global_head = nn.Sequential(nn.Linear(w + config.vector_hidden, config.head_hidden), nn.ReLU())
        self.nonspatial_head = nn.Linear(config.head_hidden, max(self.num_nonspatial, 1))
        self.value_head = nn.Linear(config.head_hidden, 1)

    def split(self, observation: torch.Tensor,
              mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Board planes (B, C, H, W) and vector features (B, V) of flat observations (and masks)."""
        batch = observation.shape[0]
        padded = torch.cat([observation, observation.new_zeros(batch, 1)], dim=1)
        planes = padded[:, self.plane_index].view(batch, self.in_channels, *self.grid)
        vector = observation[:, self.vector_index]
        if self.config.mask_input:
            if mask is None:
                raise ValueError("this network takes the legal mask as input: call net(observation, mask)")
            mask = mask.to(planes.dtype)
            padded_mask = torch.cat([mask, mask.new_zeros(batch, 1)], dim=1)
            mask_planes = padded_mask[:, self.mask_plane_index].view(batch, self.action_channels, *self.grid)
            planes = torch.cat([planes, mask_planes], dim=1)
            vector = torch.cat([vector, mask[:, self.mask_vector_index]], dim=1)
        if vector.shape[1] == 0:
            vector = observation.new_zeros(batch, 1)
        return planes, vector

    def forward(self, observation: torch.Tensor,
                mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        planes, vector = self.split(observation.float(), mask)
        v = self.vector_in(vector)
        x = F.relu(self.stem(planes) + self.vector_bias(v)[:, :, None, None]) * self.cells
        for block in self.blocks:
            x = block(x, self.cells)
        spatial = self.placement_head(x).flatten(1)
        pooled = x.sum(dim=(2, 3)) / self.cell_count  # x is already zero off the board
        g = self.global_head(torch.cat([pooled, v], dim=1))
        logits_all = torch.cat([spatial, self.nonspatial_head(g)[:, :self.num_nonspatial]], dim=1)
        logits = logits_all[:, self.action_source]
        value = self.value_head(g).squeeze(-1) * self.config.value_scale
        return logits, value


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``logits + clamp(log(mask), MASKED_LOGIT)`` for a 0/1 mask: illegal actions (mask 0) get a
    logit of about -3.4e38, so a softmax gives them probability 0 and sampling never picks them.
    Computed as one ``masked_fill`` (the same values; ``log`` of 11k mask entries is the slower way)."""
    return logits.masked_fill(mask <= 0, MASKED_LOGIT)


def parameter_count(module: nn.Module) -> int:
    """Number of trainable parameters."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad)
