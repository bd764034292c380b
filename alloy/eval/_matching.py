"""Optimal matching of two lists' items (the Hungarian algorithm, pure Python): which
expected item each answered item stands for, so that the summed item scores are highest."""

from __future__ import annotations

from collections.abc import Sequence


def best_matching(scores: Sequence[Sequence[float]]) -> list[tuple[int, int]]:
    """The pairs (row, column) of a rectangular score matrix, each row and column used at most
    once, whose summed scores are the largest (Kuhn-Munkres on costs 1 - score, O(n³))."""
    rows = len(scores)
    cols = len(scores[0]) if rows else 0
    if not rows or not cols:
        return []
    size = max(rows, cols)
    cost = [
        [1.0 - scores[i][j] if i < rows and j < cols else 1.0 for j in range(size)]
        for i in range(size)
    ]
    inf = float("inf")
    u = [0.0] * (size + 1)
    v = [0.0] * (size + 1)
    owner = [0] * (size + 1)  # owner[j]: the row matched to column j (1-based; 0: none)
    way = [0] * (size + 1)
    for i in range(1, size + 1):
        owner[0] = i
        j0 = 0
        least = [inf] * (size + 1)
        used = [False] * (size + 1)
        while True:
            used[j0] = True
            i0, delta, j1 = owner[j0], inf, 0
            for j in range(1, size + 1):
                if not used[j]:
                    reduced = cost[i0 - 1][j - 1] - u[i0] - v[j]
                    if reduced < least[j]:
                        least[j], way[j] = reduced, j0
                    if least[j] < delta:
                        delta, j1 = least[j], j
            for j in range(size + 1):
                if used[j]:
                    u[owner[j]] += delta
                    v[j] -= delta
                else:
                    least[j] -= delta
            j0 = j1
            if owner[j0] == 0:
                break
        while j0:
            j1 = way[j0]
            owner[j0] = owner[j1]
            j0 = j1
    return [
        (owner[j] - 1, j - 1)
        for j in range(1, size + 1)
        if owner[j] and owner[j] - 1 < rows and j - 1 < cols
    ]
