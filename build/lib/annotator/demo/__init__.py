"""Synthetic content and simulated raters for the demo study and tests."""
