"""The shipped rubrics, installed as package data `annotator.rubrics` (read via annotator.resources)."""
