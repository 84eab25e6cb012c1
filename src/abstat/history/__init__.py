"""History of a benchmark across revisions: series, change points, their stability."""
