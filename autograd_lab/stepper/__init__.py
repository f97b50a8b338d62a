"""The backward stepper: record one real backward() and walk through it node by node."""
