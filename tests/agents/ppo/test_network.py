"""The layout-built network and its masking: shapes, size, illegal actions never chosen."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.ppo.network import MASKED_LOGIT, BoardPolicyValueNet, NetConfig, masked_logits, parameter_count
from envs.core.errors import ConfigError
from envs.core.registry import make_game

GAMES = [("cartographers", {"players": 1}), ("cartographers", {"players": 3}), ("cascadia", {"players": 1}),
         ("cascadia", {"players": 4}), ("dorfromantik", {"players": 1})]
SMALL = NetConfig(width=8, blocks=1, vector_hidden=8, head_hidden=8)


@pytest.mark.parametrize("name, options", GAMES)
def test_forward_shapes_on_real_positions(name, options):
    game = make_game(name, **options)
    net = BoardPolicyValueNet(game.layout(), SMALL)
    state = game.new_game(3)
    obs = torch.from_numpy(np.stack([game.observation(state, game.current_player(state))] * 2))
    mask = torch.from_numpy(np.stack([game.legal_mask(state)] * 2).astype(np.float32))
    logits, value = net(obs, mask)
    assert logits.shape == (2, game.num_actions)
    assert value.shape == (2,)
    assert torch.isfinite(logits).all() and torch.isfinite(value).all()


def test_size_does_not_grow_with_the_action_space():
    """No dense layer touches the whole observation or the whole action space: a placement
    channel more costs one 1x1 filter (width + 1 parameters)."""
    game = make_game("cascadia", players=4)
    net = BoardPolicyValueNet(game.layout(), NetConfig())
    for module in net.modules():
        if isinstance(module, torch.nn.Linear):
            assert module.in_features < 1000 and module.out_features < 1000
    assert parameter_count(net) < 500_000
    carto = BoardPolicyValueNet(make_game("cartographers").layout(), NetConfig())
    heads = carto.placement_head.weight.numel() + carto.placement_head.bias.numel()
    assert heads == (NetConfig().width + 1) * carto.action_channels


def test_masked_sampling_never_picks_an_illegal_action():
    game = make_game("cartographers")
    net = BoardPolicyValueNet(game.layout(), SMALL)
    rng = np.random.default_rng(0)
    state = game.new_game(11)
    obs = torch.from_numpy(game.observation(state, 0))[None]
    mask = np.asarray(game.legal_mask(state), dtype=np.float32)
    with torch.no_grad():
        logits = masked_logits(net(obs, torch.from_numpy(mask)[None])[0], torch.from_numpy(mask)[None])[0]
    log_probs = torch.log_softmax(logits, dim=0)
    assert (log_probs[mask == 0] < -1e30).all()
    probs = torch.softmax(logits, dim=0).numpy().astype(np.float64)
    draws = rng.choice(game.num_actions, size=20_000, p=probs / probs.sum())
    assert mask[draws].all()
    assert float(logits[mask == 0].max()) <= MASKED_LOGIT / 2


def test_hex_kernels_ignore_the_non_neighbour_corners():
    game = make_game("cascadia", players=1)
    net = BoardPolicyValueNet(game.layout(), SMALL)
    conv = net.stem
    assert conv.hex_grid
    x = torch.zeros(1, conv.in_channels, 5, 5)
    corner = x.clone()
    corner[0, :, 1, 1] = 1.0  # the (-1, -1) corner of cell (2, 2)
    other = x.clone()
    other[0, :, 1, 2] = 1.0  # a hex neighbour of (2, 2)
    with torch.no_grad():
        assert torch.equal(conv(corner)[0, :, 2, 2], conv(x)[0, :, 2, 2])
        assert not torch.equal(conv(other)[0, :, 2, 2], conv(x)[0, :, 2, 2])


def test_the_legal_mask_is_an_input():
    """With mask_input the same observation under two different masks gives different logits
    (the network sees which placements fit); without it the mask cannot matter."""
    game = make_game("cartographers")
    state = game.new_game(5)
    obs = torch.from_numpy(game.observation(state, 0))[None]
    mask = torch.from_numpy(game.legal_mask(state).astype(np.float32))[None]
    other = torch.zeros_like(mask)
    other[0, :50] = 1.0
    torch.manual_seed(0)
    with_mask = BoardPolicyValueNet(game.layout(), SMALL)
    with torch.no_grad():
        assert not torch.allclose(with_mask(obs, mask)[0], with_mask(obs, other)[0])
    with pytest.raises(ValueError, match="legal mask as input"):
        with_mask(obs)
    plain = BoardPolicyValueNet(game.layout(), NetConfig(width=8, blocks=1, vector_hidden=8, head_hidden=8,
                                                         mask_input=False))
    with torch.no_grad():
        assert torch.equal(plain(obs, mask)[0], plain(obs, other)[0])
    assert with_mask.stem.in_channels == plain.stem.in_channels + game.layout().action.channels


@pytest.mark.parametrize("values, fragment", [
    ({"depth": 3}, "unknown key"), ({"width": 0}, "network.width"), ({"blocks": "two"}, "network.blocks"),
    ({"value_scale": -1}, "value_scale"),
])
def test_bad_network_config(values, fragment):
    with pytest.raises(ConfigError, match=fragment):
        NetConfig.from_dict(values)


def test_masked_categorical_matches_torch_and_never_samples_masked():
    from agents.ppo.distribution import MaskedCategorical

    torch.manual_seed(0)
    logits = torch.randn(64, 500)
    mask = (torch.rand(64, 500) < 0.05).float()
    mask[:, 7] = 1.0
    masked = masked_logits(logits, mask)
    mine = MaskedCategorical.from_logits(masked)
    reference = torch.distributions.Categorical(logits=masked)
    actions = mine.sample()
    assert bool(mask.gather(1, actions[:, None]).all())
    gap = (mine.logp(actions) - reference.log_prob(actions)).abs()
    assert torch.allclose(mine.logp(actions), reference.log_prob(actions), atol=1e-5), (
        f"largest log-probability gap {float(gap.max()):.3g} at row {int(gap.argmax())}, action "
        f"{int(actions[gap.argmax()])}")
    assert torch.allclose(mine.entropy(), reference.entropy(), atol=1e-4)
    other = MaskedCategorical.from_logits(masked_logits(torch.randn(64, 500), mask))
    other_reference = torch.distributions.Categorical(logits=other.logits)
    expected = torch.distributions.kl_divergence(reference, other_reference)
    assert torch.allclose(mine.kl(other), expected, atol=1e-4)
    draws = MaskedCategorical.from_logits(masked[:1]).sample(sample_shape=(4000,))
    assert bool(mask[0][draws.ravel()].all())
    freq = torch.bincount(draws.ravel(), minlength=500).float() / draws.numel()
    assert torch.allclose(freq, torch.softmax(masked[0], 0), atol=0.03)
    assert torch.isfinite(mine.entropy()).all() and torch.isfinite(mine.kl(other)).all()
