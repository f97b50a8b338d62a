"""The backward profiler: why a backward is slow, measured on the learner's own training step."""
