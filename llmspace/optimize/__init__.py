"""Prompt optimization (`llmspace optimize`): an evaluation's failing cases turned into a
rewritten prompt by a reflector model, searched over training cases, chosen on validation
cases and promoted only when it passes significantly more held-out cases (exact McNemar).

- `split`: the stratified train / validation / held-out split of the cases.
- `candidates`: the prompt a reflector answer holds and the template checks that reject one.
- `reflector`: the reflector's instructions (package data, versioned by hash) and its prompt.
- `cells`: a candidate's cells on some cases, through the evaluation journal and answer cache.
- `search`: the GEPA-style search (per-case Pareto parents, minibatch then validation).
- `gate`: the held-out verdict.
- `results`: summary.json, the held-out comparison, the optimized thread and its diff.
"""
