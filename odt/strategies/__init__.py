"""Solve strategies: what the orchestration layer does around one backend call — the
search over depths (S3), Avellaneda's incremental rows (B3), warm starts (B4), bounds of
diagrams, the layer large-neighbourhood search of diagrams (B6) and the explanation of
infeasibility."""
