"""Cascadia rules written plainly in Python: slow on purpose, the oracle for tests and the
baseline for benchmarks.

A board here is a dict ``{(q, r): Hex}``; nothing is shared with the numba kernels except the
component data, so a test that compares the two compares two independent readings of the rules.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from functools import cache

from envs.cascadia.data import (
    DIRECTIONS,
    NUM_HABITATS,
    NUM_TILES,
    NUM_WILDLIFE,
    STARTER_AT,
    load_data,
)

BEAR, ELK, SALMON, HAWK, FOX = range(5)
DIRS = [(int(dq), int(dr)) for dq, dr in DIRECTIONS]
BEAR_POINTS = [0, 4, 11, 19, 27]
ELK_POINTS = [0, 2, 5, 9, 13]
SALMON_POINTS = [0, 2, 5, 8, 12, 16, 20, 25]
HAWK_POINTS = [0, 2, 5, 8, 11, 14, 18, 22, 26]


@dataclass
class Hex:
    """One placed hex: edge habitats [NE..NW], the animals it may hold, its token (or None)."""

    edges: tuple[int, ...]
    allowed: frozenset[int]
    token: int | None = None
    keystone: bool = False


Board = dict[tuple[int, int], Hex]


def neighbours(pos: tuple[int, int]) -> list[tuple[int, int]]:
    q, r = pos
    return [(q + dq, r + dr) for dq, dr in DIRS]


def _groups(cells: set[tuple[int, int]]) -> list[set[tuple[int, int]]]:
    """Connected groups of ``cells`` under hex adjacency."""
    seen: set[tuple[int, int]] = set()
    groups = []
    for start in sorted(cells):
        if start in seen:
            continue
        group = {start}
        todo = [start]
        seen.add(start)
        while todo:
            cur = todo.pop()
            for nb in neighbours(cur):
                if nb in cells and nb not in seen:
                    seen.add(nb)
                    group.add(nb)
                    todo.append(nb)
        groups.append(group)
    return groups


def animals(board: Board, kind: int) -> set[tuple[int, int]]:
    return {p for p, h in board.items() if h.token == kind}


def score_bear(board: Board) -> int:
    """Bear A: groups of exactly two bears; 1/2/3/4+ pairs = 4/11/19/27."""
    pairs = sum(1 for g in _groups(animals(board, BEAR)) if len(g) == 2)
    return BEAR_POINTS[min(pairs, 4)]


def _elk_lines(cells: frozenset[tuple[int, int]]) -> list[frozenset[tuple[int, int]]]:
    """Every straight run of 1-4 elk inside ``cells`` (each listed once)."""
    lines = {frozenset([c]) for c in cells}
    for c in cells:
        for dq, dr in DIRS[:3]:
            run = [c]
            for k in range(1, 4):
                nxt = (c[0] + k * dq, c[1] + k * dr)
                if nxt not in cells:
                    break
                run.append(nxt)
                lines.add(frozenset(run))
    return list(lines)


@cache
def _best_elk_split(cells: frozenset[tuple[int, int]]) -> int:
    if not cells:
        return 0
    first = min(cells)
    best = 0
    for line in _elk_lines(cells):
        if first in line:
            best = max(best, ELK_POINTS[len(line)] + _best_elk_split(cells - line))
    return best


def score_elk(board: Board) -> int:
    """Elk A: the best split of every elk group into straight lines of 1-4 (2/5/9/13)."""
    return sum(_best_elk_split(frozenset(g)) for g in _groups(animals(board, ELK)))


def score_salmon(board: Board) -> int:
    """Salmon A: runs where no salmon touches 3+ salmon; size 1..7+ = 2..25."""
    salmon = animals(board, SALMON)
    total = 0
    for g in _groups(salmon):
        if all(sum(nb in salmon for nb in neighbours(c)) <= 2 for c in g):
            total += SALMON_POINTS[min(len(g), 7)]
    return total


def score_hawk(board: Board) -> int:
    """Hawk A: hawks touching no hawk; 1..8+ = 2..26."""
    hawks = animals(board, HAWK)
    lonely = sum(1 for c in hawks if not any(nb in hawks for nb in neighbours(c)))
    return HAWK_POINTS[min(lonely, 8)]


def score_fox(board: Board) -> int:
    """Fox A: each fox scores the number of distinct animals on its neighbours."""
    total = 0
    for c in animals(board, FOX):
        kinds = {board[nb].token for nb in neighbours(c) if nb in board and board[nb].token is not None}
        total += len(kinds)
    return total


def corridor(board: Board, habitat: int) -> int:
    """Tiles in the largest edge-connected area of ``habitat``."""
    nodes = {p for p, h in board.items() if habitat in h.edges}
    best = 0
    seen: set[tuple[int, int]] = set()
    for start in nodes:
        if start in seen:
            continue
        seen.add(start)
        size = 0
        todo = [start]
        while todo:
            cur = todo.pop()
            size += 1
            for d, nb in enumerate(neighbours(cur)):
                if (nb in nodes and nb not in seen and board[cur].edges[d] == habitat
                        and board[nb].edges[(d + 3) % 6] == habitat):
                    seen.add(nb)
                    todo.append(nb)
        best = max(best, size)
    return best


def wildlife_scores(board: Board) -> list[int]:
    return [score_bear(board), score_elk(board), score_salmon(board), score_hawk(board), score_fox(board)]


def majority_bonuses(corridors: list[list[int]], second_place_tie: str = "zero") -> list[list[int]]:
    """Habitat bonus per player and habitat for 1-4 players (solo: 2 for a corridor of 7+).

    ``second_place_tie`` = "zero" (rules decision 1) or "share": players tied for second each get 1.
    """
    n = len(corridors)
    out = [[0] * NUM_HABITATS for _ in range(n)]
    for h in range(NUM_HABITATS):
        sizes = [corridors[p][h] for p in range(n)]
        if n == 1:
            out[0][h] = 2 if sizes[0] >= 7 else 0
            continue
        top = max(sizes)
        first = [p for p in range(n) if sizes[p] == top]
        if n == 2:
            for p in first:
                out[p][h] = 2 if len(first) == 1 else 1
            continue
        if len(first) >= 2:
            for p in first:
                out[p][h] = 2 if len(first) == 2 else 1
            continue
        out[first[0]][h] = 3
        rest = [s for s in sizes if s < top]
        second = max(rest)
        seconds = [p for p in range(n) if sizes[p] == second]
        if len(seconds) == 1 or second_place_tie == "share":
            for p in seconds:
                out[p][h] = 1
    return out


def score_boards(boards: list[Board], nature: list[int], second_place_tie: str = "zero") -> list[dict]:
    """Per player: wildlife, corridors, bonuses, nature tokens, total and base total."""
    corridors = [[corridor(b, h) for h in range(NUM_HABITATS)] for b in boards]
    bonuses = majority_bonuses(corridors, second_place_tie)
    out = []
    for p, b in enumerate(boards):
        wild = wildlife_scores(b)
        base = sum(wild) + sum(corridors[p]) + nature[p]
        out.append({"wildlife": wild, "corridors": corridors[p], "bonuses": bonuses[p],
                    "nature": nature[p], "base": base, "total": base + sum(bonuses[p])})
    return out


# ---- a whole game, plainly -----------------------------------------------------------------------


def tile_hex(tile: int, rotation: int) -> Hex:
    """A fresh Hex for habitat tile ``tile`` at ``rotation``."""
    data = load_data()
    mask, key, _ = (int(v) for v in data.kind_info[tile])
    return Hex(tuple(int(e) for e in data.kind_edges[tile, rotation]),
               frozenset(w for w in range(NUM_WILDLIFE) if mask >> w & 1), None, key >= 0)


def starter_board(starter: int) -> Board:
    """The three hexes of starter ``starter`` placed at their printed positions."""
    board = {}
    for j, at in enumerate(STARTER_AT):
        board[at] = tile_hex(NUM_TILES + 3 * starter + j, 0)
    return board


@dataclass
class RefGame:
    """A plain multiplayer or solo game with random choices from Python's ``random``."""

    players: int
    rnd: random.Random
    boards: list[Board] = field(default_factory=list)
    nature: list[int] = field(default_factory=list)
    stack: list[int] = field(default_factory=list)
    bag: list[int] = field(default_factory=list)
    market_tiles: list[int | None] = field(default_factory=list)
    market_tokens: list[int | None] = field(default_factory=list)
    supply: int = 25
    turns: int = 0

    def draw_token(self) -> int | None:
        if not self.bag:
            return None
        return self.bag.pop(self.rnd.randrange(len(self.bag)))

    def overpopulation(self) -> None:
        aside = []
        while (None not in self.market_tokens and len(set(self.market_tokens)) == 1
               and len(self.bag) >= 4):
            aside += self.market_tokens
            self.market_tokens = [self.draw_token() for _ in range(4)]
        self.bag += aside


def frontier(board: Board) -> list[tuple[int, int]]:
    """Empty positions that share an edge with the board."""
    return sorted({nb for p in board for nb in neighbours(p) if nb not in board})


def three_of_a_kind(tokens: list[int | None]) -> int | None:
    """The animal shown by exactly three of the four market tokens, if any."""
    for w in range(NUM_WILDLIFE):
        if tokens.count(w) == 3:
            return w
    return None


def market_options(g: RefGame, seat: int, acted: bool, three_used: bool) -> list[tuple]:
    """Every market decision open to ``seat`` now, in the engine's codec order."""
    options: list[tuple] = [("pair", i) for i in range(4)]
    if g.nature[seat] > 0:
        options += [("free", i, j) for i in range(4) for j in range(4)]
        if g.bag:
            options += [("redraw", s) for s in range(1, 16)]
    if not acted and not three_used and three_of_a_kind(g.market_tokens) is not None and len(g.bag) >= 3:
        options.append(("three",))
    return options


def redraw(g: RefGame, slots: list[int]) -> None:
    """Set the tokens of ``slots`` aside, draw replacements, then return the set-aside ones."""
    aside = [g.market_tokens[i] for i in slots]
    for i in slots:
        g.market_tokens[i] = g.draw_token()
    g.bag += aside


def play_random_game(seed: int, players: int = 4) -> list[dict]:
    """One game where every decision is uniformly random among the legal ones (market options with
    nature tokens and the free redraw, positions x rotations, targets or the bag); final scores."""
    rnd = random.Random(seed)
    data = load_data()
    g = RefGame(players, rnd)
    starters = list(range(5))
    rnd.shuffle(starters)
    g.boards = [starter_board(starters[p]) for p in range(players)]
    g.nature = [0] * players
    tiles = list(range(NUM_TILES))
    rnd.shuffle(tiles)
    g.stack = tiles[:data.tiles_used(players)]
    g.bag = [w for w in range(NUM_WILDLIFE) for _ in range(data.wildlife_per_animal)]
    g.market_tiles = [g.stack.pop() for _ in range(4)]
    g.market_tokens = [g.draw_token() for _ in range(4)]
    seat = 0
    while True:
        g.overpopulation()
        acted = three_used = False
        while True:
            pick = rnd.choice(market_options(g, seat, acted, three_used))
            if pick[0] == "pair":
                ti = tj = pick[1]
                break
            if pick[0] == "free":
                g.nature[seat] -= 1
                g.supply += 1
                ti, tj = pick[1], pick[2]
                break
            if pick[0] == "redraw":
                g.nature[seat] -= 1
                g.supply += 1
                acted = True
                redraw(g, [i for i in range(4) if pick[1] >> i & 1])
            else:
                three = three_of_a_kind(g.market_tokens)
                redraw(g, [i for i in range(4) if g.market_tokens[i] == three])
                acted = three_used = True
                g.overpopulation()
        tile, token = g.market_tiles[ti], g.market_tokens[tj]
        g.market_tiles[ti] = g.market_tokens[tj] = None
        board = g.boards[seat]
        spots = frontier(board)
        rotations = 1 if data.kind_info[tile, 1] >= 0 else 6
        pos = spots[rnd.randrange(len(spots))]
        board[pos] = tile_hex(tile, rnd.randrange(rotations))
        targets = [p for p, h in board.items() if h.token is None and token in h.allowed]
        choice = rnd.randrange(len(targets) + 1)
        if choice == len(targets):
            g.bag.append(token)
        else:
            board[targets[choice]].token = token
            if board[targets[choice]].keystone and g.supply > 0:
                g.supply -= 1
                g.nature[seat] += 1
        g.turns += 1
        if players == 1:
            rest = [i for i in range(4) if g.market_tiles[i] is not None]
            g.market_tiles[rest[-1]] = None
            rest_tok = [i for i in range(4) if g.market_tokens[i] is not None]
            g.market_tokens[rest_tok[-1]] = None
            if len(g.stack) < 2:
                break
            keep_t = [t for t in g.market_tiles if t is not None]
            keep_w = [w for w in g.market_tokens if w is not None]
            g.market_tiles = [g.stack.pop(), g.stack.pop()] + keep_t
            g.market_tokens = [g.draw_token(), g.draw_token()] + keep_w
        else:
            if not g.stack:
                break
            g.market_tiles[ti] = g.stack.pop()
            g.market_tokens[tj] = g.draw_token()
            seat = (seat + 1) % players
    for board in g.boards:
        assert len(board) == 23
    return score_boards(g.boards, g.nature)
