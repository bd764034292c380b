"""alloy.eval: measure a typed command field by field, and compare models."""
